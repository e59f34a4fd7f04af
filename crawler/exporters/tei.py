"""TEI P5 output: a ``<teiCorpus>`` feed of one ``<TEI>`` per document
(:mod:`.tei_document` builds each)."""

from __future__ import annotations

import contextlib
import os
from typing import Any, BinaryIO

import scrapy_maintext
from lxml import etree
from scrapy.exporters import BaseItemExporter
from scrapy_maintext.exporters.tei_document import (
    DEFAULT_CORPUS_TITLE,
    TEI_NS,
    build_tei,
    el,
    tei_bytes,
)

__all__ = ["CORPUS_END", "TEI_NS", "TeiItemExporter", "build_tei", "tei_bytes"]

CORPUS_END = b"</teiCorpus>\n"


class TeiItemExporter(BaseItemExporter):
    """Feed exporter ``tei``: a ``<teiCorpus>`` with one ``<TEI>`` per item.

    Feed option ``item_export_kwargs: {"corpus_title": ...}`` names the corpus. On a
    seekable file (a local feed) the closing tag is written after every document and
    overwritten by the next one, and flushed, so a crawl killed at any point leaves a
    well-formed corpus of every document exported so far.
    """

    def __init__(self, file: BinaryIO, **kwargs: Any) -> None:
        self.corpus_title = str(kwargs.pop("corpus_title", DEFAULT_CORPUS_TITLE))
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        #: Where the closing tag starts, while the file ends with it.
        self._end_at: int | None = None

    def start_exporting(self) -> None:
        if self._continue_corpus():
            return
        head = b'<?xml version="1.0" encoding="utf-8"?>\n'
        head += f'<teiCorpus xmlns="{TEI_NS}">\n'.encode()
        self._write(head + _child_bytes(self._corpus_header()))

    def export_item(self, item: Any) -> None:
        self._write(_child_bytes(build_tei(item)))

    def finish_exporting(self) -> None:
        if self._end_at is None:
            self.file.write(CORPUS_END)

    def _continue_corpus(self) -> bool:
        """Appending to a corpus (``-o``, a resumed crawl): go on inside it, no new header."""
        if "a" not in str(getattr(self.file, "mode", "")) or not _rewritable(self.file):
            return False
        try:
            end = self.file.seek(0, os.SEEK_END)
            if end < len(CORPUS_END):
                return False
            self.file.seek(end - len(CORPUS_END))
            if self.file.read(len(CORPUS_END)) != CORPUS_END:
                return False
        except (OSError, ValueError):  # not readable: appended as before
            return False
        self._end_at = end - len(CORPUS_END)
        return True

    def _write(self, data: bytes) -> None:
        if not _rewritable(self.file):
            self.file.write(data)
            return
        old_end = self._end_at
        if old_end is not None:
            self.file.seek(old_end)
            if "a" in str(getattr(self.file, "mode", "")):
                # Appending ignores the position: the old end must go first.
                self.file.truncate()
        start = self.file.tell()
        # One write, over the old closing tag: the file ends with one before and after.
        try:
            self.file.write(data + CORPUS_END)
        except OSError:
            if old_end is not None:
                # The failed write left nothing (local feeds write whole or not at all):
                # the corpus gets its closing tag back and stays well-formed.
                with contextlib.suppress(OSError):
                    self.file.write(CORPUS_END)
            raise
        self._end_at = start + len(data)
        # Our local feed storage writes unbuffered already; a buffered file (Scrapy's own
        # FileFeedStorage) would keep the last documents from disk until a kill lost them.
        self.file.flush()

    def _corpus_header(self) -> Any:
        header = el(None, "teiHeader")
        file_desc = el(header, "fileDesc")
        el(el(file_desc, "titleStmt"), "title", self.corpus_title)
        el(
            el(file_desc, "publicationStmt"),
            "p",
            f"Built with scrapy-maintext {scrapy_maintext.__version__}",
        )
        el(el(file_desc, "sourceDesc"), "p", "Web pages crawled with Scrapy; main text extracted.")
        return header


def _rewritable(file: Any) -> bool:
    try:
        return bool(file.seekable()) and hasattr(file, "truncate")
    except (AttributeError, ValueError, OSError):
        return False


def _child_bytes(element: Any) -> bytes:
    # The namespace is redeclared on each child: harmless, and it keeps every <TEI>
    # byte-identical to its standalone form (docdir output, golden files).
    return etree.tostring(element, encoding="utf-8", pretty_print=True)
