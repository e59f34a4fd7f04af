"""Benchmark-only extension: CPU time of the crawl process itself, as a stat.

``benchmark/crawl_cpu_seconds``: every thread of the crawl process (the reactor, the
extraction pool's threads), from ``spider_opened`` to ``spider_closed``; the extraction
workers are other processes and not in it. Listed before ``tests.stats_dump.StatsDump`` so
that the stat is set before the stats are written.
"""

from __future__ import annotations

import time
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

STAT = "benchmark/crawl_cpu_seconds"


class CrawlCpu:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.started = 0.0
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlCpu:
        return cls(crawler)

    def spider_opened(self, spider: Any) -> None:
        self.started = time.process_time()

    def spider_closed(self, spider: Any, reason: str) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(STAT, round(time.process_time() - self.started, 3))
