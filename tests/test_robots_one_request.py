"""A site's robots.txt is one request cycle (issue 47): the sitemap spider's robots.txt
request is the site's download, not a second request answered with a copy of Scrapy's.
Real crawls of small sites on 127.0.0.1 (each on its own port: a site of its own), the
server logging every request; what a crawl finds is what Scrapy's own download found
(redirects followed, retries, a redirect loop, a 5xx, a refused connection)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawl import QUICK_DISCOVERY, CrawlResult, run_crawl
from tests.sites import Route, SiteOptions, TestSiteServer
from tests.warc_checks import read_warc

PAGE = b"<html><body><p>A page of the site, with a few words.</p></body></html>"
PAGES = ("/a.html", "/b.html", "/c.html")
#: One site at a time: the second site's robots.txt request is sent from a callback of the
#: first site's pages (a Referer the spider's request would otherwise carry).
ONE_SITE_AT_ONCE = {**QUICK_DISCOVERY, "DISCOVERY_SITES_AT_ONCE": "1"}


def tiny_site() -> TestSiteServer:
    """robots.txt forbidding /c.html and naming a text sitemap of three pages, which is
    also at a usual path (/sitemap.txt) for a crawl that cannot read robots.txt."""
    server = TestSiteServer(SiteOptions(articles=1, sitemaps=False, feeds=False, crawl_delay=None))
    server.start()
    assert server.site is not None
    listing = "".join(f"{server.base_url}{path}\n" for path in PAGES).encode()
    robots = f"User-agent: *\nDisallow: /c.html\nSitemap: {server.base_url}/s.txt\n"
    server.site.routes.update(
        {
            "/robots.txt": Route(robots.encode()),
            "/s.txt": Route(listing),
            "/sitemap.txt": Route(listing),
            **{path: Route(PAGE) for path in PAGES},
        }
    )
    return server


@pytest.fixture
def sites() -> Iterator[list[TestSiteServer]]:
    servers = [tiny_site(), tiny_site()]
    yield servers
    for server in servers:
        server.stop()


def crawl(sites: list[TestSiteServer], out: Path, *extra: str, **settings: str) -> CrawlResult:
    domains = ",".join([*(site.base_url for site in sites), *extra])
    return run_crawl("sitemap", out, {"domain": domains}, {**ONE_SITE_AT_ONCE, **settings})


def robots_hits(site: TestSiteServer) -> list[tuple[str, int]]:
    return [(hit.path, hit.status) for hit in site.hits if hit.path.startswith("/robots")]


def pages_of(result: CrawlResult, site: TestSiteServer) -> list[str]:
    return sorted(path for path in result.paths(site.base_url) if not path.startswith("http"))


def test_robots_txt_is_one_request_cycle_per_site(
    sites: list[TestSiteServer], tmp_path: Path
) -> None:
    warc = tmp_path / "warc"
    result = crawl(sites, tmp_path, WARC_OUTPUT=str(warc))
    assert result.returncode == 0, result.log[-3000:]
    for site in sites:
        assert pages_of(result, site) == ["/a.html", "/b.html"]  # /c.html is forbidden
        assert robots_hits(site) == [("/robots.txt", 200)]
        # Sent as Scrapy's robots.txt download is: the second site's request, yielded
        # from a page of the first, does not name that page.
        assert [hit.referer for hit in site.hits if hit.path == "/robots.txt"] == [""]
    downloads = sum(len(site.hits) for site in sites)
    stats = result.stats
    # Every engine cycle was a download: no robots.txt copy went through the downloader's
    # middlewares and the spider's (there was one a site).
    assert stats["response_received_count"] == downloads
    assert stats["downloader/response_count"] == stats["downloader/request_count"] == downloads
    assert stats["robotstxt/request_count"] == stats["robotstxt/response_count"] == len(sites)
    # Archived once a site, as received.
    records = [r for path in sorted(warc.glob("*.warc.gz")) for r in read_warc(path)]
    robots = [r.url for r in records if r.type == "response" and r.url.endswith("/robots.txt")]
    assert sorted(robots) == sorted(f"{site.base_url}/robots.txt" for site in sites)


def test_a_redirected_robots_txt_is_followed(sites: list[TestSiteServer], tmp_path: Path) -> None:
    """301 to another path (an https redirect, a CDN): followed, its rules obeyed, and the
    spider reads its Sitemap lines against the URL it asked for."""
    routes = sites[0].site.routes  # type: ignore[union-attr]
    routes["/robots-live.txt"] = routes["/robots.txt"]
    routes["/robots.txt"] = Route(b"", status=301, headers={"Location": "/robots-live.txt"})
    result = crawl(sites, tmp_path)
    assert result.returncode == 0, result.log[-3000:]
    assert robots_hits(sites[0]) == [("/robots.txt", 301), ("/robots-live.txt", 200)]
    assert pages_of(result, sites[0]) == ["/a.html", "/b.html"]
    assert result.stats["robotstxt/response_status_count/200"] == 2


def test_a_robots_txt_redirect_loop_reads_as_no_robots_txt(
    sites: list[TestSiteServer], tmp_path: Path
) -> None:
    """Too many redirects (RedirectMiddleware gives up after its middleware): the site has
    no rules, as with Scrapy's download, its usual sitemap paths are tried, and nothing
    waits for the rules."""
    routes = sites[0].site.routes  # type: ignore[union-attr]
    routes["/robots.txt"] = Route(b"", status=302, headers={"Location": "/robots-b.txt"})
    routes["/robots-b.txt"] = Route(b"", status=302, headers={"Location": "/robots.txt"})
    result = crawl(sites, tmp_path, REDIRECT_MAX_TIMES="3")
    assert result.returncode == 0, result.log[-3000:]
    assert len(robots_hits(sites[0])) == 4  # the first request and three redirects
    assert pages_of(result, sites[0]) == list(PAGES)  # through /sitemap.txt, none forbidden
    assert pages_of(result, sites[1]) == ["/a.html", "/b.html"]
    assert result.stats["robotstxt/request_count"] == 2


def test_a_robots_txt_answering_503_is_retried_then_the_site_is_off_limits(
    sites: list[TestSiteServer], tmp_path: Path
) -> None:
    sites[0].site.routes["/robots.txt"] = Route(b"down", status=503)  # type: ignore[union-attr]
    result = crawl(sites, tmp_path, RETRY_AFTER_DEFAULT_DELAY="0.1")
    assert result.returncode == 0, result.log[-3000:]
    # The first answer and RETRY_AFTER_MAX_RETRIES (3) more; then no Scrapy retries.
    assert robots_hits(sites[0]) == [("/robots.txt", 503)] * 4
    assert result.stats["politeness/retry_after/gave_up"] == 1
    assert [hit.path for hit in sites[0].hits if not hit.path.startswith("/robots")] == []
    assert pages_of(result, sites[1]) == ["/a.html", "/b.html"]
    assert result.stats["politeness/robots_unreachable"] == 1
    errors = [line for line in result.log.splitlines() if "] ERROR:" in line]
    assert len(errors) == 1 and "answered HTTP 503" in errors[0], errors


def test_a_robots_txt_answering_429_once_is_asked_again(
    sites: list[TestSiteServer], tmp_path: Path
) -> None:
    routes = sites[0].site.routes  # type: ignore[union-attr]
    routes["/robots.txt"].retry_after_once = 0  # type: ignore[attr-defined]
    result = crawl(sites, tmp_path)
    assert result.returncode == 0, result.log[-3000:]
    assert robots_hits(sites[0]) == [("/robots.txt", 429), ("/robots.txt", 200)]
    assert pages_of(result, sites[0]) == ["/a.html", "/b.html"]


def test_a_site_refusing_connections_is_said_once(
    sites: list[TestSiteServer], tmp_path: Path
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    result = crawl(sites, tmp_path, closed)
    assert result.returncode == 0, result.log[-3000:]
    for site in sites:
        assert pages_of(result, site) == ["/a.html", "/b.html"]
    errors = [line for line in result.log.splitlines() if "] ERROR:" in line]
    assert len(errors) == 1 and f"Cannot crawl {closed}: connection refused" in errors[0], errors
    assert result.stats["politeness/robots_unreachable"] == 1
