"""Documents to extract offline: HTML files, directories, WARC files and standard input."""

from __future__ import annotations

import gzip
import io
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

logger = logging.getLogger(__name__)

#: Files a directory walk picks up (an explicitly named file is read whatever its name).
HTML_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml")
WARC_SUFFIXES = (".warc", ".warc.gz")
#: WARC records whose payload is taken for a page (``Content-Type`` of the HTTP response).
HTML_CONTENT_TYPES = ("text/html", "application/xhtml+xml")
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class SourceDocument:
    """One page to extract: its URL (the key of ``--resume``) and raw body."""

    url: str
    html: bytes
    #: Where it came from: a file path, or ``file.warc.gz#record-id``.
    source: str


@dataclass(frozen=True)
class InputOptions:
    #: Base URL that file paths (relative to the directory given) are appended to.
    base_url: str | None = None


def is_warc_name(path: Path) -> bool:
    return path.name.lower().endswith(WARC_SUFFIXES)


def expand(paths: list[str]) -> list[Path | str]:
    """Named inputs in order, directories walked recursively (sorted), ``-`` kept as is."""
    found: list[Path | str] = []
    for name in paths:
        path = Path(name)
        if name == "-":
            found.append(name)
        elif path.is_dir():
            children = (p for p in sorted(path.rglob("*")) if p.is_file())
            found += [p for p in children if p.name.lower().endswith(HTML_SUFFIXES + WARC_SUFFIXES)]
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such file or directory: {name}")
    return found


def file_url(path: Path, root: Path | None, options: InputOptions) -> str:
    """The page's URL: ``--base-url`` plus its path under the directory given, else file://."""
    if options.base_url:
        relative = path.relative_to(root) if root else Path(path.name)
        return options.base_url.rstrip("/") + "/" + quote(relative.as_posix())
    return path.resolve().as_uri()


def iter_documents(inputs: list[str], options: InputOptions) -> Iterator[SourceDocument]:
    """Every document of the inputs, in order."""
    for name in inputs:
        root = Path(name) if name != "-" and Path(name).is_dir() else None
        for item in expand([name]):
            if isinstance(item, str):
                yield from _stdin_documents(options)
            elif is_warc_name(item):
                with item.open("rb") as handle:
                    yield from warc_documents(handle, str(item))
            else:
                url = file_url(item, root, options)
                yield SourceDocument(url, item.read_bytes(), str(item))


def _stdin_documents(options: InputOptions) -> Iterator[SourceDocument]:
    data = sys.stdin.buffer.read()
    if looks_like_warc(data):
        yield from warc_documents(io.BytesIO(data), "-")
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


def warc_documents(stream: IO[bytes], name: str) -> Iterator[SourceDocument]:
    """HTML responses of a WARC (``response`` records with a 2xx HTML payload)."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    try:
        for record in ArchiveIterator(stream):
            document = _warc_document(record, name)
            if document is not None:
                yield document
    except ArchiveLoadFailed as exc:
        logger.error("%s: not a readable WARC file (%s)", name, exc)


def _is_html_response(record: Any) -> bool:
    if record.rec_type != "response" or record.http_headers is None:
        return False
    http = record.http_headers
    ctype = (http.get_header("Content-Type") or "").split(";")[0].strip().lower()
    return str(http.get_statuscode()).startswith("2") and ctype in (*HTML_CONTENT_TYPES, "")


def _warc_document(record: Any, name: str) -> SourceDocument | None:
    if not _is_html_response(record):
        return None
    url = record.rec_headers.get_header("WARC-Target-URI") or ""
    record_id = record.rec_headers.get_header("WARC-Record-ID") or url
    return SourceDocument(url, record.content_stream().read(), f"{name}#{record_id}")


def count_documents(inputs: list[str], options: InputOptions) -> int | None:
    """How many documents the inputs hold (for the ETA), or None when only reading tells."""
    total = 0
    for item in expand(inputs):
        if isinstance(item, str):
            return None
        if is_warc_name(item):
            with item.open("rb") as handle:
                total += sum(1 for _ in _warc_headers_only(handle))
        else:
            total += 1
    return total


def _warc_headers_only(stream: IO[bytes]) -> Iterator[None]:
    from warcio.archiveiterator import ArchiveIterator

    for record in ArchiveIterator(stream):
        if _is_html_response(record):
            yield None
