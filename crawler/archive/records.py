"""One HTTP exchange as a WARC ``response`` and ``request`` record pair (gzip per record).

Scrapy-free. The payload is stored as it came off the wire after the HTTP client undid the
transfer coding (chunks): a ``Content-Encoding`` (gzip, br, ...) is kept, with its header, so
the payload digest is the digest of what the server sent; readers (warcio's
``content_stream()``, datatrove, ``maintext extract``) decode it. ``Transfer-Encoding`` is
renamed ``X-Crawler-Transfer-Encoding``, as the payload is no longer chunked.
"""

from __future__ import annotations

import datetime
import http
import io
import zlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date
from warcio.warcwriter import BufferWARCWriter

WARC_VERSION = "WARC/1.1"
#: zlib's own default. warcio compresses at 9, which on real pages (median 172 KB) costs 1.6
#: times the CPU for the same size; 1 costs a third of 6 and writes about a fifth more
#: (``python -m benchmarks.crawl_throughput --compare warc`` and a ``--variant`` with
#: ``WARC_COMPRESSION_LEVEL``; docs/formats.md has the figures).
DEFAULT_LEVEL = 6
#: A gzip header and trailer around the deflate stream.
GZIP_WBITS = zlib.MAX_WBITS + 16
#: HTTP headers that no longer describe the stored payload, and the name they are kept under.
RENAMED_HEADERS = {"transfer-encoding": "X-Crawler-Transfer-Encoding"}


@dataclass(frozen=True)
class Exchange:
    """One request and the response it got, as the crawler saw them."""

    url: str
    status: int
    #: Response headers as received, in order (a name repeated for each value).
    headers: list[tuple[str, str]]
    #: The body as received (still content-encoded).
    payload: bytes
    #: When the response arrived (UTC).
    date: datetime.datetime
    method: str = "GET"
    request_headers: list[tuple[str, str]] = field(default_factory=list)
    request_body: bytes = b""
    #: ``HTTP/1.1``; HTTP/2 answers are written with an HTTP/1.1 status line.
    protocol: str = "HTTP/1.1"
    ip_address: str | None = None
    #: A rendered page (issue 46): the ``WARC-Record-ID`` of the response it was rendered
    #: from; it is written as a ``conversion`` record that refers to it, with no request.
    refers_to: str | None = None


@dataclass(frozen=True)
class RecordPair:
    """The gzip members of one exchange: the response record, then its request record."""

    response: bytes
    request: bytes
    response_id: str
    payload_digest: str
    #: The response record's WARC-Date.
    warc_date: str


def warc_date(moment: datetime.datetime) -> str:
    """WARC/1.1 date with microseconds (records of one second keep their order)."""
    utc = moment.astimezone(datetime.UTC).replace(tzinfo=None)
    return str(datetime_to_iso_date(utc, use_micros=True))


def build_pair(
    exchange: Exchange, warcinfo_id: str | None = None, level: int = DEFAULT_LEVEL
) -> RecordPair:
    """The response and request records of ``exchange``, each a complete gzip member
    (compressed at ``level``); a rendered page's ``conversion`` record alone."""
    writer = BufferWARCWriter(gzip=False, warc_version=WARC_VERSION)
    date = warc_date(exchange.date)
    common = {"WARC-Date": date}
    if warcinfo_id:
        common["WARC-Warcinfo-ID"] = warcinfo_id
    if exchange.refers_to is not None:
        return _conversion(writer, exchange, common, level)
    response_headers = dict(common)
    if exchange.ip_address:
        response_headers["WARC-IP-Address"] = exchange.ip_address
    media_type = _media_type(exchange.headers)
    if media_type:
        # What datatrove's WARC reader filters on (it sniffs the payload without it).
        response_headers["WARC-Identified-Payload-Type"] = media_type
    response = writer.create_warc_record(
        exchange.url,
        "response",
        payload=io.BytesIO(exchange.payload),
        length=len(exchange.payload),
        warc_headers_dict=response_headers,
        http_headers=StatusAndHeaders(
            _status_line(exchange.status), _stored_headers(exchange.headers), _protocol(exchange)
        ),
    )
    writer.write_record(response)
    response_bytes = gzip_member(writer.get_contents(), level)
    response_id = response.rec_headers.get_header("WARC-Record-ID")

    writer = BufferWARCWriter(gzip=False, warc_version=WARC_VERSION)
    request = writer.create_warc_record(
        exchange.url,
        "request",
        payload=io.BytesIO(exchange.request_body),
        length=len(exchange.request_body),
        warc_headers_dict={**common, "WARC-Concurrent-To": response_id},
        http_headers=StatusAndHeaders(
            f"{exchange.method} {_request_target(exchange.url)} {_protocol(exchange)}",
            _request_headers(exchange),
            is_http_request=True,
        ),
    )
    writer.write_record(request)
    return RecordPair(
        response=response_bytes,
        request=gzip_member(writer.get_contents(), level),
        response_id=response_id,
        payload_digest=response.rec_headers.get_header("WARC-Payload-Digest"),
        warc_date=date,
    )


def _conversion(
    writer: BufferWARCWriter, exchange: Exchange, common: dict[str, str], level: int
) -> RecordPair:
    """The page as the browser left it, refering to the response it was rendered from
    (readers that take ``response`` records, ``maintext extract`` among them, skip it)."""
    refers_to = exchange.refers_to or ""
    headers = {
        **common,
        "WARC-Refers-To": refers_to if refers_to.startswith("<") else f"<{refers_to}>",
    }
    record = writer.create_warc_record(
        exchange.url,
        "conversion",
        payload=io.BytesIO(exchange.payload),
        length=len(exchange.payload),
        warc_content_type=_media_type(exchange.headers) or "text/html",
        warc_headers_dict=headers,
    )
    writer.write_record(record)
    return RecordPair(
        response=gzip_member(writer.get_contents(), level),
        request=b"",
        response_id=record.rec_headers.get_header("WARC-Record-ID"),
        payload_digest=record.rec_headers.get_header("WARC-Payload-Digest") or "",
        warc_date=common["WARC-Date"],
    )


def build_warcinfo(
    filename: str, info: dict[str, str], level: int = DEFAULT_LEVEL
) -> tuple[bytes, str]:
    """The ``warcinfo`` record that opens a file, and its record id."""
    writer = BufferWARCWriter(gzip=False, warc_version=WARC_VERSION)
    record = writer.create_warcinfo_record(filename, info)
    writer.write_record(record)
    record_id = record.rec_headers.get_header("WARC-Record-ID")
    return gzip_member(writer.get_contents(), level), record_id


def gzip_member(record: bytes, level: int) -> bytes:
    """One record as one gzip member (what "gzip per record" means: a reader can start at
    any member's offset)."""
    compressor = zlib.compressobj(level, zlib.DEFLATED, GZIP_WBITS)
    return compressor.compress(record) + compressor.flush()


def _status_line(status: int) -> str:
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    return f"{status} {phrase}".rstrip()


def _protocol(exchange: Exchange) -> str:
    return exchange.protocol if exchange.protocol.startswith("HTTP/1.") else "HTTP/1.1"


def _stored_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(RENAMED_HEADERS.get(name.lower(), name), value) for name, value in headers]


def _media_type(headers: list[tuple[str, str]]) -> str:
    for name, value in headers:
        if name.lower() == "content-type":
            return value.split(";")[0].strip().lower()
    return ""


def _request_target(url: str) -> str:
    parts = urlsplit(url)
    target = parts.path or "/"
    return f"{target}?{parts.query}" if parts.query else target


def _request_headers(exchange: Exchange) -> list[tuple[str, str]]:
    """The request's headers, with the Host line the HTTP client adds when it sends it."""
    headers = list(exchange.request_headers)
    if not any(name.lower() == "host" for name, _ in headers):
        headers.insert(0, ("Host", urlsplit(exchange.url).netloc))
    return headers
