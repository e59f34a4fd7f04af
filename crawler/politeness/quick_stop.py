"""``QuickStop``: Ctrl-C stops a polite crawl within a second, not after the queued pages.

Scrapy's graceful stop waits for every request already handed to the downloader; with a
per-site delay those sit in the site's slot queue and are fetched one by one (16 requests
at a 1 s Crawl-delay: 16 s of silence). Once the crawl is stopping, this extension fails
the requests still waiting in a slot queue (never one being transferred) with
``Stopping`` (an ``IgnoreRequest``); spiders treat them as not done, so a ``JOBDIR`` crawl
fetches them when it resumes.

Reads the download slots' queues through :mod:`scrapy_maintext.scrapy_internals`; without
them it does nothing.
"""

from __future__ import annotations

import logging

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy_maintext.logformatter import PROGRESS
from scrapy_maintext.scrapy_internals import take_queued
from scrapy_maintext.vocabulary.names import Stat
from scrapy_maintext.vocabulary.reasons import Stopping, switched_off
from scrapy_maintext.vocabulary.settings import setting
from twisted.internet import task
from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: How often a stopping crawl is checked for (seconds): the delay Ctrl-C adds at most.
CHECK_INTERVAL = 0.25


class QuickStop:
    """Extension: on shutdown, drop requests still queued in the download slots."""

    def __init__(self, crawler: Crawler) -> None:
        if not setting(crawler.settings, "SHUTDOWN_DROP_QUEUED"):
            raise switched_off("QuickStop", "SHUTDOWN_DROP_QUEUED is off")
        self.crawler = crawler
        self.loop = task.LoopingCall(self.check)
        self.dropped = 0
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> QuickStop:
        return cls(crawler)

    def engine_started(self) -> None:
        self.loop.start(CHECK_INTERVAL, now=False)

    def check(self) -> None:
        if self.crawler.crawling:
            return
        dropped = drop_queued(self.crawler)
        if dropped and not self.dropped:
            logger.info(
                "Stopping: %d queued requests left for a resumed crawl", dropped, extra=PROGRESS
            )
        self.dropped += dropped
        if self.crawler.stats is not None and dropped:
            self.crawler.stats.inc_value(Stat.QUICK_STOP_DROPPED, dropped)

    def spider_closed(self) -> None:
        if self.loop.running:
            self.loop.stop()


def drop_queued(crawler: Crawler) -> int:
    """Fail every request waiting in a download slot's queue; how many there were."""
    count = 0
    for deferred in take_queued(crawler):
        deferred.errback(Failure(Stopping("Crawl is stopping")))
        count += 1
    return count
