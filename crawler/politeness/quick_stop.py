"""``QuickStop``: Ctrl-C stops a polite crawl within a second, not after the queued pages.

Scrapy's graceful stop waits for every request already handed to the downloader; with a
per-site delay those sit in the site's slot queue and are fetched one by one (16 requests
at a 1 s Crawl-delay: 16 s of silence). Once the crawl is stopping, this extension fails
the requests still waiting in a slot queue (never one being transferred) with
``Stopping`` (an ``IgnoreRequest``); spiders treat them as not done, so a ``JOBDIR`` crawl
fetches them when it resumes.

It also tells the crawl's components once that the crawl is stopping
(``Signal.CRAWL_STOPPING``: the extraction pipeline then drops the pages it has not
extracted yet), and a crawl still stopping ``SHUTDOWN_TIMEOUT`` seconds after the signal is
stopped as a second Ctrl-C stops it: one SIGTERM or Ctrl-C always ends the process.

Reads the download slots' queues through :mod:`scrapy_maintext.scrapy_internals`; without
them it drops nothing.
"""

from __future__ import annotations

import logging

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy_maintext.logformatter import PROGRESS
from scrapy_maintext.scrapy_internals import force_shutdown, take_queued
from scrapy_maintext.vocabulary.names import Signal, Stat
from scrapy_maintext.vocabulary.reasons import Stopping
from scrapy_maintext.vocabulary.settings import setting
from twisted.internet import task
from twisted.internet.base import DelayedCall
from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: How often a stopping crawl is checked for (seconds): the delay Ctrl-C adds at most.
CHECK_INTERVAL = 0.25


class QuickStop:
    """Extension: on shutdown, say so, drop requests still queued in the download slots,
    and stop the reactor if the crawl has not stopped ``SHUTDOWN_TIMEOUT`` seconds later."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.drop = setting(crawler.settings, "SHUTDOWN_DROP_QUEUED")
        self.timeout = setting(crawler.settings, "SHUTDOWN_TIMEOUT")
        self.loop = task.LoopingCall(self.check)
        self.dropped = 0
        self.stopping = False
        self.deadline: DelayedCall | None = None
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> QuickStop:
        return cls(crawler)

    def engine_started(self) -> None:
        self.loop.start(CHECK_INTERVAL, now=False)

    def check(self) -> None:
        if self.crawler.crawling:
            return
        if not self.stopping:
            self.stopping = True
            if self.timeout > 0:
                from twisted.internet import reactor

                self.deadline = reactor.callLater(self.timeout, self.force_stop)
            self.crawler.signals.send_catch_log(signal=Signal.CRAWL_STOPPING)
        if not self.drop:
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

    def engine_stopped(self) -> None:
        if self.deadline is not None and self.deadline.active():
            self.deadline.cancel()

    def force_stop(self) -> None:
        """The crawl did not stop in ``SHUTDOWN_TIMEOUT`` seconds after Ctrl-C or SIGTERM:
        stop it as a second one does (requests still in flight are not waited for). A crawl
        stopped by code (``crawler.stop()``) is left to its caller."""
        if force_shutdown():
            logger.warning(
                "Still stopping %.0f s after the signal (SHUTDOWN_TIMEOUT): stopped without "
                "waiting for the requests in flight",
                self.timeout,
            )


def drop_queued(crawler: Crawler) -> int:
    """Fail every request waiting in a download slot's queue; how many there were."""
    count = 0
    for deferred in take_queued(crawler):
        deferred.errback(Failure(Stopping("Crawl is stopping")))
        count += 1
    return count
