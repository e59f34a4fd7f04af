"""Adaptive revisits of a recurring crawl (``RECRAWL_SCHEDULE``): when a URL is due again.

Scrapy-free. Every remembered URL (page, sitemap, feed) has a row in the state's
``schedule`` table (in a Redis state, fields of the URL's hash): when it is due, its revisit
interval, when it was last visited, when it last changed, and (sitemaps and feeds) a hash of
the body last read; read and written through :class:`~scrapy_maintext.state.store.StateStore`
(``visit``, ``visits``, ``record_visit``). A visit that finds the
URL unchanged (``304``, the same text, the same body) multiplies the interval by
:data:`GROW`; one that finds it changed divides it by :data:`SHRINK`; the interval stays
within ``RECRAWL_MIN_INTERVAL`` and ``RECRAWL_MAX_INTERVAL``. An unchanged URL's interval
also stays below :data:`AGE_FRACTION` of the time it has been unchanged (the heuristic
freshness of RFC 9111, 4.2.2): a sitemap or feed that changes most hours but not this one is
read again next hour, not in 90 minutes.

The site's hints bound the interval: a sitemap ``changefreq`` or a feed's ``sy:updatePeriod``
(how often it says it changes) is an upper bound; a feed's ``ttl``, ``Cache-Control:
max-age`` or ``Expires`` (how long a copy stays fresh) a lower bound.

A run asks :meth:`Schedule.due`; a URL is due when its time comes before the middle of the
next run's interval (``due <= now + RECRAWL_MIN_INTERVAL / 2``: hourly runs with a one-hour
minimum round a 1.5 h interval to the next run instead of the one after); due times come up
to :data:`JITTER` of the interval early, by a hash of the URL, so that pages first seen
together spread over later runs; a due time farther than ``RECRAWL_MAX_INTERVAL`` from the
last visit (stored under a longer maximum) counts as that far (:func:`due_at`, the one rule
of runs and ``maintext state``). What a sitemap or
feed announces as newer than its stored date is requested whatever its schedule
(:mod:`~scrapy_maintext.state.recrawl_discovery`): announced changes are never delayed.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from scrapy_maintext.state.store import StateStore, Visit, url_key
from scrapy_maintext.state.validators import http_date_to_epoch

if TYPE_CHECKING:
    # Only its type: ``maintext state`` reads the due rule without the parsers.
    from scrapy_maintext.discovery.feeds import FeedParseResult

#: ``RECRAWL_SCHEDULE`` values.
ADAPTIVE = "adaptive"
EVERY_RUN = "every-run"
SCHEDULES = (ADAPTIVE, EVERY_RUN)
#: Interval factor of an unchanged visit, and divisor of a changed one.
GROW = 1.5
SHRINK = 2.0
#: An unchanged URL's interval stays below this share of the time it has been unchanged.
AGE_FRACTION = 0.1
#: A URL is due up to this share of its interval early (by a hash of the URL): pages first
#: seen together do not all come due in the same later run.
JITTER = 0.2
DAY = 86_400

#: Sitemap ``changefreq`` values in seconds ("always" is the shortest interval, "never"
#: says nothing we can use).
CHANGEFREQ = {
    "always": 0,
    "hourly": 3_600,
    "daily": DAY,
    "weekly": 7 * DAY,
    "monthly": 30 * DAY,
    "yearly": 365 * DAY,
}


@dataclass(frozen=True)
class SchedulePolicy:
    """``RECRAWL_SCHEDULE``, ``RECRAWL_MIN_INTERVAL`` and ``RECRAWL_MAX_INTERVAL``."""

    mode: str = ADAPTIVE
    min_interval: int = 3_600
    max_interval: int = DAY

    def __post_init__(self) -> None:
        if self.mode not in SCHEDULES:
            raise ValueError(f"RECRAWL_SCHEDULE={self.mode!r}: use {' or '.join(SCHEDULES)}")
        if self.min_interval <= 0 or self.max_interval < self.min_interval:
            raise ValueError(
                f"RECRAWL_MIN_INTERVAL={self.min_interval} and RECRAWL_MAX_INTERVAL="
                f"{self.max_interval}: seconds, 0 < minimum <= maximum"
            )

    @property
    def adaptive(self) -> bool:
        return self.mode == ADAPTIVE

    def clamp(self, interval: float) -> int:
        return int(min(max(interval, self.min_interval), self.max_interval))


@dataclass(frozen=True)
class Hints:
    """What the site says of a URL's changes, in seconds."""

    #: How often it says it changes (changefreq, sy:updatePeriod): an upper bound.
    change_period: int | None = None
    #: How long a copy stays fresh (ttl, Cache-Control max-age, Expires): a lower bound.
    fresh_for: int | None = None

    def with_fresh_for(self, fresh_for: int | None) -> Hints:
        if fresh_for is None:
            return self
        longest = max(fresh_for, self.fresh_for or 0)
        return Hints(self.change_period, longest)


NO_HINTS = Hints()


def next_visit(
    policy: SchedulePolicy,
    previous: Visit | None,
    now: int,
    changed: bool,
    hints: Hints = NO_HINTS,
    modified: int | None = None,
    digest: int | None = None,
    spread: float = 0.0,
) -> Visit:
    """The schedule after a visit at ``now`` that found the URL ``changed`` or not (a URL
    never visited starts at the shortest interval). ``modified`` is its Last-Modified, when
    it is the first visit: the time it has been unchanged counts from there. ``spread``
    (0 to 1) brings the due time up to :data:`JITTER` of the interval early."""
    if previous is None:
        interval = float(policy.min_interval)
        since = modified if modified is not None and modified <= now else now
    elif changed:
        interval = previous.interval / SHRINK
        since = now
    else:
        since = previous.changed if previous.changed is not None else previous.checked
        age_bound = max(policy.min_interval, AGE_FRACTION * (now - since))
        interval = min(previous.interval * GROW, age_bound)
    if hints.change_period is not None:
        interval = min(interval, hints.change_period)
    if hints.fresh_for is not None:
        interval = max(interval, hints.fresh_for)
    bounded = policy.clamp(interval)
    due = now + round(bounded * (1 - JITTER * spread))
    return Visit(due, bounded, now, since, digest)


def is_due(policy: SchedulePolicy, visit: Visit | None, now: int) -> bool:
    """Whether a run at ``now`` requests the URL (always with ``every-run``)."""
    if visit is None:
        return True
    return due_at(policy, visit.due, visit.checked, now)


def requested_from(policy: SchedulePolicy, visit: Visit) -> int:
    """The earliest start of a run that requests the URL of ``visit`` (by :func:`due_at`)."""
    due = (
        visit.due if visit.checked is None else min(visit.due, visit.checked + policy.max_interval)
    )
    return due - policy.min_interval // 2


def due_at(policy: SchedulePolicy, due: int | None, checked: int | None, now: int) -> bool:
    """The rule of :func:`is_due` on a schedule row's ``due`` and ``checked`` (last visit),
    None when the URL has none: what a run requests, and what ``maintext state`` counts.

    Due by the middle of the next run (``due <= now + min_interval / 2``). A due time
    stored under a longer ``RECRAWL_MAX_INTERVAL`` than the policy's counts as the last
    visit plus the policy's: a lowered maximum applies at once, not after each URL's next
    visit (up to the old maximum later)."""
    if due is None or not policy.adaptive:
        return True
    if checked is not None:
        due = min(due, checked + policy.max_interval)
    return due <= now + policy.min_interval // 2


# The site's hints.


def changefreq_seconds(value: str | None) -> int | None:
    """A sitemap ``changefreq`` in seconds (None when absent, ``never`` or unknown)."""
    if not value:
        return None
    return CHANGEFREQ.get(value.strip().lower())


def update_period_seconds(period: str | None, frequency: str | None) -> int | None:
    """RSS ``sy:updatePeriod`` / ``sy:updateFrequency`` (updates per period) in seconds."""
    seconds = changefreq_seconds(period) if period else None
    if not seconds:
        return None
    try:
        times = int((frequency or "1").strip())
    except ValueError:
        times = 1
    return seconds // max(times, 1)


def ttl_seconds(value: str | None) -> int | None:
    """RSS ``ttl`` (minutes) in seconds."""
    try:
        minutes = int((value or "").strip())
    except ValueError:
        return None
    return minutes * 60 if minutes > 0 else None


def feed_hints(result: FeedParseResult) -> Hints:
    """What an RSS channel says of its changes: ``sy:updatePeriod`` (how often it changes)
    and ``ttl`` (how long a copy stays fresh)."""
    period = update_period_seconds(result.update_period, result.update_frequency)
    return Hints(change_period=period, fresh_for=ttl_seconds(result.ttl))


_MAX_AGE = re.compile(rb"(?:^|[,\s])(s-maxage|max-age)\s*=\s*\"?(\d+)", re.IGNORECASE)
_NO_STORE = re.compile(rb"no-cache|no-store", re.IGNORECASE)


def freshness_seconds(
    cache_control: bytes | None, expires: bytes | None, date: bytes | None, now: int
) -> int | None:
    """How long a response stays fresh by its ``Cache-Control`` (``max-age``) or, without
    one, ``Expires`` (less ``Date``, else ``now``); None when it says nothing or no-cache."""
    if cache_control:
        if _NO_STORE.search(cache_control):
            return None
        ages = {m.group(1).lower(): int(m.group(2)) for m in _MAX_AGE.finditer(cache_control)}
        age = ages.get(b"s-maxage", ages.get(b"max-age"))
        if age is not None:
            return age if age > 0 else None
    expiry = http_date_to_epoch(expires)
    if expiry is None:
        return None
    fresh = expiry - (http_date_to_epoch(date) or now)
    return fresh if fresh > 0 else None


def response_freshness(headers: Any, now: int) -> int | None:
    """:func:`freshness_seconds` of a response's headers (anything with ``get``)."""
    get = headers.get
    return freshness_seconds(get("Cache-Control"), get("Expires"), get("Date"), now)


def body_digest(body: bytes) -> int:
    """A hash of a sitemap's or feed's body (changed or not since the last read)."""
    return int.from_bytes(hashlib.blake2b(body, digest_size=8).digest(), "big", signed=True)


# The clock: runs can be simulated (RECRAWL_NOW).


class Clock:
    """Now, in epoch seconds: the real clock, or a given time for the whole run (a simulated
    run happens at one moment, as the simulation that drives it counts it)."""

    def __init__(self, at: float | None = None) -> None:
        #: The time of a simulated run (None: the real clock); a simulation moves it.
        self.at = None if at is None else int(at)

    def now(self) -> int:
        return int(time.time()) if self.at is None else self.at


def parse_now(value: str) -> float | None:
    """``RECRAWL_NOW``: an ISO date or epoch seconds (None when empty), else ValueError."""
    text = value.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"RECRAWL_NOW={value!r}: an ISO date or epoch seconds") from None
    if parsed.tzinfo is None:
        raise ValueError(f"RECRAWL_NOW={value!r}: give a time zone (Z or +00:00)")
    return parsed.timestamp()


# The schedule of a state.


class Schedule:
    """When each URL of an open crawl state is due; writes join the state's open commit."""

    def __init__(self, state: StateStore, policy: SchedulePolicy, clock: Clock) -> None:
        self.state = state
        self.policy = policy
        self.clock = clock

    def get(self, url: str) -> Visit | None:
        return self.state.visit(url)

    def get_many(self, urls: Iterable[str]) -> dict[str, Visit]:
        return self.state.visits(urls)

    def due(self, url: str) -> bool:
        if not self.policy.adaptive:
            return True
        return is_due(self.policy, self.get(url), self.clock.now())

    def not_due(self, urls: Iterable[str]) -> set[str]:
        """Of ``urls``, those a run now leaves for later."""
        if not self.policy.adaptive:
            return set()
        now = self.clock.now()
        return {u for u, v in self.get_many(urls).items() if not is_due(self.policy, v, now)}

    def visited(
        self,
        url: str,
        changed: bool,
        hints: Hints = NO_HINTS,
        modified: int | None = None,
        digest: int | None = None,
    ) -> Visit:
        """Record a visit now; a body ``digest`` (sitemaps, feeds) other than the last one
        counts as a change."""
        previous = self.get(url)
        if digest is not None and previous is not None and previous.digest is not None:
            changed = changed or digest != previous.digest
        if digest is None and previous is not None:
            digest = previous.digest  # a 304: the body is the one read last time
        now = self.clock.now()
        spread = (url_key(url) * 0x9E3779B1 & 0xFFFF) / 0x10000
        visit = next_visit(self.policy, previous, now, changed, hints, modified, digest, spread)
        self.state.record_visit(url, visit)
        return visit
