"""Test-only extension: whether the crawl's start-up heap was kept out of the garbage
collector's passes while its pages were scraped (``test/heap_frozen_min``: the smallest
``gc.get_freeze_count()`` seen at an ``item_scraped``)."""

from __future__ import annotations

import gc
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

FROZEN_MIN_STAT = "test/heap_frozen_min"


class HeapProbe:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.least: int | None = None
        crawler.signals.connect(self.scraped, signal=signals.item_scraped)
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HeapProbe:
        return cls(crawler)

    def scraped(self, **_: Any) -> None:
        count = gc.get_freeze_count()
        self.least = count if self.least is None else min(self.least, count)

    def closed(self, spider: Any, reason: str) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(FROZEN_MIN_STAT, -1 if self.least is None else self.least)
