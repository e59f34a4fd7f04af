"""Reading a WARC file record by record, past damaged records.

warcio stops at the first record it cannot parse (a response without ``WARC-Target-URI``, a
corrupt gzip member, a garbled header) and cannot go on from there: every record after it
would be lost. :func:`read_records` starts reading again at the next record instead (the
next gzip member that holds a WARC header, or the next ``WARC/1.x`` line in an uncompressed
file), so one damaged record costs that record only, and says so in ``damaged``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, TypeVar

T = TypeVar("T")

_GZIP_MEMBER = b"\x1f\x8b\x08"
_PLAIN_RECORD = b"\nWARC/1."
_VERSION_LINE = re.compile(rb"WARC/1\.[01]\r?\n")
#: Bytes scanned at a time for the next record, and bytes of a candidate gzip member
#: decompressed to check that it holds a WARC header.
CHUNK = 1 << 20
PROBE = 2048
#: Characters of an error message kept (a damaged archive's message can quote raw bytes).
MAX_ERROR_CHARS = 120


@dataclass(frozen=True)
class Damage:
    """A record that could not be read, skipped."""

    #: Where the record starts in the file (bytes).
    offset: int
    error: str


def read_records(
    stream: IO[bytes], handle: Callable[[Any, int], T | None], damaged: list[Damage]
) -> Iterator[T]:
    """``handle(record, offset)`` of every record of ``stream`` (a WARC file, offsets from its
    start), the results that are not None, in order.

    ``handle`` reads what it needs of the record (its payload) while it is current; an error
    there, or in warcio's parsing of the record, skips that record into ``damaged`` and
    reading goes on at the next record. A stream that cannot seek is read straight through,
    and its first damaged record raises.
    """
    from warcio.archiveiterator import ArchiveIterator

    if not _seekable(stream):
        # Nowhere to start again from: the first damaged record ends the reading (raises).
        iterator = ArchiveIterator(stream)
        for record in iterator:
            result = handle(record, iterator.offset)
            if result is not None:
                yield result
        return
    gz = _starts_with_gzip(stream)
    start: int | None = 0
    while start is not None:
        stream.seek(start)
        iterator = ArchiveIterator(stream)
        # warcio counts offsets from 0 for its first record, then from the file's start.
        iterator.offset = start
        records = iter(iterator)
        last: int | None = None
        current: int | None = None
        try:
            for record in records:
                # Where the record starts: warcio's get_record_offset() would read the
                # record to its end first, before ``handle`` has its payload.
                current = iterator.offset
                result = handle(record, current)
                last, current = current, None
                if result is not None:
                    yield result
            return
        # warcio raises its own errors, zlib's, EOFError and plain AttributeErrors on
        # damaged records.
        except Exception as exc:
            error = f"{type(exc).__name__}: {str(exc)[:MAX_ERROR_CHARS]!r}"
            start = _resume(stream, gz, start, last, current, error, damaged)


def _resume(
    stream: IO[bytes],
    gz: bool,
    start: int,
    last: int | None,
    current: int | None,
    error: str,
    damaged: list[Damage],
) -> int | None:
    """Where reading goes on after a failure, with the damaged record noted.

    The record that failed is the one being handled, else the one after the last record
    read (the first of this pass when none was). When that one reads well on its own, the
    damage was at the end of the last record (a corrupt gzip member whose payload had been
    read): reading goes on with it.
    """
    if current is not None:
        bad: int | None = current
    elif last is None:
        bad = start
    else:
        bad = next_record_start(stream, last + 1, gz)
        if bad is not None and _reads_well(stream, bad):
            damaged.append(Damage(last, error))
            return bad
    damaged.append(Damage(start if bad is None else bad, error))
    return None if bad is None else next_record_start(stream, bad + 1, gz)


def _reads_well(stream: IO[bytes], offset: int) -> bool:
    from warcio.archiveiterator import ArchiveIterator

    stream.seek(offset)
    try:
        record = next(iter(ArchiveIterator(stream)))
        record.content_stream().read()
    except Exception:
        return False
    return True


def next_record_start(stream: IO[bytes], after: int, gz: bool) -> int | None:
    """The offset of the first record that starts at or after ``after``, or None."""
    marker = _GZIP_MEMBER if gz else _PLAIN_RECORD
    position = after
    while True:
        stream.seek(position)
        chunk = stream.read(CHUNK + PROBE)
        if len(chunk) < len(marker):
            return None
        at_end = len(chunk) < CHUNK + PROBE
        limit = len(chunk) if at_end else CHUNK
        found = chunk.find(marker)
        while 0 <= found < limit:
            if gz and _holds_warc_header(chunk[found : found + PROBE]):
                return position + found
            if not gz and _VERSION_LINE.match(chunk, found + 1):
                return position + found + 1
            found = chunk.find(marker, found + 1)
        if at_end:
            return None
        position += CHUNK


def _holds_warc_header(data: bytes) -> bool:
    try:
        return zlib.decompressobj(zlib.MAX_WBITS + 16).decompress(data).startswith(b"WARC/")
    except zlib.error:
        return False


def _seekable(stream: IO[bytes]) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _starts_with_gzip(stream: IO[bytes]) -> bool:
    stream.seek(0)
    head = stream.read(2)
    stream.seek(0)
    return head == _GZIP_MEMBER[:2]
