"""A page's way through a discovery spider: its request, its item or its error, and its mark
in the page journal (``JOBDIR``) once every output took it or it failed for good."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response, TextResponse
from scrapy_maintext.discovery.dates import to_iso
from scrapy_maintext.discovery.plan import Candidate
from scrapy_maintext.exporters.feeds import exported_signal
from scrapy_maintext.report.losses import write_failed
from scrapy_maintext.spiders.failures import failure_reason
from scrapy_maintext.spiders.pages import declares_encoding, is_html_response
from scrapy_maintext.spiders.recrawl import RecrawlMixin
from scrapy_maintext.state.page_journal import PageJournal
from scrapy_maintext.state.schedule import changefreq_seconds
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import (
    QUIET_SKIPS,
    RECRAWL_SKIPS,
    ExtractionInterrupted,
    SkipReason,
    left_undone,
)
from scrapy_maintext.vocabulary.settings import setting
from twisted.python.failure import Failure

if TYPE_CHECKING:
    from scrapy_maintext.spiders.sites import SiteState

logger = logging.getLogger(__name__)

#: A site's planned pages handed to Scrapy at a time, at least (else twice the requests a
#: site may have in flight, ``CONCURRENT_REQUESTS_PER_DOMAIN``): the rest wait in the site's
#: :class:`~scrapy_maintext.spiders.sites.PageQueue` as plan entries.
PAGES_AHEAD_MIN = 2


class PageFlow(RecrawlMixin):
    """The page half of ``DiscoverySpider`` (``spiders.base``)."""

    journal: PageJournal
    run_id: str
    #: A site's pages handed to Scrapy at a time (set when the spider opens).
    pages_ahead: float = math.inf

    if TYPE_CHECKING:

        @property
        def html_as_bytes(self) -> bool: ...

        @property
        def site_warning(self) -> int: ...

        def is_stale(self, request_or_response: scrapy.Request | Response) -> bool: ...

        def site_progress(self, site: SiteState) -> Iterator[scrapy.Request]: ...

    def open_journal(self) -> None:
        """With JOBDIR, skip the pages an earlier run finished; call at the start of start()."""
        self.journal = PageJournal(self.settings.get("JOBDIR"))
        for base, site in self.sites.items():
            site.scheduled |= self.journal.done.get(base, set())
        connect = self.crawler.signals.connect
        # Done once every output took the item (a failed output leaves it to the resume).
        for signal in (exported_signal(self.crawler), signals.item_dropped, signals.item_error):
            connect(self._item_finished, signal=signal)
        connect(self.journal.close, signal=signals.spider_closed)
        connect(self._request_dropped, signal=signals.request_dropped)
        connect(self._release_pages_when_idle, signal=signals.spider_idle)
        connect(self._page_left_scheduler, signal=signals.request_reached_downloader)
        # A distributed crawl's pages go to the shared queue at once: the worker that
        # ends a page is seldom the one holding its site's plan.
        shared = bool(setting(self.settings, "REDIS_URL"))
        per_site = self.settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN")
        self.pages_ahead = math.inf if shared else max(PAGES_AHEAD_MIN, 2 * per_site)
        self.open_recrawl()

    def queue_pages(
        self, site: SiteState, candidates: Iterable[Candidate], priority: int = 0
    ) -> Iterator[scrapy.Request]:
        """Plan ``candidates`` as the site's pages (in this order); the requests to hand to
        Scrapy now (the others go out as the site's pages end)."""
        for candidate in candidates:
            self.page_planned(site, candidate)
            site.pages.push(candidate, priority)
        yield from self.release_pages(site)

    def release_pages(self, site: SiteState) -> Iterator[scrapy.Request]:
        held = {Meta.PAGE_HELD: True} if self.pages_ahead != math.inf else {}
        for priority, candidate in site.pages.release(self.pages_ahead):
            yield self.build_page_request(site, candidate, priority, **held)

    def _page_left_scheduler(self, request: scrapy.Request, **_: Any) -> None:
        self._page_ended(request.meta)

    def _page_ended(self, meta: dict[str, Any]) -> None:
        """A page request reached the downloader, or ended before (an error, a drop): its
        site's next page goes out. Once per page: retries and redirects copy the meta."""
        if not meta.pop(Meta.PAGE_HELD, False) or meta.get(Meta.RUN) != self.run_id:
            return
        site = self.sites.get(meta.get(Meta.SITE, ""))
        if site is None:
            return
        site.pages.ended()
        engine = self.crawler.engine
        if engine is None or not engine.running:
            return
        for next_request in self.release_pages(site):
            engine.crawl(next_request)
        for next_request in self.site_progress(site):
            engine.crawl(next_request)

    def _release_pages_when_idle(self) -> None:
        """A crawl gone idle with pages still held (an end that never came back, a request
        a middleware dropped without a word): they are requested all the same."""
        released = False
        for site in self.sites.values():
            site.pages.in_flight = 0
            for request in self.release_pages(site):
                self.crawler.engine.crawl(request)
                released = True
        if released:
            raise DontCloseSpider

    def _request_dropped(self, request: scrapy.Request, **_: Any) -> None:
        """A page redirected to a URL this crawl already requested: the duplicate filter
        drops the redirect, and the page would vanish without a word."""
        self._page_ended(request.meta)
        chain = request.meta.get("redirect_urls")
        if not chain or Meta.PAGE_URL not in request.meta:
            return
        seen = request.url in chain
        reason = SkipReason.REDIRECT_LOOP if seen else SkipReason.REDIRECT_TO_SEEN
        self.inc_stat(Stat.PAGE_ERRORS + reason)
        logger.info("Page %s not fetched: %s (%s)", chain[0], reason, request.url)
        self._mark_done(request.meta[Meta.SITE], request.meta[Meta.PAGE_URL])

    def _item_finished(
        self, response: Response | Failure | None = None, exception: Any = None, **_: Any
    ) -> None:
        if left_undone(exception):
            # Not written, or not extracted because the crawl stopped: the resumed crawl
            # fetches it again.
            if isinstance(exception, ExtractionInterrupted):
                self.inc_stat(Stat.LEFT_FOR_RESUME)
            return
        meta = getattr(response, "meta", None)
        if isinstance(response, Response) and meta and Meta.PAGE_URL in meta:
            self._mark_done(meta[Meta.SITE], meta[Meta.PAGE_URL], response.url)

    def _mark_done(self, site: str, *urls: str) -> None:
        """The page journal's mark; a journal that cannot be written stops the crawl."""
        try:
            self.journal.mark(site, *urls)
        except OSError as exc:
            if write_failed(self.crawler, f"page journal {self.journal.path}", exc):
                self.inc_stat(Stat.EXPORT_OUTPUTS_FAILED)

    def page_request(
        self, site: SiteState, candidate: Candidate, priority: int = 0, **meta: Any
    ) -> scrapy.Request:
        """A page's request at once (explore's links), not held in the site's queue."""
        self.page_planned(site, candidate)
        return self.build_page_request(site, candidate, priority, **meta)

    def page_planned(self, site: SiteState, candidate: Candidate) -> None:
        site.scheduled.add(candidate.url)
        self.inc_stat(Stat.PAGES_VIA + str(candidate.discovered_via))

    def build_page_request(
        self, site: SiteState, candidate: Candidate, priority: int = 0, **meta: Any
    ) -> scrapy.Request:
        meta.update(
            {
                Meta.DISCOVERED_VIA: candidate.discovered_via,
                Meta.SOURCE_URL: candidate.source_url,
                Meta.SOURCE_DATE: to_iso(candidate.date),
                Meta.SOURCE_TITLE: candidate.title,
            }
        )
        if candidate.changefreq and self.recrawl is not None:
            meta[Meta.CHANGE_PERIOD] = changefreq_seconds(candidate.changefreq)
        meta.update({Meta.SITE: site.base_url, Meta.RUN: self.run_id, Meta.PAGE_URL: candidate.url})
        return scrapy.Request(
            candidate.url,
            callback=self.parse_page,
            errback=self.page_error,
            priority=priority,
            meta=meta,
            # A resumed crawl's unfinished pages were all "seen" by the killed run.
            dont_filter=self.journal.resumed,
        )

    def parse_page(self, response: Response) -> Iterator[Any]:
        self._page_ended(response.meta)
        if not is_html_response(response):
            self.inc_stat(Stat.SKIPPED + SkipReason.NON_HTML)
            self.report_skip(response.meta.get(Meta.SITE, ""), SkipReason.NON_HTML)
            logger.info("Skipped non-HTML page %s", response.url)
            self._item_finished(response)
            return
        assert isinstance(response, TextResponse)
        yield self.page_item(response)

    def page_item(self, response: TextResponse) -> dict[str, Any]:
        meta = response.meta
        return {
            # The URL as discovered, before any redirect.
            "url": (meta.get("redirect_urls") or [response.url])[0],
            "final_url": response.url,
            "status": response.status,
            "discovered_via": meta.get(Meta.DISCOVERED_VIA),
            "source_url": meta.get(Meta.SOURCE_URL),
            "source_date": meta.get(Meta.SOURCE_DATE),
            "source_title": meta.get(Meta.SOURCE_TITLE),
            "fetched_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "content_type": (response.headers.get("Content-Type") or b"").decode("latin-1"),
            "encoding": response.encoding,
            "html": self.page_html(response),
        }

    def page_html(self, response: TextResponse) -> str | bytes:
        """The body as fetched when the extraction pipeline takes it and its encoding is
        declared: the worker decodes it as ``response.text`` would, and the crawl process
        neither decodes nor pickles a str. Otherwise ``response.text``: items exported with
        their HTML keep text, and a guessed encoding has decoded the body already (Scrapy
        guesses by decoding, and its last resort, ASCII with U+FFFD, is its own)."""
        if self.html_as_bytes and declares_encoding(response):
            return response.body
        return response.text

    def page_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        self._page_ended(request.meta)
        if self.is_stale(request):
            return
        reason = failure_reason(failure)
        site = self.sites.get(request.meta.get(Meta.SITE, ""))
        if reason in RECRAWL_SKIPS:
            # Not modified, or gone: counted as recrawl/ outcomes, no failure.
            self._page_decided(request, reason)
            return
        if site is not None:
            self.page_not_final(site)
        if reason == SkipReason.STOPPING:
            # Not done: the journal leaves it for a resumed crawl.
            self.inc_stat(Stat.LEFT_FOR_RESUME)
            return
        if Meta.PAGE_URL in request.meta:
            self._mark_done(request.meta[Meta.SITE], request.meta[Meta.PAGE_URL])
        self.inc_stat(Stat.PAGE_ERRORS + reason)
        self.report_skip(request.meta.get(Meta.SITE, ""), reason)
        # Routine, or said once for the whole site (unreachable, stalled).
        level = logging.INFO if reason in QUIET_SKIPS else self.site_warning
        logger.log(level, "Page %s not fetched: %s", request.url, reason)

    def _page_decided(self, request: scrapy.Request, reason: str) -> None:
        if Meta.PAGE_URL in request.meta:
            self._mark_done(request.meta[Meta.SITE], request.meta[Meta.PAGE_URL])
        self.report_skip(request.meta.get(Meta.SITE, ""), reason)
        logger.debug("Page %s: %s", request.url, reason)
