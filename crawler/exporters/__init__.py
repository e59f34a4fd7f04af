"""Scrapy feed exporters (``tei``, ``txt``) and a one-file-per-document pipeline."""

from __future__ import annotations

from crawler.exporters.tei import TeiItemExporter, build_tei, tei_bytes
from crawler.exporters.txt import TxtItemExporter, format_document

#: FEED_EXPORTERS entries the add-on registers.
FEED_EXPORTERS = {
    "tei": "crawler.exporters.tei.TeiItemExporter",
    "txt": "crawler.exporters.txt.TxtItemExporter",
}

__all__ = [
    "FEED_EXPORTERS",
    "TeiItemExporter",
    "TxtItemExporter",
    "build_tei",
    "format_document",
    "tei_bytes",
]
