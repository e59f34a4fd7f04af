"""Validators and dates of the crawl state: what a conditional request sends back, HTTP and
ISO dates as epoch seconds, the hash of an exported text. Scrapy-free."""

from __future__ import annotations

import calendar
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import formatdate, parsedate_to_datetime


@dataclass(frozen=True)
class Validators:
    """What a conditional request sends back: ``ETag`` and ``Last-Modified`` (epoch s)."""

    etag: str | None = None
    last_modified: int | None = None

    @classmethod
    def from_headers(cls, etag: bytes | None, last_modified: bytes | None) -> Validators:
        tag = etag.decode("latin-1").strip() if etag else None
        return cls(tag or None, http_date_to_epoch(last_modified))

    def if_modified_since(self) -> str | None:
        if self.last_modified is None:
            return None
        return formatdate(self.last_modified, usegmt=True)


def text_hash(text: str) -> int:
    """A hash of the exported text, white space folded (a re-indented page is unchanged)."""
    folded = " ".join(text.split()).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(folded, digest_size=8).digest(), "big", signed=True)


def http_date_to_epoch(value: bytes | str | None) -> int | None:
    """An HTTP date in epoch seconds (None when it is none): the usual IMF-fixdate form
    (``Sun, 06 Nov 1994 08:49:37 GMT``) read directly, the obsolete forms by the email
    module (ten times slower, and rare)."""
    if not value:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    fixed = _IMF_FIXDATE.fullmatch(text.strip())
    if fixed is not None and fixed["month"] in _MONTHS:
        day, year = int(fixed["day"]), int(fixed["year"])
        hms = (int(fixed["h"]), int(fixed["m"]), int(fixed["s"]))
        if 1 <= day <= 31 and hms[0] < 24 and hms[1] < 60 and hms[2] < 61:
            return calendar.timegm((year, _MONTHS[fixed["month"]], day, *hms, 0, 0, 0))
    try:
        parsed = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp())


_IMF_FIXDATE = re.compile(
    r"[A-Za-z]{3}, (?P<day>\d\d) (?P<month>[A-Za-z]{3}) (?P<year>\d{4}) "
    r"(?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d) GMT"
)
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


def iso_to_epoch(value: object) -> int | None:
    """An ISO 8601 date or datetime (a sitemap lastmod as the spiders pass it) in epoch s."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp())


def epoch_to_iso(value: int | None) -> str | None:
    if value is None:
        return None
    return datetime.fromtimestamp(value, UTC).isoformat(timespec="seconds")
