"""``DistributedSpiderMiddleware``: discovery once per crawl, pages acknowledged when done.

- ``process_start``: of the spider's start requests, only those of the sites this worker
  claims in Redis go out; a site another worker discovers (or discovered) is skipped.
- ``process_spider_output`` (outermost, so it sees what every other middleware let
  through): a leased page is finished when its callback's output is exhausted and each of
  its items is exported, dropped or failed; a site's discovery is done when the spider has
  no discovery request of it outstanding after one of its responses.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy_maintext.distributed.scheduler import is_local
from scrapy_maintext.distributed.worker import DistributedWorker, filter_start
from scrapy_maintext.exporters.feeds import exported_signal
from scrapy_maintext.vocabulary.names import Meta
from scrapy_maintext.vocabulary.reasons import left_undone, switched_off
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)


class DistributedSpiderMiddleware:
    def __init__(self, crawler: Crawler) -> None:
        if not setting(crawler.settings, "REDIS_URL"):
            raise switched_off("DistributedSpiderMiddleware", "REDIS_URL is not set")
        self.crawler = crawler
        #: Lease -> open parts: the callback's output (1) plus items not yet finished.
        self._open: Counter[str] = Counter()
        # Done once every output took the item: a lease is acknowledged only for pages
        # whose items are out (a failed output leaves them to another worker).
        exported = exported_signal(crawler)
        for signal in (exported, signals.item_dropped, signals.item_error):
            crawler.signals.connect(self._item_done, signal=signal)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    @property
    def worker(self) -> DistributedWorker:
        worker = self.crawler.get_extension(DistributedWorker)
        assert worker is not None
        return worker

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        spider = self.crawler.spider
        decided: dict[str, bool] = {}

        def keep(site: str) -> bool:
            if site not in decided:
                decided[site] = self.worker.claim(site)
                if not decided[site]:
                    logger.info("Discovery of %s is another worker's (or done)", site)
            return decided[site]

        async for item in filter_start(spider, start, keep):
            yield item

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        request = response.request
        if request is None:
            async for item in result:
                yield item
            return
        lease = request.meta.get(Meta.DISTRIBUTED_LEASE)
        if lease is not None:
            self._open[lease] += 1
        try:
            async for item in result:
                if lease is not None and not isinstance(item, Request):
                    self._open[lease] += 1
                yield item
        finally:
            if lease is not None:
                self._close(lease, request)
            elif is_local(request):
                self._discovery_step_done(request)

    def _item_done(self, response: Response | Any = None, exception: Any = None, **_: Any) -> None:
        if left_undone(exception):
            return  # not written, or not extracted because the crawl stopped
        request = getattr(response, "request", None)
        if not isinstance(request, Request):
            return
        lease = request.meta.get(Meta.DISTRIBUTED_LEASE)
        if lease is not None and lease in self._open:
            self._close(lease, request)

    def _close(self, lease: str, request: Request) -> None:
        self._open[lease] -= 1
        if self._open[lease] <= 0:
            del self._open[lease]
            self.worker.finished(request)

    def _discovery_step_done(self, request: Request) -> None:
        base = str(request.meta.get(Meta.SITE))
        site = getattr(self.crawler.spider, "sites", {}).get(base)
        if site is not None and site.outstanding <= 0:
            self.worker.discovery_finished(base)
