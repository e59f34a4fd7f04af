"""What several benchmarks share; not a benchmark itself.

- :class:`CrawlCpu`: a Scrapy extension for the benchmarks' crawls, the crawl process's own
  CPU and its garbage collector's share (``benchmarks.crawl_throughput`` lists it in
  ``EXTENSIONS``, so the crawl process imports this module: keep its imports light);
- :func:`load_pages`: real-size pages of the developer data;
- :func:`spread_records`, :func:`write_warc`: modern pages of the developer data, with their
  URLs, taken evenly through the files, and a WARC of them (gzip per record);
- :func:`variant_parser`, :func:`run_child`, :func:`memory_mib`: benchmarks that measure each
  variant in a fresh process of their own module, and that process's memory as Linux reports
  it.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import gzip
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapy import signals

# -- The crawl process's CPU ------------------------------------------------------------------

#: Every thread of the crawl process (the reactor, the extraction pool's threads), from
#: ``spider_opened`` to ``spider_closed``; the extraction workers are other processes.
CRAWL_CPU_STAT = "benchmark/crawl_cpu_seconds"
#: The wall time of the garbage collector's passes in the same span (``gc.callbacks``; see
#: ``EXTRACT_GC_FREEZE``).
GC_STAT = "benchmark/gc_seconds"
#: The CPU time of the same passes (the thread that ran each), all of them and the full ones:
#: the wall time above counts a pass's waits for a core on a loaded machine too.
GC_CPU_STAT = "benchmark/gc_cpu_seconds"
GC_FULL_CPU_STAT = "benchmark/gc_full_cpu_seconds"
#: The crawl process's resident set at ``spider_opened`` and its peak (``VmHWM``) at
#: ``spider_closed``, in KiB.
RSS_OPENED_STAT = "benchmark/rss_opened_kib"
RSS_PEAK_STAT = "benchmark/rss_peak_kib"
#: :data:`CRAWL_CPU_STAT`'s part in the kernel (system time: sockets, connects, page faults).
CRAWL_SYSTEM_STAT = "benchmark/crawl_system_seconds"
#: The reactor thread's own CPU in the same span (the rest: the thread pool's name lookups,
#: the extraction pool's threads).
REACTOR_CPU_STAT = "benchmark/reactor_cpu_seconds"
#: The garbage collector's passes in the same span, by generation ("gc_passes_2": full ones).
GC_PASSES_STAT = "benchmark/gc_passes_{}"


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class CrawlCpu:
    """Benchmark-only extension: sets :data:`CRAWL_CPU_STAT`, :data:`GC_STAT` and the RSS
    stats. Listed before
    ``tests.stats_dump.StatsDump`` so that the stats are set before they are written."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.started = 0.0
        self.gc_seconds = 0.0
        self._gc_started = 0.0
        self._gc_cpu_started = 0.0
        #: CPU seconds of the passes by generation.
        self.gc_cpu = [0.0, 0.0, 0.0]
        self.rss_opened = 0
        self.system = 0.0
        self.reactor_started = 0.0
        self.passes = [0, 0, 0]
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlCpu:
        return cls(crawler)

    def spider_opened(self, spider: Any) -> None:
        self.started = time.process_time()
        self.system = os.times().system
        # The signal is sent on the reactor thread.
        self.reactor_started = time.thread_time()
        self.rss_opened = _status_kib("VmRSS")
        gc.callbacks.append(self._gc_pass)

    def _gc_pass(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            self._gc_cpu_started = time.thread_time()
            self.passes[info["generation"]] += 1
        else:
            self.gc_seconds += time.perf_counter() - self._gc_started
            self.gc_cpu[info["generation"]] += time.thread_time() - self._gc_cpu_started

    def spider_closed(self, spider: Any, reason: str) -> None:
        gc.callbacks.remove(self._gc_pass)
        assert self.crawler.stats is not None
        self.crawler.stats.set_value(CRAWL_CPU_STAT, round(time.process_time() - self.started, 3))
        self.crawler.stats.set_value(GC_STAT, round(self.gc_seconds, 3))
        self.crawler.stats.set_value(GC_CPU_STAT, round(sum(self.gc_cpu), 3))
        self.crawler.stats.set_value(GC_FULL_CPU_STAT, round(self.gc_cpu[2], 3))
        system = os.times().system - self.system
        self.crawler.stats.set_value(CRAWL_SYSTEM_STAT, round(system, 3))
        reactor = time.thread_time() - self.reactor_started
        self.crawler.stats.set_value(REACTOR_CPU_STAT, round(reactor, 3))
        for generation, count in enumerate(self.passes):
            self.crawler.stats.set_value(GC_PASSES_STAT.format(generation), count)
        self.crawler.stats.set_value(RSS_OPENED_STAT, self.rss_opened)
        self.crawler.stats.set_value(RSS_PEAK_STAT, _status_kib("VmHWM"))


#: Prefix of :class:`MappingGrowth`'s stats: KiB of resident memory gained by kind of mapping.
MAPPING_GROWTH_STAT = "benchmark/rss_growth_kib/"


def resident_by_mapping() -> dict[str, int]:
    """Resident KiB of this process by kind of mapping (``/proc/self/smaps``): ``[heap]``
    (``brk``: malloc's small blocks, C libraries' and Python's objects over 512 bytes),
    ``[anon]`` (anonymous ``mmap``: pymalloc's arenas, malloc's large blocks, thread
    stacks), ``[stack]``, and each file mapped (a shared library's code and data) by name."""
    found: dict[str, int] = {}
    kind = "[anon]"
    # Line by line: the whole file at once (hundreds of KB of text) would itself grow the
    # heap that it measures.
    with open("/proc/self/smaps") as lines:
        for line in lines:
            head = line.split(maxsplit=5)
            if head and head[0].endswith(":"):
                if head[0] == "Rss:":
                    found[kind] = found.get(kind, 0) + int(head[1])
            elif len(head) >= 5:
                kind = Path(head[5].strip()).name if len(head) == 6 else "[anon]"
    return found


class MappingGrowth:
    """Benchmark-only extension: what each kind of mapping (:func:`resident_by_mapping`)
    gained from ``spider_opened`` to ``spider_closed``, as stats under
    :data:`MAPPING_GROWTH_STAT`. Listed before ``tests.stats_dump.StatsDump``."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.opened: dict[str, int] = {}
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> MappingGrowth:
        return cls(crawler)

    def spider_opened(self, spider: Any) -> None:
        self.opened = resident_by_mapping()

    def spider_closed(self, spider: Any, reason: str) -> None:
        assert self.crawler.stats is not None
        for kind, kib in resident_by_mapping().items():
            if kib != self.opened.get(kind, 0):
                growth = kib - self.opened.get(kind, 0)
                self.crawler.stats.set_value(MAPPING_GROWTH_STAT + kind, growth)


# -- Real-size pages --------------------------------------------------------------------------

#: Real pages: the modern set, pages of at least this size (bytes of HTML).
DATA_FILE = "wcxb-dev.jsonl.gz"
MIN_PAGE_BYTES = 10_000


@dataclass(frozen=True)
class Page:
    path: str
    html: str


def load_pages(data: Path, count: int) -> list[Page]:
    """The first ``count`` pages of :data:`DATA_FILE` with at least :data:`MIN_PAGE_BYTES`."""
    pages = []
    with gzip.open(data / DATA_FILE, "rt", encoding="utf-8") as lines:
        for line in lines:
            html = json.loads(line)["html"]
            if len(html.encode("utf-8")) >= MIN_PAGE_BYTES:
                pages.append(Page(f"/p/{len(pages)}.html", html))
            if len(pages) == count:
                break
    return pages


def spread_records(
    data: Path, pages: int, files: tuple[str, ...] = (DATA_FILE,)
) -> list[dict[str, Any]]:
    """``pages`` records of ``files`` (in that order) that have a URL, taken evenly through
    them so that every page type and set is in the sample."""
    records: list[dict[str, Any]] = []
    for name in files:
        with gzip.open(data / name, "rt", encoding="utf-8") as lines:
            # A response record needs its URL (WARC-Target-URI).
            records += [r for r in map(json.loads, lines) if r.get("url")]
    step = max(len(records) / pages, 1.0)
    return [records[int(i * step)] for i in range(min(pages, len(records)))]


def write_warc(records: list[dict[str, Any]], path: Path, software: str) -> None:
    """A WARC file of ``records`` (their ``url`` and ``html``) as our crawl writes one: a
    warcinfo record, then a 200 response and its request per page."""
    from scrapy_maintext.archive.records import Exchange, build_pair, build_warcinfo

    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    with path.open("wb") as out:
        info, info_id = build_warcinfo(path.name, {"software": software})
        out.write(info)
        for record in records:
            body = record["html"].encode("utf-8")
            headers = [("Content-Type", "text/html; charset=utf-8")]
            pair = build_pair(Exchange(record["url"], 200, headers, body, when), info_id)
            out.write(pair.response)
            out.write(pair.request)


# -- Variants in fresh processes --------------------------------------------------------------


def variant_parser(variants: tuple[str, ...], doc: str) -> argparse.ArgumentParser:
    """``--data`` and the hidden ``--child VARIANT`` of a fresh process."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="developer data folder")
    parser.add_argument("--child", choices=variants, help=argparse.SUPPRESS)
    return parser


def run_child(module: str, argv: list[str], variant: str) -> dict[str, Any]:
    """Run ``python -m module *argv --child variant``; the JSON of its last output line."""
    cmd = [sys.executable, "-m", module, *argv, "--child", variant]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


_MEMORY_FIELDS = {"Rss": "rss", "Pss": "pss", "Private_Clean": "uss", "Private_Dirty": "uss"}


def memory_mib(pid: int) -> dict[str, float]:
    """RSS, PSS and USS of ``pid`` in MiB."""
    out = {"rss": 0.0, "pss": 0.0, "uss": 0.0}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in _MEMORY_FIELDS:
            out[_MEMORY_FIELDS[name]] += int(rest.split()[0]) / 1024
    return out


def round_ratios(ours: list[float], theirs: list[float]) -> tuple[list[float], str]:
    """Ours / theirs round by round, and those ratios as a "0.61x, 0.65x" list."""
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    return ratios, ", ".join(f"{r:.2f}x" for r in ratios)
