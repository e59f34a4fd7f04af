"""What the sitemap and feed spiders share: arguments, the crawl plan, pages and errors."""

from __future__ import annotations

import functools
import logging
import math
import uuid
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy_maintext.discovery.plan import Candidate, CrawlPlan
from scrapy_maintext.discovery.urls import UrlPolicy
from scrapy_maintext.discovery.window import SiteWindow
from scrapy_maintext.logformatter import PROGRESS
from scrapy_maintext.spiders.args import (
    ARGUMENT_FORMS,
    SpiderArguments,
    parse_arguments,
)
from scrapy_maintext.spiders.failures import failure_reason
from scrapy_maintext.spiders.page_flow import PageFlow
from scrapy_maintext.spiders.sites import (
    DiscoverySettings,
    SiteState,
    base_url_of,
)
from scrapy_maintext.state.page_journal import PageJournal
from scrapy_maintext.vocabulary.names import Meta, Signal, Stat
from scrapy_maintext.vocabulary.reasons import (
    NotModified,
    SkipReason,
)
from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: Discovery requests (robots.txt, sitemaps, feeds) go before pages, so that the whole
#: plan is known, and sorted newest first, before the first page is fetched.
DISCOVERY_PRIORITY = 1_000_000
#: A discovery callback's work: parse one response of a site, yield further requests.
DiscoveryStep = Callable[["SiteState", Response], Iterator[scrapy.Request]]
#: CONCURRENT_ITEMS of these spiders (Scrapy's default: 100). Scrapy starts that many tasks
#: for every response, whatever it yields; a page yields one item (plus its links when
#: exploring), so 100 tasks cost the crawl process about 2 ms of CPU per page, a fifth of
#: all it spends on a page (crawl process CPU per page, 2 workers: 9.2 and 10.0 ms with
#: 100, 7.2 and 8.0 with 1; ``python -m benchmarks.crawl_throughput --data ... -s
#: CONCURRENT_ITEMS=100``). A few keep a page's links moving while its item waits.
PAGE_CONCURRENT_ITEMS = 8


class DiscoverySpider(PageFlow, scrapy.Spider):
    """Base: parses the common ``-a`` arguments and turns finished plans into page requests.

    Every site (``domain``, several comma-separated, or ``domains_file``) gets its own plan,
    pruned and ordered on its own, and is crawled under its own politeness slot.
    """

    custom_settings: dict[str, Any] | None = {  # noqa: RUF012 -- Scrapy reads it as is
        # One queue per download slot, served by how busy each slot is: a big site's pages
        # cannot starve the other sites of a crawl. FIFO inside a slot keeps each site's
        # pages newest first without one priority value per page (with JOBDIR, every
        # priority value is a file kept open). Scrapy's DownloaderAwarePriorityQueue, with
        # its slots taken in turn instead of a scan of every site per request (issue 47).
        "SCHEDULER_PRIORITY_QUEUE": "scrapy_maintext.scrapy_internals.SlotRingPriorityQueue",
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        # Below the project's and the command line's: a project's own value wins.
        settings.set("CONCURRENT_ITEMS", PAGE_CONCURRENT_ITEMS, priority="addon")
        # Scrapy's check reads a callback's source again for nearly every response (its
        # cache is keyed by the bound method, new with every request): about 0.3 ms of the
        # crawl process per page, for callbacks that never return a value.
        settings.set("WARN_ON_GENERATOR_RETURN_VALUE", False, priority="addon")

    #: The ``-a`` arguments this spider takes, with their accepted forms.
    argument_forms: Mapping[str, str] = MappingProxyType(ARGUMENT_FORMS)

    def __init__(self, **kwargs: Any) -> None:
        arguments = self.check_arguments(kwargs)
        super().__init__()
        #: Base URLs of the sites named by ``domain``/``domains_file`` (not by feed URLs).
        self.named_sites = list(arguments.sites)
        self.feed_urls = list(arguments.feed_urls)
        feed_sites = [base_url_of(u) for u in self.feed_urls]
        self.plan_options = arguments.plan
        self.sites: dict[str, SiteState] = {}
        for base in dict.fromkeys(self.named_sites + feed_sites):
            policy = UrlPolicy.for_urls([base], allow_subdomains=arguments.subdomains)
            self.sites[base] = SiteState(base, CrawlPlan(policy, self.plan_options))
        self.url_policy = UrlPolicy.for_urls(list(self.sites), arguments.subdomains)
        self.explore = arguments.explore
        # Discovery requests of an interrupted earlier run may come back from a JOBDIR
        # queue; they must not disturb this run's count of outstanding discovery.
        self.run_id = uuid.uuid4().hex
        self.journal = PageJournal(None)
        #: The sites under way, when the spider starts them in turn (:meth:`open_window`).
        self.window: SiteWindow | None = None

    @classmethod
    def check_arguments(cls, kwargs: Mapping[str, Any]) -> SpiderArguments:
        """The ``-a`` arguments parsed, or :class:`SpiderArgumentError` naming the bad one.

        Run by ``scrapy crawl``/``maintext crawl`` before the crawl starts (so a typo
        costs one line and no output file), and again by ``__init__``.
        """
        return parse_arguments(kwargs, cls.argument_forms, cls.name)

    @functools.cached_property
    def discovery(self) -> DiscoverySettings:
        # Read once, on first use in a callback (settings are frozen by then).
        return DiscoverySettings.from_settings(self.settings)

    @functools.cached_property
    def html_as_bytes(self) -> bool:
        """Whether page items may carry ``response.body`` (see ``takes_body_bytes``)."""
        # Imported here: the pipeline module loads the extraction stack, which commands
        # that only list or check spiders do not need.
        from scrapy_maintext.pipelines.config import takes_body_bytes

        return takes_body_bytes(self.settings)

    @property
    def site_line(self) -> dict[str, Any]:
        """``extra`` of a per-site progress line: on the console unless the crawl is broad
        (the crawl report's one line speaks for every site then)."""
        return PROGRESS if len(self.sites) <= self.discovery.broad_sites else {}

    @property
    def site_warning(self) -> int:
        """Level of a warning about one site: INFO in a broad crawl, where the crawl report
        counts them (a line each for thousands of sites is not read), else WARNING."""
        return logging.WARNING if len(self.sites) <= self.discovery.broad_sites else logging.INFO

    def site_of(self, response_or_request: Response | scrapy.Request) -> SiteState:
        return self.sites[response_or_request.meta[Meta.SITE]]

    def inc_stat(self, key: str, count: int = 1) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(key, count)

    def discovery_request(
        self,
        site: SiteState,
        url: str,
        callback: Any,
        errback: Any = None,
        priority: int = DISCOVERY_PRIORITY,
        **meta: Any,
    ) -> scrapy.Request:
        """A robots.txt/sitemap/feed request: ahead of pages, counted until answered."""
        meta.update({Meta.SKIP_URL_FILTER: True, Meta.RUN: self.run_id, Meta.SITE: site.base_url})
        request = scrapy.Request(
            url,
            callback=callback,
            errback=errback or self.discovery_error,
            priority=priority,
            dont_filter=True,  # discovery re-runs when a JOBDIR crawl resumes
            meta=meta,
        )
        site.outstanding += 1
        return request

    def discovery_step(self, response: Response, step: DiscoveryStep) -> Iterator[scrapy.Request]:
        """Run one discovery callback's work; whatever happens, count the response as in."""
        if self.is_stale(response):
            return
        site = self.site_of(response)
        try:
            yield from step(site, response)
        except Exception:
            # A parser bug must not leave the site waiting forever for this response.
            self.inc_stat(Stat.DISCOVERY_ERRORS + "parse_exception")
            logger.exception("Discovery failed on %s", response.url)
        yield from self.discovery_done(site)

    def is_stale(self, request_or_response: scrapy.Request | Response) -> bool:
        """True for a discovery request (or its response) of an earlier, interrupted run."""
        return request_or_response.meta.get(Meta.RUN) != self.run_id

    def discovery_done(self, site: SiteState) -> Iterator[scrapy.Request]:
        """Call at the end of every discovery callback: schedules pages once all are in."""
        yield from self._discovery_answered(site)
        yield from self.site_progress(site)

    def _discovery_answered(self, site: SiteState) -> Iterator[scrapy.Request]:
        site.outstanding -= 1
        if site.outstanding > 0:
            return
        self.say_discovery_limits(site)
        for reason, count in site.plan.rejected.items():
            self.inc_stat(Stat.REJECTED + reason, count)
            self.report_skip(site.base_url, reason, count, planned=False)
        if site.plan.rejected.get("before_since"):
            site.incomplete = True
        site.plan.rejected.clear()
        pages = self.pages_to_fetch(site)
        if not pages and not site.scheduled and not site.unchanged and not site.remembered:
            if site.failure is None:
                yield from self.nothing_found(site)
            return
        logger.info(
            "Discovery done: %d pages to fetch from %s",
            len(pages),
            site.base_url,
            extra=self.site_line,
        )
        # Equal priorities in FIFO queues: fetched in this (newest first) order.
        yield from self.queue_pages(site, pages)

    def open_window(self) -> list[SiteState]:
        """Start the crawl's sites in turn (``DISCOVERY_SITES_AT_ONCE``): the sites to
        start now; each of the others starts when a site under way is done
        (:meth:`site_progress`). Call in ``start()`` after ``open_journal()``."""
        limit = self.discovery.sites_at_once
        if self.explore or self.pages_ahead == math.inf:
            # An exploring site's discovery may start again after its plan was queued;
            # a shared crawl's pages end on other workers.
            limit = 0
        self.window = SiteWindow.of(self.sites, limit)
        self.crawler.signals.connect(self._window_when_idle, signal=signals.spider_idle)
        return self._started(self.window.admit())

    def start_site(self, site: SiteState) -> scrapy.Request:
        """The first discovery request of a site (its robots.txt, its home page)."""
        raise NotImplementedError

    def site_progress(self, site: SiteState) -> Iterator[scrapy.Request]:
        """After a discovery answer or a page's end: a site under way that is done
        forgets its plan, and the sites waiting start in its place."""
        if self.window is None or site.base_url not in self.window.under_way:
            return
        if self._site_done(site.base_url):
            for waiting in self._started(self.window.done(site.base_url)):
                yield self.start_site(waiting)

    def _site_done(self, base: str) -> bool:
        site = self.sites[base]
        if not site.is_done():
            return False
        if not self.explore:
            self.forget_site(site)
        return True

    def forget_site(self, site: SiteState) -> None:
        """A done site's discovery state, no longer needed (not in explore mode)."""
        site.forget_plan()

    def _started(self, bases: list[str]) -> list[SiteState]:
        assert self.window is not None
        if bases and self.crawler.stats is not None:
            self.crawler.stats.max_value(Stat.SITES_AT_ONCE_MAX, self.window.most)
        return [self.sites[base] for base in bases]

    def _window_when_idle(self) -> None:
        """An idle crawl with sites waiting starts the next (never ends with sites left)."""
        if self.window is None or not self.window.waiting or self.crawler.engine is None:
            return
        for site in self._started(self.window.when_idle(self._site_done)):
            self.crawler.engine.crawl(self.start_site(site))
        raise DontCloseSpider

    def pages_to_fetch(self, site: SiteState) -> list[Candidate]:
        """The plan's pages to request now; in a recurring crawl, without those whose
        sitemap lastmod or feed date says they did not change (counted)."""
        self.skip_unchanged(site)
        pages = site.plan.to_fetch(site.scheduled, site.unchanged)
        if site.plan.truncated:
            site.incomplete = True
        return pages

    def say_discovery_limits(self, site: SiteState) -> None:
        """Called when a site's discovery is done: say what its limits left unread."""

    def nothing_found(self, site: SiteState) -> Iterator[scrapy.Request]:
        logger.log(self.site_warning, "No pages found on %s", site.base_url)
        return iter(())

    def discovery_error(self, failure: Failure) -> Iterator[scrapy.Request]:
        request = failure.request  # type: ignore[attr-defined]
        if self.is_stale(request):
            return
        site = self.site_of(request)
        if isinstance(failure.value, NotModified):
            yield from self.discovery_not_modified(site, request)
            yield from self.discovery_done(site)
            return
        site.incomplete = True
        reason = failure_reason(failure)
        self.inc_stat(Stat.DISCOVERY_ERRORS + reason)
        if reason == SkipReason.SITE_UNREACHABLE:
            site.failure = str(failure.value)
        elif reason != SkipReason.STOPPING:
            logger.info("Discovery request %s failed: %s", request.url, reason)
        yield from self.discovery_done(site)

    def report_skip(self, site: str, reason: str, count: int = 1, planned: bool = True) -> None:
        """Tell the crawl report that pages of ``site`` will not become items, and why."""
        self.crawler.signals.send_catch_log(
            signal=Signal.PAGE_SKIPPED, site=site, reason=reason, count=count, planned=planned
        )

    def all_sites_failed(self) -> bool:
        """No site of the crawl could be crawled (the crawl command then exits 1)."""
        return bool(self.sites) and all(s.failure is not None for s in self.sites.values())
