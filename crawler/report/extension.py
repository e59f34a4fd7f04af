"""``CrawlReport``: progress lines while a crawl runs and a per-site report at its end.

Every ``CRAWL_REPORT_INTERVAL`` seconds, one INFO line per active site (planned, fetched,
extracted, dropped, ETA); at the end, a table per site (planned, fetched, skipped by reason,
extracted by engine, dropped by reason, mean text length), also written to ``CRAWL_REPORT``:
JSON, or for a ``.html`` path one standalone HTML page with plots (:mod:`.html`). The numbers
are those of :mod:`.sites`; this module only feeds them from Scrapy's signals, also when the
crawl stops early (Ctrl-C, ``CLOSESPIDER_*``, errors: Scrapy closes the spider all the same).
Sites are the discovery spiders' sites, else the host of each URL.

The discovery spiders plan their pages; for a spider without a plan of its own (a
project's spider using the add-on), every page it fetched counts as planned, so that
planned, fetched and extracted make one funnel. The report's lines are marked for the short
console of ``maintext crawl`` (:mod:`scrapy_maintext.logformatter`): progress lines show
without ``-v``, the report at every log level.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy_maintext import scrapy_internals
from scrapy_maintext.logformatter import PROGRESS, REPORT
from scrapy_maintext.report.broad import (
    SiteProgress,
    discovery_problems,
    progress_line,
    summary,
)
from scrapy_maintext.report.files import check_report_path, write_report
from scrapy_maintext.report.header import command_line, run_header, shown_settings
from scrapy_maintext.report.sites import (
    NetlocIndex,
    RunReport,
    SiteReport,
    engine_of,
    site_of_url,
)
from scrapy_maintext.report.table import format_report, format_seconds
from scrapy_maintext.vocabulary.names import Meta, Signal, Stat
from scrapy_maintext.vocabulary.reasons import DropReason, drop_reason, switched_off
from scrapy_maintext.vocabulary.settings import setting
from twisted.internet import task, threads

__all__ = ["CrawlReport", "ReportSettings", "SiteReport", "format_report", "format_seconds"]

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
    #: Where to write the final report: JSON, or HTML for ``.html`` ("" for nowhere).
    path: str
    #: Scrapy's JOBDIR ("" without): where a stopped crawl keeps what is left.
    jobdir: str
    #: Sites above which progress and the end table are for the whole crawl.
    broad_sites: int

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ReportSettings:
        """The settings; ValueError (one line) when ``CRAWL_REPORT`` cannot be written, so
        that a crawl never starts that would find it only at its end."""
        config = cls(
            enabled=setting(settings, "CRAWL_REPORT_ENABLED"),
            interval=setting(settings, "CRAWL_REPORT_INTERVAL"),
            path=setting(settings, "CRAWL_REPORT"),
            jobdir=settings.get("JOBDIR") or "",
            broad_sites=setting(settings, "CRAWL_REPORT_BROAD_SITES"),
        )
        if config.enabled and config.path:
            check_report_path(config.path)
        return config


def _family(stats: Mapping[str, Any], prefix: str) -> dict[str, int]:
    """The counts of a stat family (``prefix`` + key), by key."""
    return {
        name.removeprefix(prefix): int(value)
        for name, value in stats.items()
        if name.startswith(prefix) and isinstance(value, (int, float))
    }


def site_of_request(request: Request | None, url: str = "") -> str:
    """The spider's site (meta ``site``), else scheme and host of the URL."""
    if request is not None and request.meta.get(Meta.SITE):
        return str(request.meta[Meta.SITE])
    return site_of_url(url or (request.url if request is not None else ""))


def spider_name(crawler: Crawler) -> str:
    return str(getattr(crawler.spider, "name", "") or "")


def _is_discovery(request: Request) -> bool:
    return any(request.meta.get(key) for key in DISCOVERY_META_KEYS)


def spider_plan(spider: Spider | None) -> Mapping[str, Any] | None:
    """The discovery spiders' sites (base URL to a state with ``scheduled`` pages and a
    ``failure``), or None for a spider without a plan of its own."""
    sites = getattr(spider, "sites", None)
    if not isinstance(sites, Mapping):
        return None
    # One site says it: a spider's sites are all of one kind, and this is asked per
    # download (a scan of every site made a broad crawl's report quadratic in its sites).
    first = next(iter(sites.values()), None)
    if first is not None and not hasattr(first, "scheduled"):
        return None
    return sites


class CrawlReport:
    """Extension: progress lines per site while crawling, a per-site report at the end."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = ReportSettings.from_settings(crawler.settings)
        if not self.config.enabled:
            raise switched_off("CrawlReport", "CRAWL_REPORT_ENABLED is off")
        self.run = RunReport()
        self.model_versions: Counter[str] = Counter()
        self.loop: task.LoopingCall | None = None
        #: Whether the spider plans its pages (else fetched pages count as planned).
        self.spider_plans = False
        self._last_line: dict[str, tuple[int, int]] = {}
        #: Pages done and when, at the last whole-crawl progress line (pages/s between).
        self._last_total = (0, time.monotonic())
        #: Downloads already counted when their headers came (ids of their requests).
        self._counted: set[int] = set()
        self._netlocs = NetlocIndex()
        connect = crawler.signals.connect
        connect(self.spider_opened, signal=signals.spider_opened)
        connect(self.spider_closed, signal=signals.spider_closed)
        connect(self.response_received, signal=signals.response_received)
        connect(self.headers_received, signal=signals.headers_received)
        connect(self.request_left_downloader, signal=signals.request_left_downloader)
        connect(self.item_scraped, signal=signals.item_scraped)
        connect(self.item_dropped, signal=signals.item_dropped)
        connect(self.page_skipped, signal=Signal.PAGE_SKIPPED)
        connect(self.recrawl_outcome, signal=Signal.RECRAWL_OUTCOME)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlReport:
        return cls(crawler)

    @property
    def sites(self) -> dict[str, SiteReport]:
        return self.run.sites

    def site(self, key: str) -> SiteReport:
        return self.run.site(key)

    def spider_opened(self, spider: Spider) -> None:
        self.spider_plans = spider_plan(spider) is not None
        if self.config.interval > 0:
            self.loop = task.LoopingCall(self.log_progress)
            self.loop.start(self.config.interval, now=False)

    def response_received(self, response: Response, request: Request, spider: Spider) -> None:
        if _is_discovery(request):
            return
        report = self.site(site_of_request(request))
        if request.meta.get(Meta.RENDER) is not None:
            # The page's render (issue 46): fetched already, counted apart.
            report.rendered += 1
            report.render_seconds += float(request.meta.get("download_latency") or 0.0)
            return
        report.fetched += 1
        report.statuses[str(response.status)] += 1
        if not self.spider_plans:
            report.planned += 1

    def headers_received(
        self, headers: Any, body_length: Any, request: Request, spider: Spider
    ) -> None:
        """A download, at the time it was sent: now less its download latency, which Scrapy
        has just measured (monotonic) in the same callback chain, so a busy reactor does not
        shift it."""
        latency = request.meta.get("download_latency")
        if isinstance(latency, (int, float)):
            self._counted.add(id(request))
            self._add_download(request, time.monotonic() - latency)

    def request_left_downloader(self, request: Request, spider: Spider) -> None:
        """Every download (pages, robots.txt, sitemaps, retries); those without headers
        (timeouts, refused connections) are counted now, when they ended, and left out of
        the site's gaps (their send time is not known)."""
        if id(request) in self._counted:
            self._counted.discard(id(request))
            return
        self._add_download(request, time.monotonic(), exact=False)

    def _add_download(self, request: Request, sent: float, exact: bool = True) -> None:
        key = self._site_of_download(request)
        self.run.add_request(key, sent, exact)
        slot_key = scrapy_internals.slot_key(self.crawler, request)
        slot = scrapy_internals.live_slot(self.crawler, slot_key)
        if slot is not None:
            self.site(key).delay = slot.delay

    def _site_of_download(self, request: Request) -> str:
        """The site of a download; a request without a site (Scrapy's own robots.txt)
        belongs to the known site of its host, if there is one."""
        key = site_of_request(request)
        if key in self.sites or request.meta.get(Meta.SITE):
            return key
        netloc = urlsplit(request.url).netloc
        return self._netlocs.known(netloc, self.sites, spider_plan(self.crawler.spider)) or key

    def item_scraped(self, item: Any, response: Response | None, spider: Spider) -> None:
        get = item.get if hasattr(item, "get") else lambda key: None
        # An item a spider yields from start() has no response.
        url = response.url if response is not None else str(get("url") or "")
        report = self.site(site_of_request(getattr(response, "request", None), url))
        version = get("model_version")
        if version:
            self.model_versions[str(version)] += 1
        engine = engine_of(get("extractor"), version)
        report.add_document(engine, get("text"), get("language"), get("date"), get("page_type"))

    def item_dropped(
        self, item: Any, response: Response | None, exception: BaseException, spider: Spider
    ) -> None:
        reason = drop_reason(exception)
        if reason == DropReason.STOPPING:
            return  # not done: left for a resumed crawl, like the requests still queued
        request = getattr(response, "request", None)
        url = response.url if response is not None else ""
        self.site(site_of_request(request, url)).dropped[reason] += 1

    def page_skipped(self, site: str, reason: str, count: int = 1, planned: bool = True) -> None:
        report = self.site(site)
        (report.skipped if planned else report.not_planned)[reason] += count

    def recrawl_outcome(self, site: str, outcome: str, count: int = 1) -> None:
        self.site(site).recrawl[outcome] += count

    def _sync_with_spider(self) -> None:
        """Planned pages and failures of the discovery spiders' sites."""
        for key, state in (spider_plan(self.crawler.spider) or {}).items():
            report = self.site(key)
            count = getattr(state, "planned_count", None)
            report.planned = count() if callable(count) else len(getattr(state, "scheduled", ()))
            report.failure = getattr(state, "failure", None)

    def is_broad(self) -> bool:
        return len(self.sites) > self.config.broad_sites

    def log_progress(self) -> None:
        self._sync_with_spider()
        if self.is_broad():
            self._log_crawl_progress()
            return
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

    def _log_crawl_progress(self) -> None:
        """One line for the whole crawl and its slowest sites (a broad crawl)."""
        now = time.monotonic()
        plan = spider_plan(self.crawler.spider) or {}
        sites = [
            SiteProgress(
                site=key,
                planned=report.planned,
                done=report.done,
                failed=report.failure is not None,
                started=report.requests > 0,
                discovering=getattr(plan.get(key), "outstanding", 0) > 0,
                eta_seconds=report.eta_seconds(now),
            )
            for key, report in self.sites.items()
        ]
        pages = sum(s.done for s in sites)
        last_pages, last_time = self._last_total
        rate = (pages - last_pages) / (now - last_time) if now > last_time else 0.0
        self._last_total = (pages, now)
        message, args = progress_line(sites, rate, format_seconds)
        logger.info(message, *args, extra=PROGRESS)

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        self._sync_with_spider()
        if self.is_broad():
            sites = [report.to_dict() for report in self.sites.values()]
            stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
            text = summary(sites, reason, self._full_table(), discovery_problems(stats))
            logger.info("%s", text, extra=REPORT)
        else:
            logger.info("%s", format_report(self.sites, reason), extra=REPORT)
        if reason == "shutdown":
            self._log_resume_hint()
        if not self.config.path:
            return
        data = self.report_data(reason)
        # Drawing the HTML page's plots takes a second: off the reactor thread.
        await maybe_deferred_to_future(threads.deferToThread(self._write, data))

    def report_data(self, reason: str) -> dict[str, Any]:
        """The JSON report: the sites' numbers, the run's header, recrawl outcomes."""
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        self.run.recrawl = _family(stats, Stat.RECRAWL)
        self.run.repaired = Counter(_family(stats, Stat.EXTRACT_REPAIRED))
        model = self.model_versions.most_common(1)[0][0] if self.model_versions else None
        self.run.header = run_header(
            shown_settings(self.crawler.settings),
            model,
            command_line(spider=spider_name(self.crawler)),
        )
        return self.run.to_dict(reason)

    def _write(self, data: dict[str, Any]) -> None:
        path = self.config.path
        try:
            write_report(data, path)
        except OSError as exc:
            self._not_written(path, exc)
            return
        except Exception as exc:  # a plot that cannot be drawn must not lose the numbers
            fallback = Path(path).with_suffix(".json")
            logger.error(
                "Crawl report not drawn (%s: %s); its JSON goes to %s",
                type(exc).__name__,
                exc,
                fallback,
            )
            self._write_json_fallback(data, fallback)
            return
        logger.info("Crawl report written to %s", path, extra=REPORT)

    def _write_json_fallback(self, data: dict[str, Any], path: Path) -> None:
        try:
            write_report(data, path)
        except OSError as exc:
            self._not_written(path, exc)

    def _not_written(self, path: str | Path, exc: OSError) -> None:
        """Said, and counted: the crawl's exit status is then 1 (``commands/crawl.py``)."""
        logger.error("Crawl report not written to %s: %s", path, exc)
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(Stat.REPORT_ERRORS)

    def _full_table(self) -> str:
        if self.config.path:
            return f"the report {self.config.path}"
        return "add -s CRAWL_REPORT=report.html (or .json) for the table of every site"

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
