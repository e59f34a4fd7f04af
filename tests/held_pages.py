"""Test-only extension: the most page requests of one site waiting in the scheduler at once.

A page request counts from ``request_scheduled`` until it reaches the downloader or is
dropped; ``test/held_pages_max`` is the most any site had at one time. Also the scheduler's
queue class, ``test/scheduler_queue``."""

from __future__ import annotations

from collections import Counter
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy_maintext.vocabulary.names import Meta

HELD_MAX_STAT = "test/held_pages_max"
#: The class of the scheduler's memory queue (Scrapy's private attributes: a test's look).
QUEUE_STAT = "test/scheduler_queue"


class HeldPages:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.held: Counter[str] = Counter()
        self.most = 0
        connect = crawler.signals.connect
        connect(self.scheduled, signal=signals.request_scheduled)
        connect(self.left, signal=signals.request_reached_downloader)
        connect(self.left, signal=signals.request_dropped)
        connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HeldPages:
        return cls(crawler)

    def scheduled(self, request: Any, **_: Any) -> None:
        if Meta.PAGE_URL in request.meta:
            site = request.meta[Meta.SITE]
            self.held[site] += 1
            self.most = max(self.most, self.held[site])

    def left(self, request: Any, **_: Any) -> None:
        if Meta.PAGE_URL in request.meta:
            self.held[request.meta[Meta.SITE]] -= 1

    def closed(self, spider: Any, reason: str) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(HELD_MAX_STAT, self.most)
        slot = getattr(self.crawler.engine, "_slot", None)
        queue = getattr(getattr(slot, "scheduler", None), "mqs", None)
        self.crawler.stats.set_value(QUEUE_STAT, type(queue).__name__)
