"""Scrapy feed exporters (``tei``, ``txt``, ``markdown``) and a one-file-per-document pipeline."""

from __future__ import annotations

from scrapy_maintext.exporters.storage import FEED_STORAGES
from scrapy_maintext.exporters.tei import TeiItemExporter, build_tei, tei_bytes
from scrapy_maintext.exporters.txt import TxtItemExporter, format_document

#: FEED_EXPORTERS entries the add-on registers.
FEED_EXPORTERS = {
    "tei": "scrapy_maintext.exporters.tei.TeiItemExporter",
    "txt": "scrapy_maintext.exporters.txt.TxtItemExporter",
    # ``-O corpus.md:markdown``; ``-O corpus.md`` names the format by the suffix.
    "markdown": "scrapy_maintext.exporters.markdown.MarkdownItemExporter",
    "md": "scrapy_maintext.exporters.markdown.MarkdownItemExporter",
}

__all__ = [
    "FEED_EXPORTERS",
    "FEED_STORAGES",
    "TeiItemExporter",
    "TxtItemExporter",
    "build_tei",
    "format_document",
    "tei_bytes",
]
