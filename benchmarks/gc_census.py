"""A benchmark-only Scrapy extension: the objects the garbage collector tracks (those its
full passes walk; the frozen heap left out) when a crawl's last request is done
(its last ``spider_idle``), counted by type, written to ``BENCHMARK_GC_CENSUS_FILE`` as JSON.
The difference between two crawls of more and fewer sites, over their difference in sites,
is what a finished site keeps alive (``benchmarks.recrawl_scale --set``)."""

from __future__ import annotations

import gc
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any


class GcCensus:
    def __init__(self, crawler: Any) -> None:
        from scrapy import signals

        self.path = Path(crawler.settings["BENCHMARK_GC_CENSUS_FILE"])
        crawler.signals.connect(self.idle, signal=signals.spider_idle)

    @classmethod
    def from_crawler(cls, crawler: Any) -> GcCensus:
        return cls(crawler)

    def idle(self, spider: Any) -> None:
        # The last idle is the crawl's end: each one overwrites the file.
        # Garbage out first: what is left is what is kept alive.
        gc.collect()
        # What one full pass over what is kept costs now (these find no garbage): the
        # least CPU of three, a shared machine's other work left out.
        passes = []
        for _ in range(3):
            started = time.thread_time()
            gc.collect()
            passes.append(time.thread_time() - started)
        census = {"full_pass_cpu_s": min(passes), "frozen": gc.get_freeze_count()}
        objects = gc.get_objects()
        by_type = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in objects)
        self.path.write_text(
            json.dumps(
                {**census, "tracked": len(objects), "by_type": by_type},
                indent=0,
            )
        )
