"""A benchmark-only Scrapy extension: where a crawl's Python heap was at its largest
(``benchmarks.recrawl_scale --tracemalloc FILE``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class TraceMemory:
    """Benchmark-only extension: every 2 s, a ``tracemalloc`` snapshot when the traced heap
    is the largest yet; at ``spider_closed``, that snapshot's biggest lines and files, and
    what they grew by from ``spider_opened``, to ``BENCHMARK_TRACEMALLOC_FILE``. Needs
    ``PYTHONTRACEMALLOC`` set; or with ``BENCHMARK_TRACEMALLOC_FRAMES`` n, traces from
    ``spider_opened`` on with n frames, samples every 0.25 s, also writes the snapshot's
    largest tracebacks and keeps the snapshot beside the file (``.snapshot``)."""

    def __init__(self, crawler: Any) -> None:
        from scrapy import signals
        from twisted.internet import task

        self.path = Path(crawler.settings["BENCHMARK_TRACEMALLOC_FILE"])
        # 0: traced from the process's start (PYTHONTRACEMALLOC); n: traced from
        # spider_opened with n frames, so that the snapshots hold only the crawl's own
        # allocations and are cheap enough to take often.
        self.frames = crawler.settings.getint("BENCHMARK_TRACEMALLOC_FRAMES", 0)
        self.every = 0.25 if self.frames else 2.0
        self.largest = 0
        self.snapshot: Any = None
        self.opened_snapshot: Any = None
        self.opened_traced = 0
        self.loop = task.LoopingCall(self.sample)
        crawler.signals.connect(self.opened, signal=signals.spider_opened)
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> TraceMemory:
        return cls(crawler)

    def opened(self, spider: Any) -> None:
        import tracemalloc

        if self.frames:
            tracemalloc.start(self.frames)
        self.opened_snapshot = tracemalloc.take_snapshot()
        self.opened_traced = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        self.loop.start(self.every, now=False)

    def sample(self) -> None:
        import tracemalloc

        current = tracemalloc.get_traced_memory()[0]
        if current > self.largest * 1.05:
            self.largest = current
            self.snapshot = tracemalloc.take_snapshot()

    def closed(self, spider: Any) -> None:
        import tracemalloc

        self.loop.stop()
        # A crawl shorter than a sample's interval: its heap at the end.
        self.sample()
        if self.snapshot is None:
            return
        opened, peak = self.opened_traced, tracemalloc.get_traced_memory()[1]
        lines = [
            f"largest traced heap sampled {self.largest / 2**20:.2f} MiB, "
            f"{(self.largest - opened) / 2**20:.2f} MiB above spider_opened's; "
            f"its peak since spider_opened {peak / 2**20:.2f} MiB, "
            f"{(peak - opened) / 2**20:.2f} MiB above"
        ]
        for key in ("lineno", "filename"):
            lines.append(f"-- by {key}")
            for stat in self.snapshot.statistics(key)[:30]:
                lines.append(
                    f"{stat.size / 2**20:8.2f} MiB {stat.count:9d} blocks  {stat.traceback}"
                )
        # What the crawl added after spider_opened (the imports and settings left out).
        if self.frames:
            lines.append("-- by traceback")
            for stat in self.snapshot.statistics("traceback")[:40]:
                lines.append(f"{stat.size / 2**20:8.2f} MiB {stat.count:9d} blocks")
                lines.extend("      " + line for line in stat.traceback.format())
        for key in ("lineno", "filename"):
            lines.append(f"-- growth from spider_opened, by {key}")
            for diff in self.snapshot.compare_to(self.opened_snapshot, key)[:40]:
                lines.append(
                    f"{diff.size_diff / 2**20:8.2f} MiB {diff.count_diff:9d} blocks  "
                    f"{diff.traceback}"
                )
        self.path.write_text("\n".join(lines) + "\n")
        if self.frames:
            # For a closer look (tracemalloc.Snapshot.load): grouped by any frame.
            self.snapshot.dump(str(self.path.with_suffix(".snapshot")))
