"""Scrapy-free main-text extraction: ``extract(html, url, options) -> Document``."""

from __future__ import annotations

from scrapy_maintext.extraction.core import extract, is_fallback
from scrapy_maintext.extraction.engines import neural_available
from scrapy_maintext.extraction.fingerprint import (
    FingerprintIndex,
    fingerprint,
    hamming,
    near_duplicate,
)
from scrapy_maintext.extraction.options import ENGINES, ExtractOptions

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
