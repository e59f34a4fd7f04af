"""The first hours of the simulated month as real crawls (``recrawl_month --crawl-hours N``).

The month's site (``benchmarks/month_site.py``, the same seed, so the same changes) is served
on a loopback address, and every hour the sitemap spider and then the feed spider crawl it
(``run_crawl``, extraction off: a page's HTML is what is compared), with one ``CRAWL_STATE``
and the clock set to the hour by ``RECRAWL_NOW``. The requests the server answered are
printed beside the simulation's, run by run: the simulation takes the spiders' steps, and
this shows it takes the same ones.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import tests.sites
from benchmarks.month_site import BASE, HOST, HOUR, PORT, START, MonthSite
from tests.crawl import NO_WAITS, run_crawl
from tests.sites import Route, TestSiteServer

KINDS = ("robots", "sitemap", "feed", "page 200", "page 304")


def kind(path: str, status: int) -> str:
    if path.startswith("/articles/"):
        return f"page {status}"
    if path == "/robots.txt":
        return "robots"
    return "feed" if path == "/feed.xml" else "sitemap"


def compare(mode: str, seed: int, hours: int, simulated: list[Counter[str]], tmp: Path) -> None:
    """Crawl the first ``hours`` of the month with ``RECRAWL_SCHEDULE=mode``; print each run's
    requests by kind, crawled and simulated."""
    tests.sites.SERVE_TIME = 0.0  # the server's pause per answer: only the counts matter here
    site = MonthSite(base=BASE, seed=seed)
    state = tmp / f"crawled-{mode}.sqlite"
    with TestSiteServer(host=HOST, port=PORT) as server:
        for hour in range(hours):
            now = START + hour * HOUR
            site.advance(now)
            assert server.site is not None
            server.site.routes = {
                path: Route(body, ctype, headers=headers)
                for path, (body, ctype, headers) in site.routes().items()
            }
            server.reset()
            settings = {
                **NO_WAITS,
                "EXTRACT_ENABLED": "False",
                "LOG_LEVEL": "WARNING",
                "CRAWL_STATE": str(state),
                "RECRAWL_SCHEDULE": mode,
                "RECRAWL_NOW": str(now),
            }
            for spider, args in (("sitemap", {"domain": BASE}), ("feed", {"url": site.feed_url})):
                result = run_crawl(spider, tmp / f"{mode}-{hour}-{spider}", args, settings)
                assert result.returncode == 0, result.log[-2000:]
            crawled = Counter(kind(h.path, h.status) for h in server.hits)
            expected = _line(simulated[hour])
            print(f"{mode} hour {hour}: crawled {_line(crawled)}; simulated {expected}", flush=True)


def _line(counts: Counter[str]) -> str:
    return f"{sum(counts[k] for k in KINDS)} (" + ", ".join(f"{k} {counts[k]}" for k in KINDS) + ")"
