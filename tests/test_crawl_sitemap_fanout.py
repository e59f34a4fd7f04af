"""A sitemap index tree that fans out 20 ways: the good pages come out early.

Every index lists 20 child indexes (old ``lastmod``), without end; the root also lists, last,
a sitemap of the site's articles with the newest ``lastmod``. Read in document order and
breadth first, every sitemap up to ``DISCOVERY_MAX_SITEMAPS`` came before the first page,
and every index past the depth limit was a warning of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from scrapy_maintext.demo.site import SiteOptions

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.sites import Route, TestSiteServer

FAN_OUT = 20
#: Articles listed by the one good sitemap.
GOOD_PAGES = 5
MAX_SITEMAPS = 100
MAX_DEPTH = 2
IN_DOWNLOADER = 4

_INDEX = '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'


@dataclass
class FanOutServer(TestSiteServer):
    """The demo site's articles behind an endless sitemap index tree."""

    __test__ = False

    def route(self, path: str) -> Route:
        base = self.base_url
        if path == "/robots.txt":
            return Route(f"User-agent: *\nSitemap: {base}/fan/root.xml\n".encode(), "text/plain")
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
        # Requests already handed to the downloader go first, whatever their priority: at
        # most this many (Scrapy's default, 16, lets a loaded machine's timing show).
        "CONCURRENT_REQUESTS": str(IN_DOWNLOADER),
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
    # once DISCOVERY_SITEMAPS_BEFORE_PAGES sitemaps are read, not after all of them.
    assert paths.index("/posts.xml") <= 5, paths[:6]
    # robots.txt, the root, its newest child (the good sitemap) and the index whose 20
    # children put more than DISCOVERY_SITEMAPS_BEFORE_PAGES sitemaps in waiting; then the
    # pages, behind at most the requests the downloader holds already.
    assert first_page <= 4 + IN_DOWNLOADER + 2, paths[: first_page + 1]
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
