"""Reading a WARC file record by record, past damaged records.

warcio stops at the first record it cannot parse (a response without ``WARC-Target-URI``, a
corrupt gzip member, a garbled header) and cannot go on from there: every record after it
would be lost. :func:`read_records` starts reading again at the next record instead (the
next gzip member that holds a WARC header, or the next ``WARC/1.0``, ``1.1``, ``0.17`` or
``0.18`` line in an uncompressed file) and says so in ``damaged``. A damage warcio does not
notice is not repaired: an uncompressed record whose ``Content-Length`` is too large takes
the records after it into its payload (they are then cut short), and a whole-file gzip has
no next member (the rest of the file is reported lost).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, TypeVar

T = TypeVar("T")

_GZIP_MEMBER = b"\x1f\x8b\x08"
_PLAIN_RECORD = b"\nWARC/"
_VERSION_LINE = re.compile(rb"WARC/(?:1\.[01]|0\.1[78])\r?\n")
#: Bytes scanned at a time for the next record, and bytes of a candidate gzip member
#: decompressed to check that it holds a WARC header.
CHUNK = 1 << 20
PROBE = 2048
#: Characters of an error message kept (a damaged archive's message can quote raw bytes).
MAX_ERROR_CHARS = 160


@dataclass(frozen=True)
class Damage:
    """A record that could not be read, skipped."""

    #: Where the record starts in the file (bytes).
    offset: int
    error: str
    #: False when the record had been handed out before its end turned out damaged.
    skipped: bool = True
    #: No record start follows: the rest of the file could not be read.
    rest: bool = False


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
        records = iter(iterator)
        last: int | None = None
        current: int | None = None
        try:
            for record in records:
                # Where the record starts (warcio counts from the stream's position):
                # get_record_offset() would read the record to its end first, before
                # ``handle`` has its payload.
                current = iterator.offset
                result = handle(record, current)
                last, current = current, None
                if result is not None:
                    yield result
            return
        # warcio raises its own errors, zlib's, EOFError and plain AttributeErrors on
        # damaged records.
        except Exception as exc:
            # The record being handled, else the one warcio was reading: its offset is
            # that record's start until the record has been read to its end.
            at = current if current is not None else iterator.offset
            # A record whose end was damaged, and a whole-file gzip, leave warcio's offset
            # behind (even negative): the damage is then in the last record read.
            at = max(at, start if last is None else last)
            start = _resume(stream, gz, at, last, _message(exc), damaged)


def _resume(
    stream: IO[bytes], gz: bool, at: int, last: int | None, error: str, damaged: list[Damage]
) -> int | None:
    """Where reading goes on after the record at ``at`` failed, with the damage noted: the
    next record start after it, or None when there is none (the rest of the file is lost).
    A record already handed out (``at == last``: the end of its gzip member was damaged) is
    noted but was not skipped."""
    resume = next_record_start(stream, at + 1, gz)
    damaged.append(Damage(at, error, skipped=at != last, rest=resume is None))
    return resume


def _message(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:MAX_ERROR_CHARS]!r}"


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
