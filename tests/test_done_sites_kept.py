"""What a finished site leaves behind in the crawl process (issue 47): Twisted's connection
pool and the stall budget keep nothing per site once its requests and connections are gone;
its robots.txt, kept for the spider's copies, is kept compressed when large."""

from __future__ import annotations

import gc
from pathlib import Path

from scrapy import Request
from scrapy.utils.test import get_crawler
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.web._newclient import HTTP11ClientProtocol

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.sites import Route, SiteOptions, TestSiteServer

PAGE = b"<html><body><p>A page.</p></body></html>"


def _idle_connection() -> HTTP11ClientProtocol:
    connection = HTTP11ClientProtocol()
    connection.makeConnection(StringTransport())
    return connection


def test_the_pool_keeps_no_empty_host_list() -> None:
    """Twisted keeps a host's key and an empty list once its last idle connection is
    taken, evicted or timed out; the bounded pool drops them."""
    from scrapy_maintext.scrapy_internals import BoundedConnectionPool

    clock = Clock()
    pool = BoundedConnectionPool(clock, max_idle=2)
    for host in ("a", "b", "c"):
        pool._putConnection(host, _idle_connection())
    # The idle longest (a's) was closed to keep two.
    assert sorted(pool._connections) == ["b", "c"]
    taken = pool.getConnection("b", endpoint=None)
    assert taken.called and sorted(pool._connections) == ["c"]
    clock.advance(pool.cachedConnectionTimeout)
    assert pool._connections == {} and pool._timeouts == {}
    # A host used again gets its list back.
    pool._putConnection("a", _idle_connection())
    assert list(pool._connections) == ["a"]


def test_the_stall_budget_keeps_nothing_per_site() -> None:
    """The requests in the downloader are held weakly in one set: nothing stays for a site
    whose requests are gone, and a stalled site's waiting requests still get their last
    chance (and only that site's)."""
    from scrapy_maintext.politeness.stall import LAST_CHANCE_SHARE, StallBudgetMiddleware
    from scrapy_maintext.vocabulary.names import Meta

    crawler = get_crawler(settings_dict={"STALL_BUDGET": 1, "DOWNLOAD_TIMEOUT": 10})
    middleware = StallBudgetMiddleware(crawler)
    requests = [Request(f"http://site{n}.test/{p}") for n in range(50) for p in range(3)]
    for request in requests:
        middleware.process_request(request)
    assert len(middleware.waiting) == 150
    del requests, request
    gc.collect()
    assert len(middleware.waiting) == 0
    stalled, other = Request("http://slow.test/a"), Request("http://fine.test/a")
    middleware.process_request(stalled)
    middleware.process_request(other)
    middleware._give_up("slow.test")
    assert stalled.meta[Meta.STALL_LAST_CHANCE] is True
    assert stalled.meta["download_timeout"] == 10 * LAST_CHANCE_SHARE
    assert Meta.STALL_LAST_CHANCE not in other.meta and list(middleware.waiting) == [other]


def test_a_large_robots_txt_is_kept_compressed_and_read_whole(tmp_path: Path) -> None:
    """A robots.txt over COMPRESS_KEPT_OVER is kept compressed for the spider's copies; the
    copy is the body as read: its last line's sitemap is found, its rules obeyed."""
    from scrapy_maintext.politeness.robots import COMPRESS_KEPT_OVER, keep_body, kept_body

    rules = "".join(f"Disallow: /private-{n}/\n" for n in range(200)) + "Disallow: /c.html\n"
    with TestSiteServer(
        SiteOptions(articles=1, sitemaps=False, feeds=False, crawl_delay=None)
    ) as server:
        assert server.site is not None
        base = server.base_url
        robots = f"User-agent: *\n{rules}Sitemap: {base}/listed/pages.txt\n".encode()
        assert len(robots) > COMPRESS_KEPT_OVER
        kept = keep_body(robots)
        assert kept[1] and len(kept[0]) < len(robots) // 4 and kept_body(kept) == robots
        pages = ["/a.html", "/b.html", "/c.html"]
        server.site.routes.update(
            {
                "/robots.txt": Route(robots),
                "/listed/pages.txt": Route("".join(f"{base}{p}\n" for p in pages).encode()),
                **{p: Route(PAGE) for p in pages},
            }
        )
        result = run_crawl("sitemap", tmp_path, {"domain": base}, QUICK_DISCOVERY)
        assert result.returncode == 0, result.log[-3000:]
        assert sorted(item["url"].removeprefix(base) for item in result.items) == pages[:2]
        assert not [h for h in server.hits if h.path == "/c.html"]
