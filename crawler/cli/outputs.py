"""Where ``maintext extract`` writes: one corpus file (jsonl, json, tei, txt, markdown) or a
directory.

The formats are the crawl's own (the same Scrapy exporters), so offline and crawled corpora
mix. ``--resume`` reads what an earlier run wrote, cuts off a document a kill left half
written, and appends; a document is identified by its URL.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from scrapy.exporters import BaseItemExporter, JsonItemExporter, JsonLinesItemExporter
from scrapy_maintext.exporters.docdir import FORMATS as DIRECTORY_FORMATS
from scrapy_maintext.exporters.docdir import file_name, render, write_atomic
from scrapy_maintext.exporters.markdown import MarkdownItemExporter, section_starts
from scrapy_maintext.exporters.tei import TeiItemExporter
from scrapy_maintext.exporters.txt import DOCUMENT_SEPARATOR, TxtItemExporter

STREAM_FORMATS = ("jsonl", "json", "tei", "txt", "markdown")
_SUFFIX_FORMATS = {".jsonl": "jsonl", ".jl": "jsonl", ".json": "json", ".xml": "tei"}
_SUFFIX_FORMATS |= {".tei": "tei", ".txt": "txt", ".md": "markdown"}
_FORMAT_ALIASES = {"jsonlines": "jsonl", "xml": "tei"}
#: ``md`` is the corpus file's ``markdown``; for a directory, ``markdown`` is its ``md``.
_STREAM_ALIASES = {"md": "markdown"}
_DIRECTORY_ALIASES = {"markdown": "md"}
_TEI_URL = re.compile(rb'<idno type="URL">([^<]*)</idno>')
_TEI_END = b"</TEI>\n"
_TEI_HEADER_END = b"</teiHeader>\n"
_TXT_SEPARATOR = DOCUMENT_SEPARATOR.encode("utf-8")
_TXT_URL = re.compile(rb"^URL: (.*)$", re.M)
_MD_URL = re.compile(rb"^URL: <(.*)>\\?$", re.M)


class OutputError(ValueError):
    """An output that cannot be written or resumed, with the reason."""


@dataclass(frozen=True)
class OutputSpec:
    """``-o PATH[:FORMAT]``: a corpus file, or a directory (``PATH/``) of one file each."""

    path: Path
    format: str
    per_document: bool

    @classmethod
    def parse(cls, value: str) -> OutputSpec:
        path_text, _, fmt = value.rpartition(":") if ":" in value else (value, "", "")
        fmt = _FORMAT_ALIASES.get(fmt.lower(), fmt.lower())
        path = Path(path_text)
        per_document = path_text.endswith(("/", "\\")) or path.is_dir()
        if per_document:
            fmt = _DIRECTORY_ALIASES.get(fmt, fmt) or "tei"
            if fmt not in DIRECTORY_FORMATS:
                formats = ", ".join(DIRECTORY_FORMATS)
                raise OutputError(f"{value}: one file per document is one of {formats}")
        else:
            fmt = _STREAM_ALIASES.get(fmt, fmt) or _SUFFIX_FORMATS.get(path.suffix.lower(), "")
            if fmt not in STREAM_FORMATS:
                raise OutputError(f"{value}: give a format, PATH:{'|'.join(STREAM_FORMATS)}")
        return cls(path, fmt, per_document)


class Writer(Protocol):
    def is_done(self, url: str) -> bool: ...
    def write(self, record: dict[str, Any]) -> None: ...
    def close(self) -> None: ...


@dataclass
class ResumePoint:
    """What an earlier run left: its documents' URLs and where to go on writing."""

    urls: set[str] = field(default_factory=set)
    offset: int = 0
    #: The format's preamble (``[``, the corpus header) is in place.
    started: bool = False
    count: int = 0


def open_writer(spec: OutputSpec, resume: bool) -> Writer:
    if spec.per_document:
        return DirectoryWriter(spec, resume)
    return StreamWriter(spec, resume)


class DirectoryWriter:
    """One file per document, named by URL hash, written atomically (as ``DOCDIR_PATH``)."""

    def __init__(self, spec: OutputSpec, resume: bool) -> None:
        self.spec = spec
        self.resume = resume
        spec.path.mkdir(parents=True, exist_ok=True)

    def _path(self, record: dict[str, Any]) -> Path | None:
        name = file_name(record, "url", self.spec.format)
        return self.spec.path / name if name else None

    def is_done(self, url: str) -> bool:
        path = self._path({"url": url}) if url else None
        return bool(self.resume and path is not None and path.exists())

    def write(self, record: dict[str, Any]) -> None:
        path = self._path(record)
        if path is None:
            raise OutputError("a document without URL cannot be named: give --base-url")
        write_atomic(path, render(record, self.spec.format))

    def close(self) -> None:
        return None


class StreamWriter:
    """All documents in one file, through the crawl's exporter for the format."""

    def __init__(self, spec: OutputSpec, resume: bool) -> None:
        self.spec = spec
        point = ResumePoint()
        if resume and spec.path.exists() and spec.path.stat().st_size:
            point = scan(spec.path, spec.format)
        spec.path.parent.mkdir(parents=True, exist_ok=True)
        self.point = point
        self.file: BinaryIO = spec.path.open("r+b" if point.offset else "wb")
        self.file.seek(point.offset)
        self.file.truncate()
        self.exporter = _exporter(spec.format, self.file)
        if isinstance(self.exporter, JsonItemExporter):
            self.exporter.first_item = point.count == 0
        if not point.started:
            self.exporter.start_exporting()

    def is_done(self, url: str) -> bool:
        return bool(url) and url in self.point.urls

    def write(self, record: dict[str, Any]) -> None:
        self.exporter.export_item(record)
        self.file.flush()

    def close(self) -> None:
        self.exporter.finish_exporting()
        self.file.close()


def _exporter(fmt: str, file: BinaryIO) -> BaseItemExporter:
    if fmt == "jsonl":
        return JsonLinesItemExporter(file, encoding="utf-8")  # type: ignore[arg-type]
    if fmt == "json":
        # FEED_EXPORT_INDENT's default (0): one item per line, as ``-O x.json`` writes.
        return JsonItemExporter(file, encoding="utf-8", indent=0)  # type: ignore[arg-type]
    if fmt == "tei":
        return TeiItemExporter(file)
    if fmt == "markdown":
        return MarkdownItemExporter(file, encoding="utf-8")
    return TxtItemExporter(file, encoding="utf-8")


def scan(path: Path, fmt: str) -> ResumePoint:
    """Read an earlier output for ``--resume``; a half-written last document is dropped."""
    data = path.read_bytes()
    scanners = {"jsonl": _scan_jsonl, "json": _scan_json, "tei": _scan_tei, "txt": _scan_txt}
    scanners["markdown"] = _scan_markdown
    return scanners[fmt](data, path)


def _scan_jsonl(data: bytes, path: Path) -> ResumePoint:
    point = ResumePoint(started=True)
    position = 0
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break
        try:
            record = json.loads(line)
        except ValueError:
            break
        point.urls.add(str(record.get("url") or ""))
        point.count += 1
        position += len(line)
    point.offset = position
    return point


def _scan_json(data: bytes, path: Path) -> ResumePoint:
    text = data.decode("utf-8", errors="replace")
    if not text.startswith("["):
        raise OutputError(f"{path}: not a JSON array written by maintext or scrapy")
    decoder = json.JSONDecoder()
    point = ResumePoint(started=True)
    # Without a complete item, writing goes on right after "[" and its newline.
    position = last_end = text.index("[") + 2
    while True:
        while position < len(text) and text[position] in ",\n\r\t ":
            position += 1
        try:
            record, position = decoder.raw_decode(text, position)
        except ValueError:
            break
        point.urls.add(str(record.get("url") or "") if isinstance(record, dict) else "")
        point.count += 1
        last_end = position
    # Bytes, not characters, for the file offset.
    point.offset = len(text[:last_end].encode("utf-8"))
    return point


def _scan_tei(data: bytes, path: Path) -> ResumePoint:
    end = data.rfind(_TEI_END)
    if end >= 0:
        offset = end + len(_TEI_END)
    elif data.find(_TEI_HEADER_END) >= 0:
        offset = data.find(_TEI_HEADER_END) + len(_TEI_HEADER_END)
    else:
        raise OutputError(f"{path}: not a TEI corpus written by maintext or scrapy")
    head = data[:offset]
    urls = {html.unescape(m.decode("utf-8", "replace")) for m in _TEI_URL.findall(head)}
    return ResumePoint(urls=urls, offset=offset, started=True, count=head.count(_TEI_END))


def _scan_txt(data: bytes, path: Path) -> ResumePoint:
    starts = [m.start() for m in re.finditer(re.escape(_TXT_SEPARATOR), data)]
    if not starts:
        return ResumePoint(started=True)
    # The last document is complete when the file ends with its closing blank line.
    offset = len(data) if data.endswith(b"\n\n") else starts[-1]
    head = data[:offset]
    urls = {m.decode("utf-8", "replace").strip() for m in _TXT_URL.findall(head)}
    return ResumePoint(urls=urls, offset=offset, started=True, count=head.count(_TXT_SEPARATOR))


def _scan_markdown(data: bytes, path: Path) -> ResumePoint:
    starts = section_starts(data)
    if not starts:
        return ResumePoint(started=True)
    # The last section is complete when the file ends with its closing blank line.
    offset = len(data) if data.endswith(b"\n\n") else starts[-1]
    head = data[:offset]
    urls = {m.decode("utf-8", "replace") for m in _MD_URL.findall(head)}
    return ResumePoint(urls=urls, offset=offset, started=True, count=len(section_starts(head)))
