"""How long after its first request does a site behind a huge sitemap tree give its first page?

The fan-out site of ``tests/test_crawl_sitemap_fanout.py``: every sitemap index lists 20 child
indexes without end, and the root also lists, last, the sitemap of the site's 5 articles with
the newest ``lastmod``. Its robots.txt asks for ``Crawl-delay`` (1 s). One ``maintext crawl
sitemap`` in a fresh process, default settings (``DISCOVERY_MAX_SITEMAPS`` 1,000), stopped
once the first article was requested: prints how many requests came before it, and the
seconds between the first request and it, from the server's log.

    python -m benchmarks.sitemap_fanout [--crawl-delay 1] [--timeout 120]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scrapy_maintext.demo.site import SiteOptions

from tests.sites import Route
from tests.test_crawl_sitemap_fanout import FanOutServer


class DelayedFanOut(FanOutServer):
    """The fan-out site with a Crawl-delay line of ``crawl_delay`` seconds."""

    __test__ = False
    crawl_delay = 1.0

    def route(self, path: str) -> Route:
        if path == "/robots.txt":
            robots = (
                f"User-agent: *\nCrawl-delay: {self.crawl_delay:g}\n"
                f"Sitemap: {self.base_url}/fan/root.xml\n"
            )
            return Route(robots.encode(), "text/plain")
        return super().route(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl-delay", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=120.0, help="give up after (s)")
    args = parser.parse_args()
    DelayedFanOut.crawl_delay = args.crawl_delay
    options = SiteOptions(sitemaps=False, feeds=False, crawl_delay=None)
    with DelayedFanOut(options, host="127.0.0.4") as server, tempfile.TemporaryDirectory() as tmp:
        command = [
            *(sys.executable, "-m", "scrapy_maintext", "crawl", "sitemap"),
            *("-a", f"domain={server.base_url}", "-O", str(Path(tmp) / "items.jsonl")),
            *("-s", "EXTRACT_ENABLED=False"),
        ]
        proc = subprocess.Popen(
            command, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + args.timeout
        page = None
        while page is None and time.monotonic() < deadline:
            time.sleep(0.2)
            page = next((h for h in list(server.hits) if h.path.startswith("/articles/")), None)
        proc.terminate()
        proc.wait(60)
        hits = list(server.hits)
    if page is None:
        raise SystemExit(f"no page requested within {args.timeout:g} s")
    before = hits.index(page)
    seconds = page.time - hits[0].time
    print(
        f"Crawl-delay {args.crawl_delay:g} s: the first page is request {before + 1}, "
        f"{seconds:.1f} s after the first request"
    )
    print("  requests before it: " + ", ".join(h.path for h in hits[:before]))


if __name__ == "__main__":
    main()
