"""Benchmark-only extension: CPU time of the crawl process itself, and its collector's share.

``benchmark/crawl_cpu_seconds``: every thread of the crawl process (the reactor, the
extraction pool's threads), from ``spider_opened`` to ``spider_closed``; the extraction
workers are other processes and not in it. ``benchmark/gc_seconds``: the wall time of the
garbage collector's passes in the same span (``gc.callbacks``; see ``EXTRACT_GC_FREEZE``).
Listed before ``tests.stats_dump.StatsDump`` so that the stats are set before they are
written.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

STAT = "benchmark/crawl_cpu_seconds"
GC_STAT = "benchmark/gc_seconds"


class CrawlCpu:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.started = 0.0
        self.gc_seconds = 0.0
        self._gc_started = 0.0
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlCpu:
        return cls(crawler)

    def spider_opened(self, spider: Any) -> None:
        self.started = time.process_time()
        gc.callbacks.append(self._gc_pass)

    def _gc_pass(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self.gc_seconds += time.perf_counter() - self._gc_started

    def spider_closed(self, spider: Any, reason: str) -> None:
        gc.callbacks.remove(self._gc_pass)
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(STAT, round(time.process_time() - self.started, 3))
        self.crawler.stats.set_value(GC_STAT, round(self.gc_seconds, 3))
