"""Is a crawl with the Redis state within 20% of one with the SQLite file (issue 47's
budget)? The first run of :mod:`benchmarks.recrawl_scale`'s universe with each backend in
turn, ``--rounds`` times (the backends' order alternating), and per round the crawl
process's CPU with Redis over its CPU with SQLite.

    python -m benchmarks.redis_vs_sqlite [--sites 100] [--pages 20] [--rounds 5]
        [--baseline DIR] [--set KEY=VALUE]

The crawl CPU is the crawl process's own threads from ``spider_opened`` to ``spider_closed``
(``benchmarks.common.CrawlCpu``); the process CPU adds its start and end. Redis runs on a
private ``redis-server`` whose CPU is not counted (SQLite's work is in the crawl process).
``--baseline DIR`` crawls with another version's package too (as ``recrawl_scale
--baseline``), each backend's two versions one after the other, and prints its ratios too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from benchmarks.recrawl_scale import Run, run_backend
from benchmarks.scale_universe import Universe


def _first_runs(backend: str, universe: Universe, args: argparse.Namespace) -> list[Run]:
    """The first run of each variant (this tree, then the baseline if any)."""
    with tempfile.TemporaryDirectory(prefix="redis-vs-sqlite-") as tmp:
        variants = run_backend(backend, universe, args, Path(tmp))
    return [(variant.runs or [])[0] for variant in variants]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=100)
    parser.add_argument("--pages", type=int, default=20, help="pages per site")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    # What recrawl_scale's runs read: the first run only, no extraction, no profile.
    args.first_only, args.extract, args.changed = True, False, 0.0
    args.profile = args.tracemalloc = None
    args.round_trips = False
    labels = ["this tree"] + (["baseline"] if args.baseline else [])
    print(
        f"{args.sites} sites x {args.pages} pages, {args.rounds} rounds, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )
    ratios: dict[str, list[tuple[float, float]]] = {label: [] for label in labels}
    with Universe(args.sites, args.pages) as universe:
        for number in range(args.rounds):
            order = ("redis", "sqlite") if number % 2 == 0 else ("sqlite", "redis")
            runs = {backend: _first_runs(backend, universe, args) for backend in order}
            for index, label in enumerate(labels):
                redis, sqlite = runs["redis"][index], runs["sqlite"][index]
                crawl, process = redis.cpu / sqlite.cpu, redis.process_cpu / sqlite.process_cpu
                ratios[label].append((crawl, process))
                print(
                    f"round {number + 1} ({order[0]} first), {label}: crawl CPU redis "
                    f"{redis.cpu:.2f} s / sqlite {sqlite.cpu:.2f} s = {crawl:.2f}; process CPU "
                    f"{redis.process_cpu:.2f} / {sqlite.process_cpu:.2f} = {process:.2f}; load "
                    f"{os.getloadavg()[0]:.1f}",
                    flush=True,
                )
    for label, found in ratios.items():
        crawl = sorted(r[0] for r in found)
        process = sorted(r[1] for r in found)
        print(
            f"{label}: Redis / SQLite crawl CPU median {statistics.median(crawl):.2f} "
            f"(from {crawl[0]:.2f} to {crawl[-1]:.2f}), process CPU median "
            f"{statistics.median(process):.2f} (from {process[0]:.2f} to {process[-1]:.2f})"
        )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
