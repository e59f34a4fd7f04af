"""Where a document came from: its WARC record, when it was fetched, what the server said.

Scrapy-free. The crawl (``WARC_OUTPUT``) and ``maintext extract`` (reading a WARC) put the
same fields into every document, so that a document leads back to its record: open
``warc_file``, seek to ``warc_offset``, read one gzip member.
"""

from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # A type only: the writer imports Scrapy (its feed storage), which the datatrove step's
    # tasks and ``maintext extract`` never need (~0.25 s of every task's start).
    from scrapy_maintext.archive.writer import RecordLocation

#: The fields, in the order exported documents have them.
PROVENANCE_FIELDS = (
    "warc_file",
    "warc_offset",
    "warc_record_id",
    "payload_digest",
    "status",
    "fetched_at",
)


@dataclass(frozen=True)
class Provenance:
    #: The WARC file's name (no directory: archives move).
    warc_file: str
    #: Byte offset of the response record in that file.
    warc_offset: int
    warc_record_id: str
    #: ``sha1:BASE32`` of the payload as received (still content-encoded).
    payload_digest: str
    #: The HTTP status of the response.
    status: int
    #: The response record's WARC-Date, to the second (``2026-01-31T12:00:00+00:00``).
    fetched_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of_location(cls, location: RecordLocation, status: int) -> Provenance:
        return cls(
            warc_file=location.file,
            warc_offset=location.offset,
            warc_record_id=bare_record_id(location.record_id),
            payload_digest=location.payload_digest,
            status=status,
            fetched_at=fetch_time(location.warc_date),
        )

    @classmethod
    def of_record(cls, record: Any, warc_file: str, offset: int) -> Provenance:
        """The provenance of a warcio response record read at ``offset`` of ``warc_file``."""
        headers = record.rec_headers
        return cls(
            warc_file=warc_file,
            warc_offset=offset,
            warc_record_id=bare_record_id(headers.get_header("WARC-Record-ID") or ""),
            payload_digest=headers.get_header("WARC-Payload-Digest") or "",
            status=int(record.http_headers.get_statuscode() or 0),
            fetched_at=fetch_time(headers.get_header("WARC-Date") or ""),
        )


def bare_record_id(record_id: str) -> str:
    """A WARC-Record-ID as a plain URI: ``<urn:uuid:...>`` is ``urn:uuid:...``."""
    record_id = record_id.strip()
    if record_id.startswith("<") and record_id.endswith(">"):
        return record_id[1:-1].strip()
    return record_id


def fetch_time(warc_date: str) -> str:
    """A WARC-Date as the documents' ``fetched_at`` (ISO 8601, UTC, seconds); as it is when
    it cannot be read."""
    try:
        moment = datetime.datetime.fromisoformat(warc_date.replace("Z", "+00:00"))
    except ValueError:
        return warc_date
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.astimezone(datetime.UTC).isoformat(timespec="seconds")
