"""Reading back the WARC files a crawl wrote, the way any WARC tool would (warcio)."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator


@dataclass
class ReadRecord:
    file: str
    offset: int
    type: str
    url: str
    record_id: str
    headers: dict[str, str]
    status: int | None = None
    #: The payload as stored (still content-encoded) and as readers decode it.
    raw_payload: bytes = b""
    payload: bytes = b""
    http_headers: dict[str, str] = field(default_factory=dict)


def read_warc(path: Path) -> list[ReadRecord]:
    """Every record of one file, with its offset; raises on damage like any reader."""
    records = []
    with path.open("rb") as handle:
        iterator = ArchiveIterator(handle)
        for record in iterator:
            headers = dict(record.rec_headers.headers)
            raw = b""
            if record.http_headers is not None and record.rec_type == "response":
                raw = record.raw_stream.read()
            read = ReadRecord(
                path.name,
                # Asked after the payload is read: warcio reads the rest of the record.
                iterator.get_record_offset(),
                record.rec_type,
                headers.get("WARC-Target-URI", ""),
                headers.get("WARC-Record-ID", ""),
                headers,
            )
            if record.http_headers is not None and record.rec_type == "response":
                read.status = int(record.http_headers.get_statuscode())
                read.http_headers = dict(record.http_headers.headers)
                read.raw_payload = raw
            records.append(read)
    return records


def sha1_digest(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def decoded_payload(path: Path, offset: int) -> tuple[Any, bytes]:
    """The record at ``offset`` of ``path`` (no index: seek and read), and its decoded payload."""
    with path.open("rb") as handle:
        handle.seek(offset)
        record = next(iter(ArchiveIterator(handle)))
        headers = dict(record.rec_headers.headers)
        return headers, record.content_stream().read()
