"""Crawl throughput with the site memory on and off, interleaved, as a ratio.

    python -m benchmarks.site_memory_throughput [--articles 300] [--rounds 3] [--engine auto]

Crawls the demo site (every article shares one template) through the sitemap spider and the
extraction pipeline, politeness off as in ``benchmarks.crawl_throughput``, alternating
``SITE_MEMORY_ENABLED`` on and off for ``--rounds`` rounds (the order flips every round so
that neither setting always runs on a warmer machine). Pages per second are items over the
crawl's own ``elapsed_time_seconds`` (Scrapy start-up excluded); the ratio is of medians.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions

from benchmarks.crawl_throughput import UNTHROTTLED
from tests.crawl import run_crawl


def crawl_rate(server: SiteServer, memory: bool, engine: str, workers: int | None) -> float:
    settings = {**UNTHROTTLED, "EXTRACT_ENGINE": engine, "SITE_MEMORY_ENABLED": str(memory)}
    if workers is not None:
        settings["EXTRACT_WORKERS"] = str(workers)
    with tempfile.TemporaryDirectory() as tmp:
        result = run_crawl("sitemap", Path(tmp), {"domain": server.base_url}, settings)
    if result.returncode != 0:
        raise SystemExit(result.log[-3000:])
    elapsed = float(result.stats["elapsed_time_seconds"])
    removed = result.stats.get("extract/site_memory/blocks_removed", 0)
    print(
        f"  memory={'on ' if memory else 'off'} {len(result.items)} items in {elapsed:.2f} s: "
        f"{len(result.items) / elapsed:.1f} pages/s, blocks removed {removed}"
    )
    return len(result.items) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--articles", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--engine", default="auto", choices=("auto", "neural", "trafilatura"))
    args = parser.parse_args()
    rates: dict[bool, list[float]] = {True: [], False: []}
    options = SiteOptions(articles=args.articles, crawl_delay=None, feeds=False)
    with SiteServer(options) as server:
        for n in range(args.rounds):
            order = (True, False) if n % 2 == 0 else (False, True)
            for memory in order:
                rates[memory].append(crawl_rate(server, memory, args.engine, args.workers))
    on, off = statistics.median(rates[True]), statistics.median(rates[False])
    print(f"engine={args.engine} articles={args.articles} rounds={args.rounds}")
    print(f"median pages/s: memory on {on:.1f}, off {off:.1f}; on/off = {on / off:.3f}")


if __name__ == "__main__":
    main()
