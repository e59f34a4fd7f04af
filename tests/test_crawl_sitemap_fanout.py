"""A sitemap index tree that fans out 20 ways: the good pages come out early.

Every index lists 20 child indexes (old ``lastmod``), without end; the root also lists, last,
a sitemap of the site's articles with the newest ``lastmod``. Read in document order and
breadth first, every sitemap up to ``DISCOVERY_MAX_SITEMAPS`` came before the first page,
and every index past the depth limit was a warning of its own. Later, with every sitemap
handed to Scrapy at once, the pages found early still waited behind the sitemaps the
downloader already held (``CONCURRENT_REQUESTS`` of them): now the spider holds a site's
sitemaps back, two at a time in Scrapy, and the pages go out between them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scrapy_maintext.demo.site import SiteOptions
from scrapy_maintext.spiders.sites import SitemapQueue

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.sites import Route, TestSiteServer

FAN_OUT = 20
#: Articles listed by the one good sitemap.
GOOD_PAGES = 5
MAX_SITEMAPS = 100
MAX_DEPTH = 2
#: Small enough for a quick test; a real delay would only stretch the same order.
CRAWL_DELAY = 0.02

_INDEX = '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'


@dataclass
class FanOutServer(TestSiteServer):
    """The demo site's articles behind an endless sitemap index tree."""

    __test__ = False

    def route(self, path: str) -> Route:
        base = self.base_url
        if path == "/robots.txt":
            robots = f"User-agent: *\nCrawl-delay: {CRAWL_DELAY}\nSitemap: {base}/fan/root.xml\n"
            return Route(robots.encode(), "text/plain")
        if path.startswith("/fan/") and path.endswith(".xml"):
            name = path.removeprefix("/fan/").removesuffix(".xml")
            children = "".join(
                f"<sitemap><loc>{base}/fan/{name}-{k}.xml</loc>"
                f"<lastmod>2020-01-{1 + k:02d}</lastmod></sitemap>"
                for k in range(FAN_OUT)
            )
            if name == "root":
                children += (
                    f"<sitemap><loc>{base}/posts.xml</loc><lastmod>2026-05-01</lastmod></sitemap>"
                )
            return Route((_INDEX + children + "</sitemapindex>").encode(), "application/xml")
        if path == "/posts.xml":
            assert self.site is not None
            urls = "".join(
                f"<url><loc>{base}/articles/{a.slug}.html</loc></url>"
                for a in self.site.articles[:GOOD_PAGES]
            )
            urlset = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            body = f"<?xml version='1.0'?>{urlset}{urls}</urlset>"
            return Route(body.encode(), "application/xml")
        return super().route(path)


@pytest.fixture
def fan_out() -> Iterator[FanOutServer]:
    options = SiteOptions(sitemaps=False, feeds=False, crawl_delay=None)
    with FanOutServer(options, host="127.0.0.4") as server:
        yield server


def test_good_pages_come_out_early_and_depth_is_said_once(
    fan_out: FanOutServer, tmp_path: Path
) -> None:
    settings = {
        **QUICK_DISCOVERY,
        "DOWNLOAD_TIMEOUT": "10",  # no retries on a loaded machine: the order is the subject
        "DISCOVERY_MAX_SITEMAPS": str(MAX_SITEMAPS),
        "DISCOVERY_SITEMAP_MAX_DEPTH": str(MAX_DEPTH),
    }
    result = run_crawl("sitemap", tmp_path, {"domain": fan_out.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == GOOD_PAGES
    paths = fan_out.paths()
    first_page = next(i for i, p in enumerate(paths) if p.startswith("/articles/"))
    sitemaps_read = len({p for p in paths if p.endswith(".xml")})
    assert sitemaps_read == MAX_SITEMAPS
    # The newest sitemap (listed last) is read right after the root, and its pages go out
    # once more than DISCOVERY_SITEMAPS_BEFORE_PAGES sitemaps wait, not after all of them.
    assert paths.index("/posts.xml") == 2, paths[:6]
    # robots.txt, the root, its newest child (the good sitemap), the index whose 20 children
    # put more than DISCOVERY_SITEMAPS_BEFORE_PAGES sitemaps in waiting, and the two
    # sitemaps in Scrapy's hands (Scrapy's 16 requests in the downloader hold no more).
    assert first_page <= 6, paths[: first_page + 1]
    # The rest of the tree is read after the pages, not before them.
    assert sum(p.endswith(".xml") for p in paths[first_page:]) > MAX_SITEMAPS - 10
    assert result.stats["discovery/sitemaps/too_deep"] > 100
    too_deep = [line for line in result.log.splitlines() if "nesting too deep" in line]
    assert len(too_deep) == 1, too_deep
    assert f"{result.stats['discovery/sitemaps/too_deep']} sitemaps not read" in too_deep[0]
    over = [line for line in result.log.splitlines() if "Too many sitemaps" in line]
    assert len(over) == 1


def test_without_early_pages_every_sitemap_comes_first(
    fan_out: FanOutServer, tmp_path: Path
) -> None:
    settings = {
        **QUICK_DISCOVERY,
        "DOWNLOAD_TIMEOUT": "10",  # no retries on a loaded machine: the order is the subject
        "DISCOVERY_MAX_SITEMAPS": str(MAX_SITEMAPS),
        "DISCOVERY_SITEMAP_MAX_DEPTH": str(MAX_DEPTH),
        "DISCOVERY_SITEMAPS_BEFORE_PAGES": "0",
    }
    result = run_crawl("sitemap", tmp_path, {"domain": fan_out.base_url}, settings)
    paths = fan_out.paths()
    first_page = next(i for i, p in enumerate(paths) if p.startswith("/articles/"))
    assert first_page == MAX_SITEMAPS + 1  # robots.txt, then every sitemap
    assert len(result.items) == GOOD_PAGES


def test_sitemap_queue_order_and_limit() -> None:
    queue = SitemapQueue()
    old, new = datetime(2020, 1, 1, tzinfo=UTC), datetime(2026, 5, 1, tzinfo=UTC)
    for name, depth, lastmod in [
        ("undated", 1, None),
        ("old", 1, old),
        ("new", 1, new),
        ("deep", 2, old),
        ("old-again", 1, old),
    ]:
        queue.push(name, depth, lastmod)
    assert queue.release(2) == ["deep", "new"]
    assert queue.release(2) == []  # two in flight
    queue.answered()
    assert queue.release(2) == ["old"]
    queue.answered()
    queue.answered()
    assert queue.release(2) == ["old-again", "undated"]
