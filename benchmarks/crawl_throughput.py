"""How fast does a whole crawl go through the extraction pipeline, for each crawl setup compared
(worker counts, settings), and what does the crawl process spend per page?

    python -m benchmarks.crawl_throughput [--data ../shared/data] [--pages 400] [--articles 300]
        [--workers 1,2] [--rounds 2] [--engine auto] [-s NAME=VALUE ...]
        [--compare html-bytes|site-memory|warc] [--variant NAME:SETTING=VALUE ...]
        [--crawls-only]

Pages: with ``--data``, the first ``--pages`` pages of real size of the developer data
(``wcxb-dev``, at least 10 KB, never committed; ``benchmarks.common.load_pages``) served on
127.0.0.1 behind robots.txt and a sitemap; without it, the generated demo site of
``--articles`` articles (every article shares one template). The server answers HTTP/1.1 with
keep-alive, as real servers do. Politeness is switched off for this local site only (no delay,
8 requests at a time), so the figure is what the crawler itself can do: download, extract in
the worker pool, export.

Setups: every worker count of ``--workers`` (``EXTRACT_WORKERS``) for every variant. Without
``--compare`` or ``--variant`` there is one variant, the crawl as shipped; ``--compare
html-bytes`` crawls with pages sent to the workers as text, as before (``DISCOVERY_HTML_BYTES=
False`` and Scrapy's own ``MetaRefreshMiddleware``, which decodes every page), and as bytes, as
shipped; ``--compare site-memory`` with ``SITE_MEMORY_ENABLED`` off and on; ``--compare
warc`` without and with ``WARC_OUTPUT`` (a fresh folder per crawl; each crawl's line gives the
WARC bytes per page sent to extraction, robots.txt, sitemaps and redirects included); ``--variant
NAME:SETTING=VALUE`` (repeatable; the same NAME again adds a setting, ``NAME:`` alone is a
variant without settings) defines variants of one's own. The first variant is the baseline of
the ratios. ``-s NAME=VALUE`` applies to every crawl. All setups are crawled once per round,
over ``--rounds`` rounds, the order reversed every round so that no setup always runs on a
warmer machine.

Prints one line per crawl: pages per second (pages sent to extraction over the crawl's
``elapsed_time_seconds``, Scrapy's start-up excluded), the crawl process's own CPU per page
(every thread of it, the workers excluded; the garbage collector's share in parentheses;
``benchmarks.common.CrawlCpu``), the CPU per page of the site server, which runs in this
process (on a real crawl it is another machine's), and, when the site memory ran, the blocks it
removed. Then per setup the medians, the ratio to 1 worker with each round's ratio (the runs of
a round ran minutes apart at most, so the machine's drift cancels better than in the ratio of
medians) and, for the demo site only, Scrapy's ``memusage/max`` and the peak RSS of the largest
process (with ``--data`` Linux's peak RSS of each crawl would include this process's, which
holds the pages). With several variants, each variant's pages per second and crawl CPU per page
as a ratio to the baseline's, per round and median.

Unless ``--crawls-only``, it also measures, first, the crawl alone (extraction off) and, with
``--data``, the limit: the pages over (the sum of their single-core extraction times in what
the workers run, ``extract_page`` with block signatures, measured in this process, divided by
min(workers, CPU cores)); and each round, before the crawls, the extraction alone in as many
fresh processes as workers (:func:`extraction_rate`: no crawl, no server), whose ratio of 2
processes to 1 is what the machine's cores give the extraction itself, the crawl's ceiling
here. On a machine shared with other work these figures are noisy: compare ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import Route, Site, SiteOptions
from scrapy_maintext.extraction import ExtractOptions
from scrapy_maintext.extraction.core import extract_page
from scrapy_maintext.extraction.worker import init_worker
from scrapy_maintext.fields.metadata import warm_date_parser

from benchmarks.common import CRAWL_CPU_STAT, DATA_FILE, GC_STAT, Page, load_pages
from tests.crawl import CrawlResult, run_crawl

#: For a local benchmark only: no delay, several requests at once.
UNTHROTTLED = {
    "DOWNLOAD_DELAY": "0",
    "AUTOTHROTTLE_ENABLED": "False",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
    "LOG_LEVEL": "WARNING",
    # The crawl process's own CPU time (benchmark/crawl_cpu_seconds), then the stats file.
    "EXTENSIONS": json.dumps({"benchmarks.common.CrawlCpu": -1, "tests.stats_dump.StatsDump": 0}),
}

_OURS = "scrapy_maintext.middlewares.metarefresh.HeadMetaRefreshMiddleware"
_SCRAPYS = "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware"
#: ``--compare``: variants of the crawl, baseline first (name -> settings).
COMPARISONS: dict[str, dict[str, dict[str, str]]] = {
    # Pages to the workers as text, decoded and pickled as a str by the crawl process (with
    # Scrapy's MetaRefreshMiddleware, which decodes every page), against bytes and their
    # encoding, decoded by the worker (HeadMetaRefreshMiddleware skips bodies without
    # "refresh").
    "html-bytes": {
        "text (before)": {
            "DISCOVERY_HTML_BYTES": "False",
            "DOWNLOADER_MIDDLEWARES": json.dumps({_OURS: None, _SCRAPYS: 580}),
        },
        "bytes (shipped)": {},
    },
    "site-memory": {
        "memory off": {"SITE_MEMORY_ENABLED": "False"},
        "memory on": {"SITE_MEMORY_ENABLED": "True"},
    },
    # The cost of the archive: every response written as WARC (a fresh folder per crawl, see
    # crawl_round), against none.
    "warc": {
        "archive off": {},
        "archive on": {"WARC_OUTPUT": "per-crawl"},
    },
}
SHIPPED = "as shipped"
REMOVED_STAT = "extract/site_memory/blocks_removed"


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


Setup = tuple[str, int]


@dataclass
class Measured:
    """Each setup's crawls and, with real pages, each worker count's extraction alone, per
    round."""

    crawls: dict[Setup, list[CrawlResult]] = field(default_factory=dict)
    alone: dict[int, list[float]] = field(default_factory=dict)


def variants(args: argparse.Namespace) -> dict[str, dict[str, str]]:
    """Variant name -> its settings, baseline first (see the module's docstring)."""
    out: dict[str, dict[str, str]] = {}
    if args.compare:
        out.update({name: dict(s) for name, s in COMPARISONS[args.compare].items()})
    for spec in args.variant:
        name, sep, setting = spec.partition(":")
        if not sep or not name:
            raise SystemExit(f"--variant {spec!r}: NAME:SETTING=VALUE or NAME:")
        settings = out.setdefault(name, {})
        if setting:
            key, eq, value = setting.partition("=")
            if not eq:
                raise SystemExit(f"--variant {spec!r}: NAME:SETTING=VALUE or NAME:")
            settings[key] = value
    return out or {SHIPPED: {}}


def measure(
    server: SiteServer,
    args: argparse.Namespace,
    setups: dict[str, dict[str, str]],
    pages: list[Page] | None,
) -> Measured:
    counts = [int(w) for w in args.workers.split(",")]
    order = [(name, workers) for name in setups for workers in counts]
    measured = Measured({s: [] for s in order}, {n: [] for n in counts})
    for round_no in range(args.rounds):
        done: set[int] = set()
        for name, workers in order if round_no % 2 == 0 else order[::-1]:
            if pages is not None and not args.crawls_only and workers not in done:
                done.add(workers)
                alone = extraction_rate(pages, args.engine, server.base_url, workers)
                measured.alone[workers].append(alone)
                print(f"  round {round_no + 1}, extraction alone in {workers}: {alone:.1f} pages/s")
            settings = {**UNTHROTTLED, "EXTRACT_ENGINE": args.engine, **args.setting}
            settings |= {**setups[name], "EXTRACT_WORKERS": str(workers)}
            result = crawl_round(server, settings, f"round {round_no + 1} {_label(name, setups)}")
            measured.crawls[(name, workers)].append(result)
    return measured


def _label(name: str, setups: dict[str, Any]) -> str:
    return "" if len(setups) == 1 else f"{name}, "


def crawl_round(server: SiteServer, settings: dict[str, str], label: str) -> CrawlResult:
    # This process does nothing but serve the site while the crawl runs: its CPU is the
    # server's, which shares the cores with the crawl here and would not on a real site.
    started = time.process_time()
    warc_bytes = None
    if settings.get("WARC_OUTPUT"):
        with tempfile.TemporaryDirectory(prefix="warc-") as folder:
            result = crawl(server, {**settings, "WARC_OUTPUT": folder})
            warc_bytes = sum(path.stat().st_size for path in Path(folder).iterdir())
    else:
        result = crawl(server, settings)
    server_ms = 1000 * (time.process_time() - started) / max(_pages(result), 1)
    line = (
        f"  {label}workers={settings['EXTRACT_WORKERS']}: {rate(result):.1f} pages/s, "
        f"crawl process {crawl_cpu_ms(result):.2f} ms CPU per page "
        f"(collector {gc_ms(result):.2f} ms), site server {server_ms:.1f} ms CPU per page"
    )
    if REMOVED_STAT in result.stats:
        line += f", site memory removed {result.stats[REMOVED_STAT]} blocks"
    if warc_bytes is not None:
        line += f", WARC {warc_bytes / max(_pages(result), 1) / 1024:.1f} KiB per page"
    print(line, flush=True)
    return result


def report(
    measured: Measured,
    setups: dict[str, Any],
    pages: int,
    extract_s: float | None,
    memory: bool,
) -> None:
    """Medians per setup; ``memory``: also memusage/max (the demo site only, see ``main``)."""
    cores = os.cpu_count() or 1
    print(f"pages={pages} cores={cores}")
    if extract_s is not None:
        print(f"single-core extraction: {extract_s:.1f} s, {pages / extract_s:.1f} pages/s")
    for name in setups:
        if len(setups) > 1:
            print(f"{name}:")
        crawls = {w: rs for (n, w), rs in measured.crawls.items() if n == name}
        medians = {w: statistics.median(rate(r) for r in rs) for w, rs in crawls.items()}
        base = medians.get(1)
        for workers, median in medians.items():
            cpu = statistics.median(crawl_cpu_ms(r) for r in crawls[workers])
            line = f"workers={workers}: {median:.1f} pages/s (crawl process {cpu:.2f} ms CPU/page)"
            if base:
                line += f", {median / base:.2f}x of 1 worker"
            if extract_s is not None:
                limit = pages / (extract_s / min(workers, cores))
                line += f", limit {limit:.1f} pages/s ({median / limit:.0%} of it)"
            if memory:
                memusage = max(r.stats.get("memusage/max", 0) for r in crawls[workers])
                line += f"; memusage/max {memusage / 2**20:.0f} MiB"
            print(line)
            if base and workers != 1:
                rates = [[rate(r) for r in crawls[n]] for n in (1, workers)]
                print(f"  crawl {_paired(*rates)}")
                if measured.alone[1] and name == next(iter(setups)):
                    alone = _paired(measured.alone[1], measured.alone[workers])
                    print(f"  extraction alone {alone}")
    compare(measured, setups)


def compare(measured: Measured, setups: dict[str, Any]) -> None:
    """Each variant against the baseline (the first), per worker count, as ratios."""
    baseline, *others = setups
    for name in others:
        for (n, workers), results in measured.crawls.items():
            if n != name:
                continue
            base = measured.crawls[(baseline, workers)]
            print(f"{name} / {baseline}, workers={workers}:")
            for what, value in (("pages/s", rate), ("crawl CPU per page", crawl_cpu_ms)):
                ours, theirs = [value(r) for r in results], [value(r) for r in base]
                medians = statistics.median(ours) / statistics.median(theirs)
                print(f"  {what} {_paired(theirs, ours)}; ratio of medians {medians:.3f}")


def _paired(base: list[float], other: list[float]) -> str:
    """Each round's ratio ``other / base`` (the two runs of a round ran minutes apart at
    most, so the machine's drift cancels better than in the ratio of medians)."""
    ratios = [m / o for o, m in zip(base, other, strict=True)]
    listed = ", ".join(f"{r:.2f}x" for r in ratios)
    return f"per round: {listed}; median {statistics.median(ratios):.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="developer data folder")
    parser.add_argument("--pages", type=int, default=400, help="pages of --data to serve")
    parser.add_argument("--articles", type=int, default=300, help="demo site size (no --data)")
    parser.add_argument("--workers", default="1,2", help="comma-separated EXTRACT_WORKERS")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--engine", default="auto", choices=("auto", "neural", "trafilatura"))
    parser.add_argument(
        "-s", dest="setting", action="append", default=[], help="NAME=VALUE for every crawl"
    )
    parser.add_argument("--compare", choices=sorted(COMPARISONS), help="preset variants")
    parser.add_argument(
        "--variant", action="append", default=[], help="NAME:SETTING=VALUE (repeatable)"
    )
    parser.add_argument(
        "--crawls-only",
        action="store_true",
        help="no crawl alone, single-core limit or extraction alone: only the setups' crawls",
    )
    args = parser.parse_args()
    args.setting = dict(item.split("=", 1) for item in args.setting)
    setups = variants(args)
    options = SiteOptions(articles=args.articles, crawl_delay=None, feeds=False)
    with SiteServer(options, keep_alive=True) as server:
        extract_s = None
        pages = None
        if args.data is not None:
            pages = load_pages(args.data, args.pages)
            serve_pages(server, pages)
            size = statistics.median(len(p.html.encode()) for p in pages)
            print(f"{len(pages)} pages of {DATA_FILE}, median {size / 1024:.0f} KiB")
            if not args.crawls_only:
                extract_s = single_core_seconds(pages, args.engine, server.base_url)
        assert server.site is not None
        count = len(server.site.expected_pages)
        if not args.crawls_only:
            alone = crawl(server, {**UNTHROTTLED, "EXTRACT_ENABLED": "False"})
            print(
                f"crawl alone (extraction off): {len(alone.items) / _elapsed(alone):.1f} "
                f"pages/s, {crawl_cpu_ms(alone):.1f} ms CPU per page"
            )
        measured = measure(server, args, setups, pages)
    report(measured, setups, count, extract_s, memory=args.data is None)
    print(f"engine={args.engine} rounds={args.rounds}")
    if args.data is None:
        # Linux keeps a process's peak RSS across fork and exec: with --data this process
        # holds the pages (and ran the extraction), so its crawls would report its size.
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"peak RSS of the largest process: {peak_kib / 1024:.0f} MiB")


def _elapsed(result: CrawlResult) -> float:
    return float(result.stats["elapsed_time_seconds"])


if __name__ == "__main__":
    main()
