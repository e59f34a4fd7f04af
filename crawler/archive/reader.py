"""Reading a WARC file record by record, past damaged records.

warcio stops at the first record it cannot parse (a response without ``WARC-Target-URI``, a
corrupt gzip member, a garbled header) and cannot go on from there: every record after it
would be lost. :func:`read_records` starts reading again at the next record instead (the
next gzip member that holds a WARC header, or the next ``WARC/1.0``, ``1.1``, ``0.17`` or
``0.18`` line in an uncompressed file) and says so in ``damaged``. A damage warcio does not
notice is not repaired: an uncompressed record whose ``Content-Length`` is too large takes
the records after it into its payload (they are then cut short), and a whole-file gzip has
no next member (the rest of the file is reported lost).

A file that ends inside a record (a truncated archive) is reported as such (``cut``), whether
it ends in the record's payload (warcio hands out a record it still expects bytes of), in its
header (warcio fails on it, or takes it for the end of the file) or in its gzip member's
first bytes.
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
_CONTENT_LENGTH = re.compile(rb"\nContent-Length:[ \t]*(\d+)", re.IGNORECASE)
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
    #: The file ends inside this record (a truncated archive): skipped.
    cut: bool = False


#: The error of a record the file ends inside.
CUT_SHORT = "the file ends inside this record"


def cut_short(record: Any) -> bool:
    """The file ends inside ``record``, whose payload has been read (warcio's reader still
    expects bytes of it)."""
    return bool(getattr(record.raw_stream, "limit", 0))


def damage_message(name: str, damage: Damage) -> str:
    """The warning line of a damaged record that was skipped or read (not of ``rest``)."""
    if damage.cut:
        return (
            f"{name}: the record at offset {damage.offset} is cut short ({damage.error}); skipped"
        )
    if damage.skipped:
        return f"{name}: damaged record at offset {damage.offset} skipped ({damage.error})"
    return (
        f"{name}: the record at offset {damage.offset} is damaged at its end; "
        f"its document was read ({damage.error})"
    )


def read_records(
    stream: IO[bytes], handle: Callable[[Any, int], T | None], damaged: list[Damage]
) -> Iterator[T]:
    """``handle(record, offset)`` of every record of ``stream`` (a WARC file, offsets from its
    start), the results that are not None, in order.

    ``handle`` reads what it needs of the record (its payload) while it is current; an error
    there, or in warcio's parsing of the record, skips that record into ``damaged`` and
    reading goes on at the next record. A record the file ends inside is skipped into
    ``damaged`` (``cut``) too, its result dropped. A stream that cannot seek is read straight
    through, and its first damaged record raises.
    """
    from warcio.archiveiterator import ArchiveIterator

    if not _seekable(stream):
        # Nowhere to start again from: the first damaged record ends the reading (raises).
        iterator = ArchiveIterator(stream)
        for record in iterator:
            offset = iterator.offset
            result = handle(record, offset)
            if result is not None and not cut_short(record):
                yield result
            if _read_to_end(iterator, record):
                damaged.append(Damage(offset, CUT_SHORT, cut=True))
        return
    gz = _starts_with_gzip(stream)
    start: int | None = 0
    while start is not None:
        stream.seek(start)
        iterator = ArchiveIterator(stream)
        records = iter(iterator)
        last: int | None = None
        current: int | None = None
        end = start
        try:
            cut = False
            for record in records:
                # Where the record starts (warcio counts from the stream's position):
                # get_record_offset() would read the record to its end first, before
                # ``handle`` has its payload.
                current = iterator.offset
                result = handle(record, current)
                last, current = current, None
                if result is not None and not cut_short(record):
                    yield result
                cut = _read_to_end(iterator, record)
                if cut:
                    damaged.append(Damage(last, CUT_SHORT, cut=True))
                end = iterator.offset
            # warcio takes a file that ends in a record's header for the end of the file, or
            # for a whole record without a payload.
            at = (
                None
                if cut
                else next((a for a in (end, last) if _cut_record_at(stream, a, gz)), None)
            )
            if at is not None:
                damaged.append(Damage(at, CUT_SHORT, rest=True, cut=True))
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
    if resume is None and _cut_record_at(stream, at, gz):
        damaged.append(Damage(at, CUT_SHORT, rest=True, cut=True))
    else:
        damaged.append(Damage(at, error, skipped=at != last, rest=resume is None))
    return resume


def _read_to_end(iterator: Any, record: Any) -> bool:
    """Reads ``record`` to its end (warcio does before the next record anyway, and its offset
    is then where the record ends); whether the file ends inside the record."""
    iterator.read_to_end()
    return cut_short(record)


def _cut_record_at(stream: IO[bytes], at: int | None, gz: bool) -> bool:
    """The file ends inside a record that starts at ``at`` and is no longer than a header:
    the rest of the file (inside an unfinished gzip member when ``gz``) is the start of a
    WARC header without its end, or one with fewer bytes after it than its
    ``Content-Length``."""
    if at is None:
        return False
    stream.seek(at)
    rest = stream.read(PROBE + 1)
    if len(rest) > PROBE:
        # Longer than any header we write: not a record cut in its header.
        return False
    if gz:
        inflate = zlib.decompressobj(zlib.MAX_WBITS + 16)
        try:
            head = inflate.decompress(rest)
        except zlib.error:
            return False
        if not rest or not _GZIP_MEMBER.startswith(rest[:3]) or inflate.eof:
            return False
        rest = head
    rest = rest.lstrip(b"\r\n")
    if not rest:
        # A gzip member cut before its first byte of WARC header.
        return gz
    header, blank, block = rest.partition(b"\r\n\r\n")
    if not _warc(header):
        return False
    length = _CONTENT_LENGTH.search(header)
    return not blank or (length is not None and int(length[1]) > len(block))


def _warc(head: bytes) -> bool:
    """``head`` is (the start of) a WARC header."""
    return head.startswith(b"WARC/") or b"WARC/".startswith(head)


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
