"""Plain-text output: each document as a metadata header, a rule, then its text."""

from __future__ import annotations

from typing import Any, BinaryIO

from scrapy.exporters import BaseItemExporter
from scrapy_maintext.exporters.records import string_list, text_of, to_record

#: Line opening every document; it never occurs in extracted text, which is whitespace-
#: normalised per line and has no form feeds.
DOCUMENT_SEPARATOR = "\f" + "=" * 72
HEADER_RULE = "-" * 72
#: Header fields, in order: (label, record key).
HEADER_FIELDS = (
    ("URL", "url"),
    ("Title", "title"),
    ("Author", "author"),
    ("Date", "date"),
    ("Date-Modified", "date_modified"),
    ("Site", "sitename"),
    ("Host", "hostname"),
    ("Language", "language"),
    ("Language-Confidence", "language_confidence"),
    ("License", "license"),
    ("Categories", "categories"),
    ("Tags", "tags"),
    ("Extractor", "extractor"),
    ("Model-Version", "model_version"),
    ("Fingerprint", "fingerprint"),
)


def format_document(item: Any) -> str:
    """One document: separator, ``Label: value`` lines, a rule, the text, a blank line."""
    record = to_record(item)
    lines = [DOCUMENT_SEPARATOR]
    for label, key in HEADER_FIELDS:
        value = record.get(key)
        if isinstance(value, list | tuple):
            value = ", ".join(string_list(value))
        if value not in (None, ""):
            lines.append(f"{label}: {' '.join(str(value).split())}")
    lines.append(HEADER_RULE)
    lines.append(text_of(record))
    return "\n".join(lines) + "\n\n"


class TxtItemExporter(BaseItemExporter):
    """Feed exporter ``txt``: documents one after another, each with its header."""

    #: One document as text (the Markdown exporter renders its own way).
    render = staticmethod(format_document)

    def __init__(self, file: BinaryIO, **kwargs: Any) -> None:
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        self.text_encoding: str = self.encoding or "utf-8"

    def export_item(self, item: Any) -> None:
        self.file.write(self.render(item).encode(self.text_encoding, errors="replace"))
