"""Scrapy-free main-text extraction: ``extract(html, url, options, site) -> Document``."""

from __future__ import annotations

from scrapy_maintext.extraction.core import PageResult, extract, extract_page, is_fallback
from scrapy_maintext.extraction.engines import neural_available
from scrapy_maintext.extraction.options import ENGINES, ExtractOptions
from scrapy_maintext.fields.fingerprint import (
    FingerprintIndex,
    fingerprint,
    hamming,
    near_duplicate,
)
from scrapy_maintext.site_memory.memory import SiteMemory, SiteMemoryOptions

__all__ = [
    "ENGINES",
    "ExtractOptions",
    "FingerprintIndex",
    "PageResult",
    "SiteMemory",
    "SiteMemoryOptions",
    "extract",
    "extract_page",
    "fingerprint",
    "hamming",
    "is_fallback",
    "near_duplicate",
    "neural_available",
]
