"""Does a broad crawl finish under the usual open-file limit, with nothing dropped, and what
does it take (wall time, files held, memory)?

    python -m benchmarks.open_files [--sites 1000] [--pages 2] [--crawl-delay 0.5]
        [--open-files 1024] [-s NAME=VALUE ...]

Serves ``--sites`` small sites on loopback addresses (127.0.1.1 and up, one download slot
each; ``tests/many_sites.py``), each with a robots.txt (``Crawl-delay``), a sitemap and
``--pages`` pages of text of their own, over HTTP/1.1 with keep-alive, all from one asyncio
loop in this process (whose own limit is raised). Then crawls them with ``scrapy crawl
sitemap -a domains_file=sites.txt`` in a process whose open-file limit, soft and hard, is
``--open-files`` (``ulimit -n 1024``, the default of most Linux machines and systemd
services), with the shipped settings.

Prints the crawl's wall time (start-up included) and Scrapy's ``elapsed_time_seconds``, the
documents exported against the pages served, every ``extract/dropped/*`` stat, the pools
replaced and pages retried, the most files the crawl process held (``files/open_max``), its
peak memory (``memusage/max``) and the budget line the crawl logged. Exits 1 when a page is
missing or dropped.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from tests.crawl import run_crawl
from tests.many_sites import ManySites

CONTACT = "mailto:benchmark@example.org"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sites", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=2, help="pages per site")
    parser.add_argument("--crawl-delay", type=float, default=0.5)
    parser.add_argument("--open-files", type=int, default=1024, help="the crawl's ulimit -n")
    parser.add_argument("--timeout", type=float, default=900, help="seconds before giving up")
    parser.add_argument(
        "-s", dest="setting", action="append", default=[], help="NAME=VALUE for the crawl"
    )
    args = parser.parse_args()
    settings = {"CRAWLER_CONTACT": CONTACT, **dict(s.split("=", 1) for s in args.setting)}
    with (
        ManySites(args.sites, pages=args.pages, crawl_delay=args.crawl_delay) as sites,
        tempfile.TemporaryDirectory() as tmp,
    ):
        domains = sites.write_domains(Path(tmp) / "sites.txt")
        started = time.monotonic()
        result = run_crawl(
            "sitemap",
            Path(tmp),
            {"domains_file": str(domains)},
            settings,
            timeout=args.timeout,
            open_files=args.open_files,
        )
        wall = time.monotonic() - started
        served = sites.requests
    stats = result.stats
    dropped = {k: v for k, v in stats.items() if k.startswith("extract/dropped/")}
    print(
        f"sites={args.sites} pages={sites.expected} open-files={args.open_files} "
        f"crawl-delay={args.crawl_delay}"
    )
    elapsed = stats.get("elapsed_time_seconds", 0)
    print(
        f"exit {result.returncode}; wall {wall:.0f} s (crawl {elapsed:.0f} s); "
        f"{len(result.items)} of {sites.expected} pages exported; {served} requests served"
    )
    print(
        f"dropped {dropped or 'none'}; pools replaced {stats.get('extract/pool_replaced', 0)}, "
        f"pages retried {stats.get('extract/retried', 0)}; errors logged "
        f"{stats.get('log_count/ERROR', 0)}"
    )
    print(
        f"files/open_max {stats.get('files/open_max')}; "
        f"memusage/max {stats.get('memusage/max', 0) / 2**20:.0f} MiB"
    )
    for line in result.log.splitlines():
        if "Open files:" in line:
            print(line.split("] ", 1)[-1])
    complete = result.returncode == 0 and len(result.items) == sites.expected and not dropped
    if not complete:
        print(result.log[-3000:], file=sys.stderr)
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
