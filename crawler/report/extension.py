"""``CrawlReport``: progress lines while a crawl runs and a per-site report at its end.

Every ``CRAWL_REPORT_INTERVAL`` seconds, one INFO line per active site (planned, fetched,
extracted, dropped, ETA); at the end, a table per site (planned, fetched, skipped by reason,
extracted by engine, dropped by reason, mean text length), also written as JSON to
``CRAWL_REPORT``. Sites are the discovery spiders' sites, else the host of each URL.

The discovery spiders plan their pages; for a spider without a plan of its own (a
project's spider using the add-on), every page it fetched counts as planned, so that
planned, fetched and extracted make one funnel. The report's lines are marked for the short
console of ``maintext crawl`` (:mod:`scrapy_maintext.logformatter`): progress lines show
without ``-v``, the report at every log level.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Request, Response
from scrapy.settings import BaseSettings
from scrapy_maintext.logformatter import PROGRESS, REPORT
from scrapy_maintext.vocabulary.names import Meta, Signal
from scrapy_maintext.vocabulary.reasons import drop_reason
from scrapy_maintext.vocabulary.settings import setting
from twisted.internet import task

logger = logging.getLogger(__name__)

#: Meta keys of requests that are not pages: sitemaps and feeds (``skip_url_filter``),
#: a spider's robots.txt, and Scrapy's own robots.txt download (``dont_obey_robotstxt``).
DISCOVERY_META_KEYS = (Meta.SKIP_URL_FILTER, Meta.ROBOTS_DISCOVERY, "dont_obey_robotstxt")


@dataclass(frozen=True)
class ReportSettings:
    """The ``CRAWL_REPORT*`` settings (defaults in :mod:`scrapy_maintext.vocabulary.settings`)."""

    enabled: bool
    #: Seconds between progress lines; 0 turns them off (the final report stays).
    interval: float
    #: Where to write the final report as JSON ("" for nowhere).
    path: str
    #: Scrapy's JOBDIR ("" without): where a stopped crawl keeps what is left.
    jobdir: str

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ReportSettings:
        return cls(
            enabled=setting(settings, "CRAWL_REPORT_ENABLED"),
            interval=setting(settings, "CRAWL_REPORT_INTERVAL"),
            path=setting(settings, "CRAWL_REPORT"),
            jobdir=settings.get("JOBDIR") or "",
        )


@dataclass
class SiteReport:
    """What happened to one site's pages."""

    site: str
    planned: int = 0
    fetched: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    extracted: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    #: URLs discovery found but did not plan (off-site, older than ``since``, ...).
    not_planned: Counter[str] = field(default_factory=Counter)
    text_chars: int = 0
    failure: str | None = None
    #: Recurring crawl (``CRAWL_STATE``): pages by outcome (new, changed, unchanged, ...).
    recrawl: Counter[str] = field(default_factory=Counter)
    first_seen: float = field(default_factory=time.monotonic)

    @property
    def done(self) -> int:
        return (
            sum(self.extracted.values()) + sum(self.dropped.values()) + sum(self.skipped.values())
        )

    def mean_text_length(self) -> int:
        count = sum(self.extracted.values())
        return round(self.text_chars / count) if count else 0

    def eta_seconds(self, now: float) -> float | None:
        remaining = self.planned - self.done
        elapsed = now - self.first_seen
        if remaining <= 0 or self.done == 0 or elapsed <= 0:
            return None
        return remaining * elapsed / self.done

    def to_dict(self) -> dict[str, Any]:
        counters = ("skipped", "extracted", "dropped", "not_planned", "recrawl")
        data: dict[str, Any] = {
            "site": self.site,
            "planned": self.planned,
            "fetched": self.fetched,
            **{name: dict(sorted(getattr(self, name).items())) for name in counters},
            "mean_text_length": self.mean_text_length(),
            "failure": self.failure,
        }
        return data


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def site_of_request(request: Request | None, url: str = "") -> str:
    """The spider's site (meta ``site``), else scheme and host of the URL."""
    if request is not None and request.meta.get(Meta.SITE):
        return str(request.meta[Meta.SITE])
    parts = urlsplit(url or (request.url if request is not None else ""))
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else "-"


def _is_discovery(request: Request) -> bool:
    return any(request.meta.get(key) for key in DISCOVERY_META_KEYS)


def spider_plan(spider: Spider | None) -> Mapping[str, Any] | None:
    """The discovery spiders' sites (base URL to a state with ``scheduled`` pages and a
    ``failure``), or None for a spider without a plan of its own."""
    sites = getattr(spider, "sites", None)
    if not isinstance(sites, Mapping):
        return None
    if not all(hasattr(state, "scheduled") for state in sites.values()):
        return None
    return sites


class CrawlReport:
    """Extension: progress lines per site while crawling, a per-site report at the end."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = ReportSettings.from_settings(crawler.settings)
        if not self.config.enabled:
            raise NotConfigured("CRAWL_REPORT_ENABLED is off")
        self.sites: dict[str, SiteReport] = {}
        self.loop: task.LoopingCall | None = None
        #: Whether the spider plans its pages (else fetched pages count as planned).
        self.spider_plans = False
        self._last_line: dict[str, tuple[int, int]] = {}
        connect = crawler.signals.connect
        connect(self.spider_opened, signal=signals.spider_opened)
        connect(self.spider_closed, signal=signals.spider_closed)
        connect(self.response_received, signal=signals.response_received)
        connect(self.item_scraped, signal=signals.item_scraped)
        connect(self.item_dropped, signal=signals.item_dropped)
        connect(self.page_skipped, signal=Signal.PAGE_SKIPPED)
        connect(self.recrawl_outcome, signal=Signal.RECRAWL_OUTCOME)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlReport:
        return cls(crawler)

    def site(self, key: str) -> SiteReport:
        if key not in self.sites:
            self.sites[key] = SiteReport(key)
        return self.sites[key]

    def spider_opened(self, spider: Spider) -> None:
        self.spider_plans = spider_plan(spider) is not None
        if self.config.interval > 0:
            self.loop = task.LoopingCall(self.log_progress)
            self.loop.start(self.config.interval, now=False)

    def response_received(self, response: Response, request: Request, spider: Spider) -> None:
        if _is_discovery(request):
            return
        report = self.site(site_of_request(request))
        report.fetched += 1
        if not self.spider_plans:
            report.planned += 1

    def item_scraped(self, item: Any, response: Response, spider: Spider) -> None:
        report = self.site(site_of_request(getattr(response, "request", None), response.url))
        get = item.get if hasattr(item, "get") else lambda key: None
        report.extracted[str(get("extractor") or "none")] += 1
        text = get("text")
        report.text_chars += len(text) if isinstance(text, str) else 0

    def item_dropped(
        self, item: Any, response: Response | None, exception: BaseException, spider: Spider
    ) -> None:
        request = getattr(response, "request", None)
        url = response.url if response is not None else ""
        self.site(site_of_request(request, url)).dropped[drop_reason(exception)] += 1

    def page_skipped(self, site: str, reason: str, count: int = 1, planned: bool = True) -> None:
        report = self.site(site)
        (report.skipped if planned else report.not_planned)[reason] += count

    def recrawl_outcome(self, site: str, outcome: str, count: int = 1) -> None:
        self.site(site).recrawl[outcome] += count

    def _sync_with_spider(self) -> None:
        """Planned pages and failures of the discovery spiders' sites."""
        for key, state in (spider_plan(self.crawler.spider) or {}).items():
            report = self.site(key)
            report.planned = len(getattr(state, "scheduled", ()))
            report.failure = getattr(state, "failure", None)

    def log_progress(self) -> None:
        self._sync_with_spider()
        now = time.monotonic()
        for key, report in self.sites.items():
            state = (report.done, report.fetched)
            if report.failure or self._last_line.get(key) == state:
                continue
            self._last_line[key] = state
            logger.info(
                "Progress %s: %d of %d planned pages done (fetched %d, extracted %d, "
                "dropped %d, skipped %d), ETA %s",
                key,
                report.done,
                report.planned,
                report.fetched,
                sum(report.extracted.values()),
                sum(report.dropped.values()),
                sum(report.skipped.values()),
                format_seconds(report.eta_seconds(now)),
                extra=PROGRESS,
            )

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        self._sync_with_spider()
        logger.info("%s", format_report(self.sites, reason), extra=REPORT)
        if reason == "shutdown":
            self._log_resume_hint()
        if self.config.path:
            self._write_json(reason)

    def _write_json(self, reason: str) -> None:
        data = {"reason": reason, "sites": [r.to_dict() for r in self.sites.values()]}
        path = Path(self.config.path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
        except OSError as exc:
            logger.error("Crawl report not written to %s: %s", path, exc)
            return
        logger.info("Crawl report written to %s", path, extra=REPORT)

    def _log_resume_hint(self) -> None:
        left = sum(max(r.planned - r.done, 0) for r in self.sites.values() if not r.failure)
        jobdir = self.config.jobdir
        if jobdir:
            logger.info(
                "Stopped early: %d planned pages not done yet are kept in JOBDIR %s; "
                "run the same command again to resume",
                left,
                jobdir,
                extra=REPORT,
            )
        else:
            logger.warning(
                "Stopped early: %d planned pages not done; without JOBDIR nothing is kept "
                "(add -s JOBDIR=DIR to make a crawl resumable)",
                left,
            )


_COLUMNS = ("planned", "fetched", "extracted", "dropped", "skipped", "mean chars")


def format_report(sites: dict[str, SiteReport], reason: str) -> str:
    """The end-of-crawl table: one row per site, then its reasons on an indented line."""
    width = max([len("site"), *(len(key) for key in sites)])
    header = f"{'site':<{width}}  " + "  ".join(f"{c:>10}" for c in _COLUMNS)
    lines = [f"Crawl report ({len(sites)} sites, finished: {reason})", header]
    for key, r in sites.items():
        numbers = (
            r.planned,
            r.fetched,
            sum(r.extracted.values()),
            sum(r.dropped.values()),
            sum(r.skipped.values()),
            r.mean_text_length(),
        )
        lines.append(f"{key:<{width}}  " + "  ".join(f"{n:>10}" for n in numbers))
        details = [f"not crawled: {r.failure}"] if r.failure else []
        for label, counter in (
            ("by", r.extracted),
            ("dropped", r.dropped),
            ("skipped", r.skipped),
            ("not planned", r.not_planned),
            ("recrawl", r.recrawl),
        ):
            if counter:
                details.append(
                    f"{label} " + ", ".join(f"{k} {v}" for k, v in counter.most_common())
                )
        if details:
            lines.append(" " * 4 + "; ".join(details))
    return "\n".join(lines)
