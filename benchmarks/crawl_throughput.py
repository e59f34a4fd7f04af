"""Throughput and memory of a whole crawl through the extraction pipeline, on the demo site.

    python -m benchmarks.crawl_throughput [--articles 300] [--workers N] [--engine auto]

Politeness is switched off for this local, generated site only (no delay, 8 requests at a
time), so the figure is what the crawler itself can do: download, extract in the worker
pool, export. Reports pages per second, the pipeline's stats, Scrapy's ``memusage/max`` of
the crawl process and the peak RSS of the largest process (crawl or extraction worker).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions

from tests.crawl import run_crawl

#: For a local benchmark only: no delay, several requests at once.
UNTHROTTLED = {
    "DOWNLOAD_DELAY": "0",
    "AUTOTHROTTLE_ENABLED": "False",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
    "LOG_LEVEL": "WARNING",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--articles", type=int, default=300)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--engine", default="auto", choices=("auto", "neural", "trafilatura"))
    args = parser.parse_args()
    settings = {**UNTHROTTLED, "EXTRACT_ENGINE": args.engine}
    if args.workers is not None:
        settings["EXTRACT_WORKERS"] = str(args.workers)
    options = SiteOptions(articles=args.articles, crawl_delay=None, feeds=False)
    with tempfile.TemporaryDirectory() as tmp, SiteServer(options) as server:
        started = time.perf_counter()
        result = run_crawl("sitemap", Path(tmp), {"domain": server.base_url}, settings)
        elapsed = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    stats = result.stats
    print(f"engine={args.engine} workers={args.workers or 'cpu count'}")
    print(
        f"{len(result.items)} items in {elapsed:.1f} s: {len(result.items) / elapsed:.1f} pages/s"
    )
    print(
        f"extract/neural={stats.get('extract/neural', 0)} "
        f"extract/trafilatura={stats.get('extract/trafilatura', 0)} "
        f"dropped/duplicate={stats.get('extract/dropped/duplicate', 0)}"
    )
    print(f"memusage/max (crawl process): {stats.get('memusage/max', 0) / 2**20:.0f} MiB")
    print(f"peak RSS of the largest process: {peak_kib / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
