"""Documents to extract offline: HTML files, directories, WARC files and standard input."""

from __future__ import annotations

import gzip
import io
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from scrapy_maintext.archive.provenance import Provenance, bare_record_id
from scrapy_maintext.archive.reader import Damage, damage_message

logger = logging.getLogger(__name__)

#: Files a directory walk picks up (an explicitly named file is read whatever its name).
HTML_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml")
WARC_SUFFIXES = (".warc", ".warc.gz")
#: WARC records whose payload is taken for a page (``Content-Type`` of the HTTP response).
HTML_CONTENT_TYPES = ("text/html", "application/xhtml+xml")
_GZIP_MAGIC = b"\x1f\x8b"
#: Characters of a reading error shown (a damaged archive's message can quote raw bytes).
MAX_ERROR_CHARS = 120


@dataclass(frozen=True)
class SourceDocument:
    """One page to extract: its URL (the key of ``--resume``) and raw body."""

    url: str
    #: Bytes as read (a file), or text decoded with the charset its HTTP header declared.
    html: str | bytes
    #: Where it came from: a file path, or ``file.warc.gz#urn:uuid:...`` (the record's
    #: WARC-Record-ID, without the angle brackets the header puts around it).
    source: str
    #: A WARC record's provenance fields (``warc_file``, ``warc_offset``, ...), as a crawl
    #: with ``WARC_OUTPUT`` gives its documents; empty for other inputs.
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass
class InputProblems:
    """What could not be read, for the summary and the exit status."""

    #: Inputs (files, archives) that could not be read at all, with why.
    unreadable: list[str] = field(default_factory=list)
    #: WARC records cut short (a truncated archive): skipped.
    truncated: int = 0
    #: WARC records that could not be parsed or read: skipped, reading went on after them.
    damaged: int = 0


@dataclass(frozen=True)
class InputOptions:
    #: Base URL that file paths (relative to the directory given) are appended to.
    base_url: str | None = None


def is_warc_name(path: Path) -> bool:
    return path.name.lower().endswith(WARC_SUFFIXES)


@dataclass(frozen=True)
class InputFile:
    """One file to read (``path`` None: standard input) and the directory it was found in."""

    path: Path | None
    #: The directory named on the command line (file URLs are relative to it), or None.
    root: Path | None = None


def expand(names: list[str]) -> list[InputFile]:
    """Named inputs in order, directories walked recursively (sorted), once per run."""
    found: list[InputFile] = []
    for name in names:
        path = Path(name)
        if name == "-":
            found.append(InputFile(None))
        elif path.is_dir():
            children = [p for p in sorted(path.rglob("*")) if p.is_file()]
            suffixes = HTML_SUFFIXES + WARC_SUFFIXES
            files = [InputFile(p, path) for p in children if p.name.lower().endswith(suffixes)]
            if not files:
                logger.warning("%s: no HTML or WARC files in this directory", name)
            found += files
        elif path.is_file():
            found.append(InputFile(path))
        else:
            raise FileNotFoundError(f"no such file or directory: {name}")
    return found


def file_url(path: Path, root: Path | None, options: InputOptions) -> str:
    """The page's URL: ``--base-url`` plus its path under the directory given, else file://."""
    if options.base_url:
        relative = path.relative_to(root) if root else Path(path.name)
        # Bytes: a file name that is not UTF-8 is percent-encoded as it is on disk.
        return options.base_url.rstrip("/") + "/" + quote(os.fsencode(relative.as_posix()))
    return path.resolve().as_uri()


def display_path(path: Path | str) -> str:
    """A path as text that any output can hold (undecodable bytes as ``\\xNN``)."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def iter_documents(
    inputs: list[InputFile], options: InputOptions, problems: InputProblems
) -> Iterator[SourceDocument]:
    """Every document of the inputs, in order; what cannot be read goes to ``problems``."""
    for item in inputs:
        if item.path is None:
            yield from _stdin_documents(options, problems)
        elif is_warc_name(item.path):
            with item.path.open("rb") as handle:
                name = display_path(item.path)
                yield from warc_documents(handle, name, problems, item.path.name)
        else:
            url = file_url(item.path, item.root, options)
            yield SourceDocument(url, item.path.read_bytes(), display_path(item.path))


def _stdin_documents(options: InputOptions, problems: InputProblems) -> Iterator[SourceDocument]:
    data = sys.stdin.buffer.read()
    if looks_like_warc(data):
        yield from warc_documents(io.BytesIO(data), "-", problems)
    else:
        yield SourceDocument(options.base_url or "", data, "-")


def looks_like_warc(data: bytes) -> bool:
    head = data[:64]
    if head.startswith(_GZIP_MAGIC):
        try:
            head = gzip.GzipFile(fileobj=io.BytesIO(data[:4096])).read(8)
        except (OSError, EOFError):
            return False
    return head.startswith(b"WARC/")


def warc_documents(
    stream: IO[bytes], name: str, problems: InputProblems, file_name: str = "-"
) -> Iterator[SourceDocument]:
    """HTML responses of a WARC (``response`` records with a 2xx HTML payload); their
    provenance names the file ``file_name``. A damaged record, or one the file ends inside, is
    skipped and counted, and reading goes on at the next record (``archive.reader``)."""
    from scrapy_maintext.archive.reader import read_records

    damaged: list[Damage] = []
    records = 0

    def document(record: Any, offset: int) -> SourceDocument | None:
        nonlocal records
        # warcio reads about anything as an ARC record; only WARC records count.
        records += record.format.startswith("warc")
        return _warc_document(record, name, offset, file_name)

    yield from read_records(stream, document, damaged)
    if records == 0 and not any(damage.cut for damage in damaged):
        _unreadable(problems, name, damaged[0].error if damaged else "no WARC record in it")
        return
    for damage in damaged:
        _report_damage(problems, name, damage)


def _report_damage(problems: InputProblems, name: str, damage: Damage) -> None:
    if damage.cut:
        # The archive ends inside this record: a partial page is no document.
        problems.truncated += 1
    elif damage.rest:
        where = f"{damage.error} at offset {damage.offset}; the rest of the file was not read"
        _unreadable(problems, name, where)
        return
    elif damage.skipped:
        problems.damaged += 1
    logger.warning("%s", damage_message(name, damage))


def _unreadable(problems: InputProblems, name: str, why: str) -> None:
    problems.unreadable.append(f"{name} ({why})")
    logger.error("%s: not a readable WARC file (%s)", name, why)


def _is_html_response(record: Any) -> bool:
    if record.rec_type != "response" or record.http_headers is None:
        return False
    http = record.http_headers
    ctype = (http.get_header("Content-Type") or "").split(";")[0].strip().lower()
    return str(http.get_statuscode()).startswith("2") and ctype in (*HTML_CONTENT_TYPES, "")


def _warc_document(record: Any, name: str, offset: int, file_name: str) -> SourceDocument | None:
    if not _is_html_response(record):
        return None
    url = record.rec_headers.get_header("WARC-Target-URI") or ""
    record_id = record_id_of(record) or url
    body = record.content_stream().read()
    provenance = Provenance.of_record(record, file_name, offset)
    return SourceDocument(
        url, decode_payload(record, body), f"{name}#{record_id}", provenance.to_dict()
    )


def record_id_of(record: Any) -> str:
    """The record's WARC-Record-ID as a plain URI: ``<urn:uuid:...>`` is ``urn:uuid:...``."""
    return bare_record_id(record.rec_headers.get_header("WARC-Record-ID") or "")


def decode_payload(record: Any, body: bytes) -> str | bytes:
    """Text when the HTTP header names a charset (as a crawl's ``response.text`` does:
    BOM, then header, then ``<meta>``); otherwise bytes, for extract()'s own sniffing."""
    content_type = record.http_headers.get_header("Content-Type") or ""
    if "charset=" not in content_type.lower():
        return body
    from w3lib.encoding import html_to_unicode

    return html_to_unicode(content_type, body)[1]


def count_documents(inputs: list[InputFile]) -> int | None:
    """How many documents the inputs hold (for the ETA), or None when only reading tells."""
    total = 0
    for item in inputs:
        if item.path is None:
            return None
        if not is_warc_name(item.path):
            total += 1
            continue
        try:
            with item.path.open("rb") as handle:
                total += sum(1 for _ in _warc_headers_only(handle))
        # A damaged archive is reported when it is read; here it only spoils the ETA.
        except Exception:
            return None
    return total


def _warc_headers_only(stream: IO[bytes]) -> Iterator[None]:
    from warcio.archiveiterator import ArchiveIterator

    for record in ArchiveIterator(stream):
        if _is_html_response(record):
            yield None
