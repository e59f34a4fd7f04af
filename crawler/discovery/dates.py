"""Dates from sitemaps and feeds (W3C datetime, ISO 8601, RFC 822) to ISO 8601 strings."""

from __future__ import annotations

from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime


def parse_date(value: str | None) -> datetime | None:
    """Parse a sitemap/feed date into an aware UTC datetime; None when unparseable."""
    if not value:
        return None
    value = value.strip()
    try:
        parsed = _parse_iso(value) or _parse_rfc822(value)
        if parsed is None:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        # Year 0, or a date at the edge of the calendar that a time zone pushes over it.
        return None


def _parse_iso(value: str) -> datetime | None:
    text = value.replace("Z", "+00:00").replace("z", "+00:00")
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    if len(value) == 7 and value[4] == "-" and value[:4].isdigit() and value[5:].isdigit():
        return datetime(int(value[:4]), int(value[5:7]), 1)  # W3C "YYYY-MM"
    if len(value) == 4 and value.isdigit():  # W3C "YYYY"
        return datetime(int(value), 1, 1)
    return None


def _parse_rfc822(value: str) -> datetime | None:
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None


def to_iso(value: datetime | None) -> str | None:
    """ISO 8601 with seconds, UTC ("2026-01-02T03:04:05+00:00")."""
    return value.isoformat(timespec="seconds") if value else None


def parse_since(value: str | date | datetime | None) -> datetime | None:
    """The ``since`` spider argument: a date or datetime, as aware UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    parsed = parse_date(str(value))
    if parsed is None:
        raise ValueError(f"since: not a date: {value!r}")
    return parsed
