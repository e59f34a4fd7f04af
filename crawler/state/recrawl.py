"""The crawl state of one crawl (``CRAWL_STATE``), shared by its components (Scrapy glue).

The conditional-request middleware, the recrawl pipeline stage and the discovery spiders
all use the one :class:`~scrapy_maintext.state.crawl_state.CrawlState` of their crawler,
opened by whichever asks first (:func:`crawl_state_of`) and closed when the spider closes.
Writes are gathered for ``CRAWL_STATE_COMMIT_DELAY`` seconds into one commit, off the
path of every page; a page's row is written only once its document is exported (or it was
decided otherwise), so a killed run loses nothing, and re-exports at most what it wrote in
its last fraction of a second. A state that cannot be written (a full disk) stops the crawl
at once and keeps nothing of the open transaction: it never claims more than was written,
and the next run fetches what this one could not record.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.reactor import CallLaterOnce
from scrapy_maintext.discovery.urls import normalize_url
from scrapy_maintext.logformatter import REPORT
from scrapy_maintext.report.losses import write_failed
from scrapy_maintext.state.crawl_state import CrawlStateError, open_state
from scrapy_maintext.state.recrawl_discovery import NotDueDocuments
from scrapy_maintext.state.schedule import (
    Clock,
    Hints,
    Schedule,
    SchedulePolicy,
    parse_now,
    response_freshness,
)
from scrapy_maintext.state.store import StateStore, StateUnavailable, UrlRecord
from scrapy_maintext.state.validators import http_date_to_epoch
from scrapy_maintext.vocabulary.names import Meta, Signal, Stat
from scrapy_maintext.vocabulary.reasons import RecrawlOutcome
from scrapy_maintext.vocabulary.settings import setting

logger = logging.getLogger(__name__)

_OPEN: weakref.WeakKeyDictionary[Crawler, Recrawl] = weakref.WeakKeyDictionary()
#: What a failed write of either backend raises.
WRITE_ERRORS = (sqlite3.Error, StateUnavailable)
#: Stats of the damaged keys a state skipped, and the state's attribute holding them.
_SKIPPED = {
    Stat.RECRAWL_STATE_ROWS_SKIPPED: "skipped",
    Stat.RECRAWL_STATE_KEYS_SKIPPED: "skipped_keys",
}


@dataclass(frozen=True)
class RecrawlSettings:
    """``CRAWL_STATE*`` settings."""

    #: The SQLite file, or (with ``redis_url``) the name of a state kept in Redis.
    path: str
    #: ``REDIS_URL``: the crawl state is kept in that Redis, shared by the crawl's workers.
    redis_url: str
    commit_delay: float
    schedule: SchedulePolicy
    #: ``RECRAWL_NOW``: the time the run starts at, for simulations (None: the real clock).
    start: float | None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RecrawlSettings:
        return cls.from_settings(crawler.settings)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RecrawlSettings:
        """The settings, or ValueError naming a bad one (the crawl command says it first)."""
        return cls(
            path=setting(settings, "CRAWL_STATE"),
            redis_url=setting(settings, "REDIS_URL"),
            commit_delay=setting(settings, "CRAWL_STATE_COMMIT_DELAY"),
            schedule=SchedulePolicy(
                setting(settings, "RECRAWL_SCHEDULE"),
                setting(settings, "RECRAWL_MIN_INTERVAL"),
                setting(settings, "RECRAWL_MAX_INTERVAL"),
            ),
            start=parse_now(setting(settings, "RECRAWL_NOW")),
        )


class Recrawl:
    """A crawl's open state, its commits and its outcome counts."""

    def __init__(self, crawler: Crawler, state: StateStore, config: RecrawlSettings) -> None:
        self.crawler = crawler
        self.state = state
        self.config = config
        self.clock = Clock(config.start)
        #: When each URL is due again (adaptive revisits).
        self.schedule = Schedule(state, config.schedule, self.clock)
        self._commit_later = CallLaterOnce(self._commit)
        #: Outcomes not told to the crawl report yet (told at each commit: one signal per
        #: site and outcome instead of one per page).
        self._untold: Counter[tuple[str, str]] = Counter()
        #: Records looked up for page requests in flight, until their item is judged (one
        #: query per page instead of two); pages that fail take theirs out.
        self.looked_up: dict[str, UrlRecord | None] = {}
        #: The state could not be written: nothing more is, and nothing is committed.
        self.broken = False
        #: Pages (URLs) written since the last commit, and those whose outcome the state
        #: could not record (``recrawl/state_writes_lost`` counts pages, not writes).
        self._window: set[str] = set()
        self._lost: set[str] = set()
        #: Pages the state knows, as read at the last flush (None: it could not be read).
        self.known: int | None = None
        #: Sitemaps and feeds not read because they were not due (said once, at the end).
        self.not_due = NotDueDocuments()
        crawler.signals.connect(self._closed, signal=signals.spider_closed)

    def outcome(self, site: str, outcome: RecrawlOutcome, count: int = 1) -> None:
        """Count a page outcome in the ``recrawl/`` stats and tell the crawl report."""
        if count <= 0:
            return
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(Stat.RECRAWL + outcome, count)
        self._untold[(site, outcome)] += count
        self._commit_later.schedule(self.config.commit_delay)

    def flush(self) -> None:
        """Commit now and tell the crawl report every outcome so far (before it reports)."""
        self._commit_later.cancel()
        self._commit()
        if self.broken:
            self.known = None  # not asked again: what this run wrote is not all there
        else:
            self._count_state()

    def _commit(self) -> None:
        if self.broken:
            return
        pending = self.state.pending
        try:
            self.state.commit()
        except WRITE_ERRORS as exc:
            self._failed(exc, pending)
            return
        self._window.clear()
        untold, self._untold = self._untold, Counter()
        for (site, outcome), count in untold.items():
            self.crawler.signals.send_catch_log(
                signal=Signal.RECRAWL_OUTCOME, site=site, outcome=outcome, count=count
            )

    def record_of(self, url: str) -> UrlRecord | None:
        """The state's record of ``url``, taken from those looked up for requests in flight."""
        if url in self.looked_up:
            return self.looked_up.pop(url)
        return self.state.get(url)

    def exported_fingerprint(self, url: str) -> str | None:
        """The near-duplicate fingerprint ``url`` was last exported with (the request's record
        is read, not taken: the recrawl stage takes it later)."""
        record = self.looked_up[url] if url in self.looked_up else self.state.get(url)
        if record is None:
            canonical = normalize_url(url)
            if canonical and canonical != url:
                record = self.looked_up.get(canonical) or self.state.get(canonical)
        return record.fingerprint if record is not None else None

    def visited(self, url: str, response: Response | None, changed: bool) -> None:
        """A page was visited: its next due time, with the hints of its response (its
        sitemap ``changefreq``, ``Cache-Control``/``Expires``, ``Last-Modified``)."""
        meta = getattr(getattr(response, "request", None), "meta", None) or {}
        hints = Hints(change_period=meta.get(Meta.CHANGE_PERIOD))
        modified = None
        if response is not None:
            hints = hints.with_fresh_for(response_freshness(response.headers, self.clock.now()))
            modified = http_date_to_epoch(response.headers.get("Last-Modified"))
        self.schedule.visited(url, changed, hints, modified)

    def inc_stat(self, name: str, count: int = 1) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(name, count)

    def write(self, action: Callable[..., None], *args: Any) -> None:
        """``action(*args)``, a write to the state, committed soon with the others of the
        next moments; a state that cannot take it stops the crawl."""
        page = args[0] if args and isinstance(args[0], str) else None
        if page is not None:
            self._window.add(page)
        if self.broken:
            self._count_lost(0)
            return
        try:
            action(*args)
        except WRITE_ERRORS as exc:
            self._failed(exc, self.state.pending + 1)
            return
        self._commit_later.schedule(self.config.commit_delay)

    def _failed(self, exc: Exception, pending: int) -> None:
        """The open transaction is given up (none of it counts), and the crawl stops."""
        self.broken = True
        self._commit_later.cancel()
        self._count_lost(pending)
        self.state.abandon()
        # A Redis that stopped answering is named as such (once, whichever component
        # found it first), not as the state.
        what = getattr(exc, "what", "") or f"crawl state {self.state.path}"
        write_failed(self.crawler, what, exc)

    def _count_lost(self, pending: int) -> None:
        """The pages written since the last commit are lost (at least one if writes were)."""
        self._lost |= self._window
        self._window.clear()
        count = max(len(self._lost), 1 if pending else 0)
        if self.crawler.stats is not None and count:
            self.crawler.stats.set_value(Stat.RECRAWL_STATE_WRITES_LOST, count)

    def _count_state(self) -> None:
        """The ``recrawl/`` counts of the state itself (pages known, damaged keys skipped),
        set at each flush: the crawl report reads them before the state closes."""
        self.known = None
        with contextlib.suppress(*WRITE_ERRORS):
            self.known = self.state.known_pages()
        stats = self.crawler.stats
        if stats is None:
            return
        if self.known is not None:
            stats.set_value(Stat.RECRAWL_KNOWN, self.known)
            reached = end_counts(stats.get_stats()).total
            stats.set_value(Stat.RECRAWL_NOT_REACHED, self.known - reached)
        for name, attribute in _SKIPPED.items():
            skipped = len(getattr(self.state, attribute, ()))
            if skipped:
                stats.set_value(name, skipped)

    def _closed(self, spider: Any = None, reason: str = "") -> None:
        self.flush()
        with contextlib.suppress(*WRITE_ERRORS):
            self.state.close()
        _OPEN.pop(self.crawler, None)
        stats = self.crawler.stats
        counts = end_counts(stats.get_stats() if stats is not None else {})
        # In a shared crawl this worker's outcomes are its own: the rest of the known pages
        # may have been decided by the other workers.
        rest = "decided by other workers or not reached" if self.config.redis_url else "not reached"
        logger.info(
            "Recurring crawl: %s known pages: %d new or changed, %d unchanged, %d behind "
            "unchanged sitemaps or feeds, %d gone, %d not due, %s %s (state %s)",
            "an unknown number of" if self.known is None else str(self.known),
            counts.fresh,
            counts.unchanged,
            counts.behind,
            counts.gone,
            counts.not_due,
            "?" if self.known is None else str(self.known - counts.total),
            rest,
            self.state.path,
            extra=REPORT,
        )
        not_due = self.not_due.line(self.config.schedule.min_interval)
        if not_due:
            logger.info("%s", not_due, extra=REPORT)


@dataclass(frozen=True)
class EndCounts:
    """A run's page outcomes as the end line groups them (each page counted once)."""

    fresh: int
    #: Fetched with the same text, answered 304, or skipped by its listed date.
    unchanged: int
    behind: int
    gone: int
    not_due: int

    @property
    def total(self) -> int:
        return self.fresh + self.unchanged + self.behind + self.gone + self.not_due


def end_counts(stats: dict[str, Any]) -> EndCounts:
    """The end line's groups, from the ``recrawl/`` stats."""

    def get(*names: str) -> int:
        return sum(int(stats.get(name, 0)) for name in names)

    return EndCounts(
        fresh=get(Stat.RECRAWL_NEW, Stat.RECRAWL_CHANGED),
        unchanged=get(
            Stat.RECRAWL_UNCHANGED, Stat.RECRAWL_NOT_MODIFIED, Stat.RECRAWL_SKIPPED_BY_DATE
        ),
        behind=get(Stat.RECRAWL_BEHIND_UNCHANGED),
        gone=get(Stat.RECRAWL_GONE),
        not_due=get(Stat.RECRAWL_NOT_DUE),
    )


def crawl_state_of(crawler: Crawler) -> Recrawl | None:
    """The crawl's open state (opened on the first call), or None without ``CRAWL_STATE``.

    Raises :class:`~scrapy_maintext.state.crawl_state.CrawlStateError` when the file cannot
    be used (the crawl command checks it first and says so in one line)."""
    found = _OPEN.get(crawler)
    if found is not None:
        return found
    config = RecrawlSettings.from_crawler(crawler)
    if not config.path:
        return None
    recrawl = Recrawl(crawler, open_configured(crawler.settings, config, crawler), config)
    _OPEN[crawler] = recrawl
    return recrawl


def open_configured(
    settings: BaseSettings, config: RecrawlSettings, crawler: Crawler | None = None
) -> StateStore:
    """The SQLite file ``CRAWL_STATE``, or with ``REDIS_URL`` the state of that name kept
    in Redis (scrapy-redis's connection settings: ``REDIS_URL``, ``REDIS_PARAMS``; the
    crawl's deadline and breaker with ``crawler``). Raises
    :class:`~scrapy_maintext.state.crawl_state.CrawlStateError` when it cannot be used."""
    if not config.redis_url:
        return open_state(config.path)
    from scrapy_maintext.distributed.connection import crawl_client, redis_client
    from scrapy_maintext.state.redis.state import RedisCrawlState

    where = redact_url(config.redis_url)
    try:
        client = crawl_client(crawler) if crawler is not None else redis_client(settings)
    except ValueError as exc:
        raise CrawlStateError(f"crawl state {config.path}: {exc}") from None
    return RedisCrawlState(client, config.path, where)


def redact_url(url: str) -> str:
    """A Redis URL without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        rest = "***@" + rest.split("@", 1)[1]
    return f"{scheme}{sep}{rest}"
