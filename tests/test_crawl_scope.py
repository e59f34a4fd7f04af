"""Where discovery may lead a crawl: sitemap indexes stay on the site (or hosts its
robots.txt names)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.sites import Route, SiteOptions, TestSiteServer


@pytest.fixture
def indexed_site(bare_site: TestSiteServer) -> Iterator[TestSiteServer]:
    """A site whose sitemap index also lists a sitemap on another host (the bare site)."""
    with TestSiteServer(SiteOptions(articles=3, feeds=False, crawl_delay=None)) as server:
        site = server.site
        assert site is not None
        index = site.routes["/sitemap_index.xml"].body
        foreign = f"<sitemap><loc>{bare_site.base_url}/sitemap.xml</loc></sitemap>".encode()
        site.routes["/sitemap_index.xml"] = Route(
            index.replace(b"</sitemapindex>", foreign + b"</sitemapindex>"), "application/xml"
        )
        yield server


def test_sitemap_index_is_not_followed_to_another_host(
    indexed_site: TestSiteServer, bare_site: TestSiteServer, tmp_path: Path
) -> None:
    site = indexed_site.site
    assert site is not None
    result = run_crawl("sitemap", tmp_path, {"domain": indexed_site.base_url}, QUICK_DISCOVERY)
    assert result.returncode == 0, result.log[-3000:]
    assert bare_site.paths() == []
    assert result.stats.get("discovery/sitemaps/offsite") == 1
    assert set(result.paths(indexed_site.base_url)) == site.expected_pages


def test_sitemap_named_by_robots_txt_may_live_on_another_host(
    indexed_site: TestSiteServer, bare_site: TestSiteServer, tmp_path: Path
) -> None:
    site = indexed_site.site
    assert site is not None
    robots = site.routes["/robots.txt"].body + f"Sitemap: {bare_site.base_url}/x.xml\n".encode()
    site.routes["/robots.txt"] = Route(robots, "text/plain")
    result = run_crawl("sitemap", tmp_path, {"domain": indexed_site.base_url}, QUICK_DISCOVERY)
    assert result.returncode == 0, result.log[-3000:]
    # Named by robots.txt: its host is vouched for, and the index's child there is asked too.
    assert sorted(bare_site.paths()) == ["/robots.txt", "/sitemap.xml", "/x.xml"]
    assert not result.stats.get("discovery/sitemaps/offsite")


@pytest.fixture
def feed_host(bare_site: TestSiteServer) -> Iterator[TestSiteServer]:
    """A feed host whose RSS feed lists articles of another host (the bare site) and
    names that host as its home page."""
    articles = bare_site.site.articles[:3] if bare_site.site else []
    items = "".join(
        f"<item><title>{a.title}</title>"
        f"<link>{bare_site.base_url}/articles/{a.slug}.html</link></item>"
        for a in articles
    )
    rss = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Valley Chronicle</title>'
        f"<link>{bare_site.base_url}/</link>{items}</channel></rss>"
    )
    with TestSiteServer(SiteOptions(articles=1, sitemaps=False, feeds=False)) as server:
        assert server.site is not None
        server.site.routes["/rss"] = Route(rss.encode(), "application/rss+xml")
        yield server


def test_feed_given_directly_covers_its_home_site(
    feed_host: TestSiteServer, bare_site: TestSiteServer, tmp_path: Path
) -> None:
    assert bare_site.site is not None
    expected = {f"/articles/{a.slug}.html" for a in bare_site.site.articles[:3]}
    result = run_crawl("feed", tmp_path, {"url": f"{feed_host.base_url}/rss"}, QUICK_DISCOVERY)
    assert result.returncode == 0, result.log[-3000:]
    assert set(result.paths(bare_site.base_url)) == expected
    assert not result.stats.get("discovery/rejected/offsite")
