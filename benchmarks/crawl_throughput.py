"""Throughput and memory of a whole crawl through the extraction pipeline, 1 vs N workers.

    python -m benchmarks.crawl_throughput --data ../shared/data [--pages 400] [--workers 1,2]
        [--rounds 2] [--engine auto]
    python -m benchmarks.crawl_throughput --articles 300      # the (small-paged) demo site

With ``--data``, real pages of the developer data (``wcxb-dev``, modern pages of tens to
hundreds of KB, never committed) are served on 127.0.0.1 behind a sitemap; without it, the
generated demo site. Politeness is switched off for this local site only (no delay, 8
requests at a time), so the figure is what the crawler itself can do: download, extract in
the worker pool, export.

For each worker count (``EXTRACT_WORKERS``), interleaved over ``--rounds`` rounds with the
order flipped every round, it reports pages per second (pages sent to extraction over the
crawl's ``elapsed_time_seconds``, Scrapy's start-up excluded; medians), the speed-up over 1
worker, and the limit: the pages over (the sum of their single-core extraction times,
measured in this process first, divided by min(workers, CPU cores)), and the CPU time the
crawl process itself spends per page (every thread of it, the workers excluded;
``benchmarks/crawl_cpu.py``). With ``--data``, each round also times the extraction alone in
as many fresh processes as workers (:func:`extraction_rate`: no crawl, no server): its
ratio of 2 processes to 1 is what the machine's cores give the extraction itself, the
crawl's ceiling on this machine. On a machine with as many cores as workers, the workers
share the cores with the crawl process, and so does the site server (HTTP/1.1 with
keep-alive, as real servers answer), which runs in this process: its CPU per page is
reported too (on a real crawl it is another machine's). It also reports the crawl alone
(extraction off) and, for the demo site only, Scrapy's ``memusage/max`` of the crawl process
and the peak RSS of the largest process (with ``--data``, Linux's peak RSS of each crawl
would include this process's own, which holds the pages: it is not reported). On a machine
shared with other work these figures are noisy: compare ratios of one run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import resource
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import Route, Site, SiteOptions
from scrapy_maintext.extraction import ExtractOptions
from scrapy_maintext.extraction.core import extract_page
from scrapy_maintext.extraction.metadata import warm_date_parser
from scrapy_maintext.extraction.worker import init_worker

from benchmarks.crawl_cpu import GC_STAT
from benchmarks.crawl_cpu import STAT as CRAWL_CPU_STAT
from tests.crawl import CrawlResult, run_crawl

#: For a local benchmark only: no delay, several requests at once.
UNTHROTTLED = {
    "DOWNLOAD_DELAY": "0",
    "AUTOTHROTTLE_ENABLED": "False",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
    "LOG_LEVEL": "WARNING",
    # The crawl process's own CPU time (benchmark/crawl_cpu_seconds), then the stats file.
    "EXTENSIONS": json.dumps(
        {"benchmarks.crawl_cpu.CrawlCpu": -1, "tests.stats_dump.StatsDump": 0}
    ),
}
#: Real pages: the modern set, pages of at least this size (bytes of HTML).
DATA_FILE = "wcxb-dev.jsonl.gz"
MIN_PAGE_BYTES = 10_000


@dataclass(frozen=True)
class Page:
    path: str
    html: str


def load_pages(data: Path, count: int) -> list[Page]:
    pages = []
    with gzip.open(data / DATA_FILE, "rt", encoding="utf-8") as lines:
        for line in lines:
            html = json.loads(line)["html"]
            if len(html.encode("utf-8")) >= MIN_PAGE_BYTES:
                pages.append(Page(f"/p/{len(pages)}.html", html))
            if len(pages) == count:
                break
    return pages


def serve_pages(server: SiteServer, pages: list[Page]) -> None:
    """Replace the server's site by ``pages`` behind robots.txt and one sitemap."""
    base = server.base_url
    urls = "".join(f"<url><loc>{base}{p.path}</loc></url>" for p in pages)
    sitemap = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
    routes = {
        "/robots.txt": Route(
            f"User-agent: *\nSitemap: {base}/sitemap.xml\n".encode(), "text/plain"
        ),
        "/sitemap.xml": Route(sitemap.encode(), "application/xml"),
    }
    routes.update({p.path: Route(p.html.encode("utf-8")) for p in pages})
    server.site = Site(routes, [], {p.path for p in pages}, set())


def single_core_seconds(pages: list[Page], engine: str, base: str) -> float:
    """Sum of each page's extraction time on one core, in this process: what the pipeline's
    workers run (``extract_page``, with the block signatures the site memory uses)."""
    options = ExtractOptions(engine=engine)
    extract_page(pages[0].html, base + pages[0].path, options)  # model load, not timed
    warm_date_parser()  # as the workers' fork server does
    started = time.process_time()
    for page in pages:
        extract_page(page.html, base + page.path, options, signatures=True)
    return time.process_time() - started


#: What a process of :func:`extraction_rate` extracts (set by its initializer).
_POOL_JOB: tuple[list[Page], ExtractOptions, str] | None = None


def _pool_init(pages: list[Page], engine: str, base: str, ready: Any) -> None:
    """Start a pool process as an extraction worker starts (model loaded, a page extracted,
    dateparser warmed, as the workers' fork server does), then wait until every process of
    the pool has: no call runs before all are ready."""
    global _POOL_JOB
    _POOL_JOB = (pages, ExtractOptions(engine=engine), base)
    init_worker(_POOL_JOB[1])
    warm_date_parser()
    ready.wait()


def _pool_ready(_: int) -> None:
    """A call that returns once the pool's processes are all started (see ``_pool_init``)."""


def _pool_extract(index: int) -> None:
    assert _POOL_JOB is not None
    pages, options, base = _POOL_JOB
    page = pages[index]
    extract_page(page.html, base + page.path, options, signatures=True)


def extraction_rate(pages: list[Page], engine: str, base: str, processes: int) -> float:
    """Pages/s of the extraction alone in ``processes`` fresh processes, one page at a time
    as the pipeline's workers take them: no crawl, no site server. Its ratio of 2 processes
    to 1 is what this machine's cores give the extraction itself, the ceiling of the crawl's
    ratio here (a shared or virtual machine's cores may not add up to 2x). Spawned, not
    forked from this process, which has extracted the pages before (caches by content)."""
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(processes)
    with context.Pool(processes, _pool_init, (pages, engine, base, ready)) as pool:
        pool.map(_pool_ready, range(processes), chunksize=1)
        started = time.perf_counter()
        pool.map(_pool_extract, range(len(pages)), chunksize=1)
        elapsed = time.perf_counter() - started
    return len(pages) / elapsed


def crawl(server: SiteServer, settings: dict[str, str]) -> CrawlResult:
    with tempfile.TemporaryDirectory() as tmp:
        result = run_crawl("sitemap", Path(tmp), {"domain": server.base_url}, settings)
    if result.returncode != 0:
        raise SystemExit(result.log[-3000:])
    return result


def _pages(result: CrawlResult) -> int:
    """Pages sent to extraction (the items, when extraction is off)."""
    return int(result.stats.get("extract/items") or len(result.items))


def rate(result: CrawlResult) -> float:
    return _pages(result) / float(result.stats["elapsed_time_seconds"])


def crawl_cpu_ms(result: CrawlResult) -> float:
    """CPU of the crawl process (all its threads, not the workers) per page, in ms."""
    return 1000 * float(result.stats[CRAWL_CPU_STAT]) / max(_pages(result), 1)


def gc_ms(result: CrawlResult) -> float:
    """The crawl process's garbage collector per page, in ms (wall time of its passes)."""
    return 1000 * float(result.stats[GC_STAT]) / max(_pages(result), 1)


@dataclass
class Measured:
    """Each worker count's crawls and, with real pages, the extraction alone, per round."""

    crawls: dict[int, list[CrawlResult]]
    alone: dict[int, list[float]]


def measure(server: SiteServer, args: argparse.Namespace, pages: list[Page] | None) -> Measured:
    counts = [int(w) for w in args.workers.split(",")]
    measured = Measured({n: [] for n in counts}, {n: [] for n in counts})
    for round_no in range(args.rounds):
        order = counts if round_no % 2 == 0 else counts[::-1]
        for workers in order:
            if pages is not None:
                alone = extraction_rate(pages, args.engine, server.base_url, workers)
                measured.alone[workers].append(alone)
                print(f"  round {round_no + 1}, extraction alone in {workers}: {alone:.1f} pages/s")
            measured.crawls[workers].append(crawl_round(server, args, workers, round_no))
    return measured


def crawl_round(
    server: SiteServer, args: argparse.Namespace, workers: int, round_no: int
) -> CrawlResult:
    settings = {**UNTHROTTLED, "EXTRACT_ENGINE": args.engine, **args.setting}
    settings["EXTRACT_WORKERS"] = str(workers)
    # This process does nothing but serve the site while the crawl runs: its CPU is the
    # server's, which shares the cores with the crawl here and would not on a real site.
    started = time.process_time()
    result = crawl(server, settings)
    server_ms = 1000 * (time.process_time() - started) / max(_pages(result), 1)
    print(
        f"  round {round_no + 1} workers={workers}: {rate(result):.1f} pages/s, "
        f"crawl process {crawl_cpu_ms(result):.1f} ms CPU per page "
        f"(collector {gc_ms(result):.2f} ms), "
        f"site server {server_ms:.1f} ms CPU per page"
    )
    return result


def report(measured: Measured, pages: int, extract_s: float | None) -> None:
    results = measured.crawls
    cores = os.cpu_count() or 1
    medians = {n: statistics.median(rate(r) for r in rs) for n, rs in results.items()}
    base = medians.get(1)
    print(f"pages={pages} cores={cores}")
    if extract_s is not None:
        print(f"single-core extraction: {extract_s:.1f} s, {pages / extract_s:.1f} pages/s")
    for workers, median in medians.items():
        cpu = statistics.median(crawl_cpu_ms(r) for r in results[workers])
        line = f"workers={workers}: {median:.1f} pages/s (crawl process {cpu:.1f} ms CPU/page)"
        if base:
            line += f", {median / base:.2f}x of 1 worker"
        if extract_s is not None:
            limit = pages / (extract_s / min(workers, cores))
            line += f", limit {limit:.1f} pages/s ({median / limit:.0%} of it)"
        if extract_s is None:
            memusage = max(r.stats.get("memusage/max", 0) for r in results[workers])
            line += f"; memusage/max {memusage / 2**20:.0f} MiB"
        print(line)
        if base and workers != 1:
            rates = [[rate(r) for r in results[n]] for n in (1, workers)]
            print(f"  crawl {_paired(*rates)}")
            if measured.alone[1]:
                print(f"  extraction alone {_paired(measured.alone[1], measured.alone[workers])}")


def _paired(ones: list[float], many: list[float]) -> str:
    """Each round's ratio to 1 worker (the two runs of a round ran minutes apart at most, so
    the machine's drift cancels better than in the ratio of medians)."""
    ratios = [m / o for o, m in zip(ones, many, strict=True)]
    listed = ", ".join(f"{r:.2f}x" for r in ratios)
    return f"per round: {listed}; median {statistics.median(ratios):.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=None, help="developer data folder")
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--articles", type=int, default=300, help="demo site size (no --data)")
    parser.add_argument("--workers", default="1,2", help="comma-separated EXTRACT_WORKERS")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--engine", default="auto", choices=("auto", "neural", "trafilatura"))
    parser.add_argument(
        "-s", dest="setting", action="append", default=[], help="NAME=VALUE for every crawl"
    )
    args = parser.parse_args()
    args.setting = dict(item.split("=", 1) for item in args.setting)
    options = SiteOptions(articles=args.articles, crawl_delay=None, feeds=False)
    with SiteServer(options, keep_alive=True) as server:
        extract_s = None
        pages = None
        if args.data is not None:
            pages = load_pages(args.data, args.pages)
            serve_pages(server, pages)
            size = statistics.median(len(p.html.encode()) for p in pages)
            print(f"{len(pages)} pages of {DATA_FILE}, median {size / 1024:.0f} KiB")
            extract_s = single_core_seconds(pages, args.engine, server.base_url)
        assert server.site is not None
        count = len(server.site.expected_pages)
        alone = crawl(server, {**UNTHROTTLED, "EXTRACT_ENABLED": "False"})
        print(
            f"crawl alone (extraction off): {len(alone.items) / _elapsed(alone):.1f} pages/s, "
            f"{crawl_cpu_ms(alone):.1f} ms CPU per page"
        )
        measured = measure(server, args, pages)
    report(measured, count, extract_s)
    print(f"engine={args.engine}")
    if args.data is None:
        # Linux keeps a process's peak RSS across fork and exec: with --data this process
        # holds the pages (and ran the extraction), so its crawls would report its size.
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"peak RSS of the largest process: {peak_kib / 1024:.0f} MiB")


def _elapsed(result: CrawlResult) -> float:
    return float(result.stats["elapsed_time_seconds"])


if __name__ == "__main__":
    main()
