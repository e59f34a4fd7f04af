"""Fetching waits when extraction falls behind (``EXTRACT_MAX_PENDING``).

Downloads are cheap next to extraction: without a bound, a crawl whose extraction pool is
slower than its downloads (a worker in a cgroup of a quarter core) holds thousands of
fetched pages in memory, waiting for a worker (Scrapy's own bound is in bytes,
``SCRAPER_SLOT_MAX_ACTIVE_SIZE``, 5 MB: 2,300 small pages). A page request waits here (a
downloader middleware just before the downloader, before a distributed crawl's shared
politeness reserves its turn) while ``EXTRACT_MAX_PENDING`` pages are downloading or on
their way through the spider and the item pipelines (extraction, the crawl state, the
outputs); each page done lets the next waiting one through, in the order they came.
Requests that wait hold the downloader's places (``CONCURRENT_REQUESTS``), so the engine
takes no more from the scheduler meanwhile. Discovery (robots.txt, sitemaps, feeds) never
waits. Pages the site memory holds, extracted, for their site's warm-up
(``SITE_MEMORY_ENABLED``; bounded by ``SITE_MEMORY_MAX_HELD_BYTES``) do not count: their site
needs more pages to decide them. ``extract/pending_max`` is the most pages held at once.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy_maintext.scrapy_internals import when_request_done
from scrapy_maintext.vocabulary.names import Meta, Signal, Stat
from scrapy_maintext.vocabulary.reasons import switched_off
from scrapy_maintext.vocabulary.settings import setting
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Request

logger = logging.getLogger(__name__)

#: How often pages taken up by the site memory's warm-up are looked for (s).
RECHECK_INTERVAL = 0.2


class ExtractionBackpressure:
    """Downloader middleware (order 940)."""

    def __init__(self, crawler: Crawler) -> None:
        self.limit = int(setting(crawler.settings, "EXTRACT_MAX_PENDING"))
        if self.limit <= 0 or not setting(crawler.settings, "EXTRACT_ENABLED"):
            raise switched_off("ExtractionBackpressure", "EXTRACT_MAX_PENDING=0 or no extraction")
        self.crawler = crawler
        #: Page requests let through that the engine is not done with.
        self.held: set[Request] = set()
        self.most = 0
        self._waiting: deque[tuple[Request, Deferred[None]]] = deque()
        self.stopping = False
        #: The site memory's registry, when it holds pages for their site's warm-up.
        self._warming: Any = None
        self._recheck = LoopingCall(self._wake)
        crawler.signals.connect(self._opened, signal=signals.spider_opened)
        crawler.signals.connect(self._stop, signal=Signal.CRAWL_STOPPING)
        crawler.signals.connect(self._stop, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _opened(self, *_: object, **__: object) -> None:
        when_request_done(self.crawler, self._done)
        from scrapy_maintext.pipelines.extraction import ExtractionPipeline

        pipeline = self.crawler.get_item_pipeline(ExtractionPipeline)
        stage = getattr(pipeline, "site_memory", None)
        if stage is not None:
            self._warming = stage.memories
            # Pages the site memory takes up are told by no event: looked at now and then.
            self._recheck.start(RECHECK_INTERVAL, now=False)

    @property
    def pending(self) -> int:
        """Pages let through and not done, less those held extracted for a warm-up."""
        warming = self._warming.held_pages if self._warming is not None else 0
        return len(self.held) - warming

    def room(self) -> int:
        """How many pages more would be let through now, none waiting before them."""
        if self.stopping:
            return self.limit
        return max(0, self.limit - self.pending - len(self._waiting))

    async def process_request(self, request: Request) -> None:
        if not is_page(request) or request in self.held:
            return
        if self.pending < self.limit or self.stopping:
            self._let_through(request)
            return
        waited: Deferred[None] = Deferred()
        self._waiting.append((request, waited))
        self._inc(Stat.EXTRACT_BACKPRESSURE_WAITS)
        await maybe_deferred_to_future(waited)

    def _done(self, request: Request) -> None:
        if request in self.held:
            self.held.discard(request)
            self._wake()

    def _let_through(self, request: Request) -> None:
        self.held.add(request)
        if self.pending > self.most:
            self.most = self.pending
            if self.crawler.stats is not None:
                self.crawler.stats.max_value(Stat.EXTRACT_PENDING_MAX, self.most)

    def _wake(self) -> None:
        while self._waiting and (self.pending < self.limit or self.stopping):
            request, waited = self._waiting.popleft()
            self._let_through(request)
            waited.callback(None)

    def _stop(self, *_: object, **__: object) -> None:
        """The crawl stops: nothing waits for extraction any more."""
        self.stopping = True
        if self._recheck.running:
            self._recheck.stop()
        self._wake()

    def _inc(self, name: str) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(name)


def is_page(request: Request) -> bool:
    """A page request of the discovery spiders (not robots.txt, a sitemap or a feed)."""
    meta = request.meta
    return bool(meta.get(Meta.DISCOVERED_VIA)) and not meta.get(Meta.DISCOVERY_DOCUMENT)
