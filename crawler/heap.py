"""The crawl process's heap, kept out of the garbage collector's passes while crawls run."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler


class HeapFreeze:
    """Keep what is alive at the start of a crawl (Scrapy, the spider, the settings) out of
    the garbage collector's passes until it ends (``EXTRACT_GC_FREEZE``).

    Items come and go by the thousand, so the collector runs often, and each full pass
    walks the whole heap: frozen, its time in the crawl process went from 0.5-0.9 to
    0.2-0.4 ms a page (``benchmarks/crawl_throughput.py``, ``benchmark/gc_seconds``).
    Garbage is collected first so that none is frozen. The heap is frozen by the first
    crawl of the process to open and thawed when the last one closes; a heap frozen by
    someone else is left as it is.
    """

    def __init__(self) -> None:
        self.holders = 0
        self.frozen_here = False

    def hold(self) -> None:
        if self.holders == 0 and gc.get_freeze_count() == 0:
            gc.collect()
            gc.freeze()
            self.frozen_here = True
        self.holders += 1

    def release(self) -> None:
        self.holders = max(self.holders - 1, 0)
        if self.holders == 0 and self.frozen_here:
            gc.unfreeze()
            self.frozen_here = False


#: One per process, shared by the crawls running in it.
HEAP_FREEZE = HeapFreeze()


class HeapFreezeExtension:
    """Scrapy extension: :data:`HEAP_FREEZE` held from ``spider_opened`` to ``spider_closed``
    of every crawl (``EXTRACT_GC_FREEZE``), extraction on or off. The extraction pipeline
    holds it too; a crawl without extraction (discovery, the recrawl benchmarks) then keeps
    its start-up heap out of the collector's passes all the same: unfrozen, each full pass
    walked Scrapy's, Twisted's and the settings' objects again (issue 47)."""

    def __init__(self, crawler: Crawler) -> None:
        self.holding = False
        crawler.signals.connect(self.opened, signal=signals.spider_opened)
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HeapFreezeExtension:
        if not setting(crawler.settings, "EXTRACT_GC_FREEZE"):
            raise NotConfigured("EXTRACT_GC_FREEZE is off")
        return cls(crawler)

    def opened(self, spider: Spider) -> None:
        if not self.holding:
            HEAP_FREEZE.hold()
            self.holding = True

    def closed(self, spider: Spider) -> None:
        if self.holding:
            HEAP_FREEZE.release()
            self.holding = False
