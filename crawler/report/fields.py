"""A saved report's fields checked before anything is drawn from them (Scrapy-free).

A JSON report is a file a user may have edited or written by hand: every field the renderers
read must have the type they expect, or :class:`ReportError` says which one does not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from scrapy_maintext.report.sites import SITE_COUNTERS


class ReportError(ValueError):
    """A saved report that cannot be read, with the reason."""


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _counts(value: Any) -> bool:
    return isinstance(value, dict) and all(_whole(count) for count in value.values())


def _wholes(value: Any) -> bool:
    return isinstance(value, list) and all(_whole(count) for count in value)


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


#: What each field must be: the check, and the words that say it.
_WHOLE = (_whole, "a whole number")
_COUNTS = (_counts, "an object of whole numbers")
_WHOLES = (_wholes, "a list of whole numbers")
_TEXT = (lambda value: isinstance(value, str), "a string")

RUN_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "reason": _TEXT,
    "run": (lambda value: isinstance(value, dict), "an object"),
    "text_length_bins": (lambda value: _wholes(value) and bool(value), "a list of whole numbers"),
    "bucket_seconds": (lambda value: _number(value) and value > 0, "a number above 0"),
    "recrawl": _COUNTS,
    "repaired": _COUNTS,
}
RUN_HEADER_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "versions": (_optional(lambda value: isinstance(value, dict)), "an object"),
    "settings": (_optional(lambda value: isinstance(value, dict)), "an object"),
    "duration_seconds": (_optional(_number), "a number"),
}
SITE_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "site": _TEXT,
    "planned": _WHOLE,
    "fetched": _WHOLE,
    "mean_text_length": (_number, "a number"),
    "requests": _WHOLE,
    **{name: _COUNTS for name in SITE_COUNTERS},
    "statuses": _COUNTS,
    "text_lengths": _WHOLES,
    "requests_per_bucket": _WHOLES,
    "delay": (_optional(_number), "a number or null"),
    "min_gap": (_optional(_number), "a number or null"),
    "failure": (_optional(lambda value: isinstance(value, str)), "a string or null"),
    "rendered": _WHOLE,
    "render_seconds": (_optional(_number), "a number or null"),
}


def check_run(data: dict[str, Any]) -> None:
    """The report's own fields (its sites apart) as the renderers read them."""
    _check(data, RUN_FIELDS, "")
    _check(data["run"], RUN_HEADER_FIELDS, "run.")


def check_site(site: dict[str, Any], index: int, bins: int) -> None:
    """One site's fields (``bins``: how many text length bins the report has)."""
    where = f"sites[{index}]."
    _check(site, SITE_FIELDS, where)
    if len(site["text_lengths"]) != bins:
        raise ReportError(
            f"{where}text_lengths has {len(site['text_lengths'])} counts for {bins} bins"
        )


def _check(
    data: dict[str, Any], fields: dict[str, tuple[Callable[[Any], bool], str]], where: str
) -> None:
    for name, (check, expected) in fields.items():
        if name in data and not check(data[name]):
            value = json.dumps(data[name], ensure_ascii=False)
            shown = value if len(value) <= 40 else value[:37] + "..."
            raise ReportError(f"{where}{name} is {shown}, not {expected}")
