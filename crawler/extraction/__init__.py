"""Scrapy-free main-text extraction: ``extract(html, url, options) -> Document``."""

from __future__ import annotations

from crawler.extraction.core import extract, is_fallback
from crawler.extraction.engines import neural_available
from crawler.extraction.fingerprint import (
    FingerprintIndex,
    fingerprint,
    hamming,
    near_duplicate,
)
from crawler.extraction.options import ENGINES, ExtractOptions

__all__ = [
    "ENGINES",
    "ExtractOptions",
    "FingerprintIndex",
    "extract",
    "fingerprint",
    "hamming",
    "is_fallback",
    "near_duplicate",
    "neural_available",
]
