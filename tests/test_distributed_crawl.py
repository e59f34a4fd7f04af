"""Several ``scrapy crawl`` workers on one real Redis server crawl one fixture site together."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.demo.content import make_articles

from tests.distributed import Worker, redis_or_skip, run_workers, start_worker, wait_for
from tests.redis_server import RedisServer
from tests.sites import Route, SiteOptions, TestSiteServer, page_html

#: Worker processes on a real Redis server, sharing a Crawl-delay: seconds per test.
pytestmark = pytest.mark.slow

#: Crawl-delay of the shared fixture site (s): well above DOWNLOAD_DELAY (0.1), so every
#: gap the server sees proves that the workers shared the site's robots.txt delay.
CRAWL_DELAY = 0.4
#: Slack between a reserved send time and the server's arrival time (s), as in the
#: single-worker politeness test: a loaded 2-core machine delays a connection by tens of ms.
TOLERANCE = 0.1
ARTICLES = 12


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    yield from redis_or_skip(tmp_path_factory.mktemp("redis"))


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    import redis

    redis.Redis.from_url(redis_server.url).flushall()
    return redis_server.url


@pytest.fixture(scope="module")
def _site_server() -> Iterator[TestSiteServer]:
    options = SiteOptions(articles=ARTICLES, crawl_delay=CRAWL_DELAY)
    with TestSiteServer(options, host="127.0.0.3") as server:
        yield server


@pytest.fixture
def site(_site_server: TestSiteServer) -> TestSiteServer:
    _site_server.reset()
    return _site_server


def page_hits(server: TestSiteServer) -> Counter[str]:
    assert server.site is not None
    return Counter(p for p in server.paths() if p in server.site.expected_pages)


def assert_polite(server: TestSiteServer, crawl_delay: float = CRAWL_DELAY) -> None:
    """After the first robots.txt (read before its Crawl-delay is known), no two requests
    of the workers together came closer than the Crawl-delay."""
    hits = sorted(server.hits, key=lambda h: h.time)
    pairs = list(itertools.pairwise(hits[1:]))
    close = [(a.path, round(a.time, 3), b.path, round(b.time - a.time, 3)) for a, b in pairs]
    too_close = [pair for pair in close if pair[-1] < crawl_delay - TOLERANCE]
    assert pairs and not too_close, too_close


def crawl_args(site: TestSiteServer) -> dict[str, str]:
    return {"domain": site.base_url}


def test_three_workers_crawl_each_page_once_and_politely(
    site: TestSiteServer, redis_url: str, tmp_path: Path
) -> None:
    settings = {"REDIS_URL": redis_url}
    workers = run_workers(3, tmp_path, "sitemap", crawl_args(site), settings, held=[site])

    exported = Counter(p for w in workers for p in w.paths(site.base_url))
    assert site.site is not None
    assert set(exported) == site.site.expected_pages
    assert max(exported.values()) == 1, "a page was exported twice"
    hits = page_hits(site)
    assert set(hits) == site.site.expected_pages and max(hits.values()) == 1, hits
    # Discovery ran once: each sitemap was fetched by one worker only.
    sitemaps = Counter(p for p in site.paths() if p.startswith(("/sitemap", "/sitemaps/")))
    assert sitemaps and max(sitemaps.values()) == 1, sitemaps
    assert sum(w.stats.get("distributed/discovery_claimed", 0) for w in workers) == 1
    # The work was shared, not done by the discovering worker alone.
    assert sum(1 for w in workers if w.items()) >= 2, [len(w.items()) for w in workers]
    assert_polite(site)


def test_feed_crawl_shared_by_two_workers(
    site: TestSiteServer, redis_url: str, tmp_path: Path
) -> None:
    settings = {"REDIS_URL": redis_url}
    workers = run_workers(2, tmp_path, "feed", crawl_args(site), settings)
    assert site.site is not None
    articles = {f"/articles/{a.slug}.html" for a in site.site.articles}
    exported = Counter(p for w in workers for p in w.paths(site.base_url))
    assert set(exported) == articles and max(exported.values()) == 1
    hits = Counter(p for p in site.paths() if p.startswith("/articles/"))
    assert set(hits) == articles and max(hits.values()) == 1
    # The home page and the feeds were read by the discovering worker only.
    assert site.paths().count("/") == 1
    feeds = Counter(p for p in site.paths() if p.startswith(("/feed", "/atom", "/index.rdf")))
    assert feeds and max(feeds.values()) == 1, feeds
    assert_polite(site)


def test_killed_worker_loses_no_page(site: TestSiteServer, redis_url: str, tmp_path: Path) -> None:
    settings = {"REDIS_URL": redis_url}
    workers = [
        start_worker(name, tmp_path, "sitemap", crawl_args(site), settings)
        for name in ("first", "second")
    ]
    # The worker killed is whichever exported pages first: under load one process can start
    # seconds after the other and find most pages taken (waiting for a given one to export
    # made the test flaky), and the test is about any worker killed while it holds pages.
    assert wait_for(lambda: exporting(workers) is not None, timeout=90), "nothing exported"
    killed = exporting(workers)
    assert killed is not None and killed.proc is not None
    assert killed.proc.poll() is None, "the crawl ended before a worker could be killed"
    killed.kill()
    killed.wait()
    survivor = next(w for w in workers if w is not killed)
    survivor.wait()
    assert survivor.returncode == 0, survivor.log[-3000:]

    assert site.site is not None
    exported = Counter(killed.paths(site.base_url) + survivor.paths(site.base_url))
    assert set(exported) == site.site.expected_pages, "a page was lost"
    # Only the (at most 2) pages the killed worker held may have been fetched twice.
    twice = [p for p, n in exported.items() if n > 1]
    assert len(twice) <= 2, twice
    assert max(exported.values()) <= 2
    assert_polite(site)


def exporting(workers: list[Worker], pages: int = 2) -> Worker | None:
    """The first of ``workers`` that has exported ``pages`` pages, if any."""
    return next((w for w in workers if len(w.items()) >= pages), None)


def test_discovery_of_a_killed_worker_is_taken_over(
    site: TestSiteServer, redis_url: str, tmp_path: Path
) -> None:
    import redis

    server = redis.Redis.from_url(redis_url)
    settings = {"REDIS_URL": redis_url}
    first = start_worker("first", tmp_path, "sitemap", crawl_args(site), settings)
    assert wait_for(lambda: server.hlen("maintext:sitemap:discovery") == 1, timeout=60)
    # Its robots.txt read (a kill before that leaves the robots.txt fetch lease to run out,
    # 30 s), it has asked for its first sitemap.
    assert wait_for(lambda: "/sitemap_index.xml" in site.paths(), timeout=60)
    second = start_worker("second", tmp_path, "sitemap", crawl_args(site), settings)
    # Killed during discovery (its sitemaps take a Crawl-delay each), before any page.
    first.kill()
    first.wait()
    assert not first.items()
    second.wait()
    assert second.returncode == 0, second.log[-3000:]
    assert "Taking over the discovery" in second.log
    assert site.site is not None
    exported = Counter(second.paths(site.base_url))
    assert set(exported) == site.site.expected_pages and max(exported.values()) == 1
    assert_polite(site)


def test_stopped_crawl_resumes_and_late_worker_joins(
    site: TestSiteServer, redis_url: str, tmp_path: Path
) -> None:
    settings = {"REDIS_URL": redis_url}
    stopped = start_worker(
        "stopped", tmp_path, "sitemap", crawl_args(site), {**settings, "CLOSESPIDER_ITEMCOUNT": "3"}
    )
    stopped.wait()
    assert stopped.returncode == 0, stopped.log[-3000:]
    assert stopped.stats.get("finish_reason") == "closespider_itemcount"
    assert site.site is not None
    assert 3 <= len(stopped.items()) < len(site.site.expected_pages)

    resumed = start_worker("resumed", tmp_path, "sitemap", crawl_args(site), settings).wait()
    assert resumed.returncode == 0, resumed.log[-3000:]
    assert resumed.stats.get("distributed/discovery_claimed", 0) == 0, "discovery ran again"
    exported = Counter(stopped.paths(site.base_url) + resumed.paths(site.base_url))
    assert set(exported) == site.site.expected_pages
    assert max(exported.values()) == 1
    hits = page_hits(site)
    assert max(hits.values()) == 1, hits


#: Crawl-delay of the small extras site (s).
EXTRAS_DELAY = 0.2
#: Retry-After of its busy page (s): far above the Crawl-delay.
BUSY_RETRY_AFTER = 2
#: Articles of the extras site: enough pages at EXTRAS_DELAY (about 3 s of crawling) that
#: a worker started a second late under load still finds work (4 made "both workers
#: exported something" flaky).
EXTRAS_ARTICLES = 10


@pytest.fixture(scope="module")
def _extras_server() -> Iterator[TestSiteServer]:
    """A small site whose text sitemap also lists a verbatim copy of one article and a page
    answering 429 with Retry-After once."""
    options = SiteOptions(articles=EXTRAS_ARTICLES, crawl_delay=EXTRAS_DELAY)
    with TestSiteServer(options, host="127.0.0.4") as server:
        assert server.site is not None
        routes = server.site.routes
        original = f"/articles/{server.site.articles[0].slug}.html"
        routes["/copy.html"] = routes[original]
        busy = page_html(make_articles(1, seed=99)[0], []).encode()
        routes["/busy.html"] = Route(busy, retry_after_once=BUSY_RETRY_AFTER)
        listing = routes["/sitemaps/pages.txt"]
        extra = f"\n{server.base_url}/copy.html\n{server.base_url}/busy.html\n"
        routes["/sitemaps/pages.txt"] = Route(listing.body + extra.encode(), listing.content_type)
        server.site.expected_pages.add("/busy.html")
        yield server


@pytest.fixture
def copy_site(_extras_server: TestSiteServer) -> TestSiteServer:
    _extras_server.reset()
    return _extras_server


def test_near_duplicate_exported_once_cluster_wide(
    copy_site: TestSiteServer, redis_url: str, tmp_path: Path
) -> None:
    # Site memory learns each site's boilerplate per worker: two workers may then extract
    # the two copies a little differently; off, both copies give the same text.
    settings = {
        "REDIS_URL": redis_url,
        "EXTRACT_ENABLED": "True",
        "EXTRACT_WORKERS": "0",
        "SITE_MEMORY_ENABLED": "False",
    }
    workers = run_workers(2, tmp_path, "sitemap", crawl_args(copy_site), settings)
    site = copy_site.site
    assert site is not None
    original = f"/articles/{site.articles[0].slug}.html"
    fetched = page_hits(copy_site) + Counter(p for p in copy_site.paths() if p == "/copy.html")
    assert fetched[original] == fetched["/copy.html"] == 1
    assert fetched["/busy.html"] == 2  # 429, then the page
    exported = Counter(p for w in workers for p in w.paths(copy_site.base_url))
    assert max(exported.values()) == 1
    assert (original in exported) != ("/copy.html" in exported), "kept both or neither copy"
    assert set(exported) | {original, "/copy.html"} == site.expected_pages | {"/copy.html"}
    dropped = sum(w.stats.get("extract/dropped/duplicate", 0) for w in workers)
    assert dropped == 1


def test_retry_after_pauses_the_site_for_every_worker(
    copy_site: TestSiteServer, redis_url: str, tmp_path: Path
) -> None:
    settings = {"REDIS_URL": redis_url}
    workers = run_workers(2, tmp_path, "sitemap", crawl_args(copy_site), settings, held=[copy_site])
    hits = sorted(copy_site.hits, key=lambda h: h.time)
    busy = next(i for i, h in enumerate(hits) if h.status == 429)
    assert busy + 1 < len(hits), "nothing was fetched after the 429"
    # The pause starts when the 429 arrives (SERVE_TIME after the server saw the request).
    gap = hits[busy + 1].time - hits[busy].time
    assert gap >= BUSY_RETRY_AFTER - TOLERANCE, (gap, [h.path for h in hits])
    assert sum(w.stats.get("politeness/shared/retry_after_pauses", 0) for w in workers) == 1
    assert sum(1 for w in workers if w.items()) == 2, "one worker did all the work"


def test_two_sites_each_at_its_own_delay(
    site: TestSiteServer, copy_site: TestSiteServer, redis_url: str, tmp_path: Path
) -> None:
    settings = {"REDIS_URL": redis_url}
    args = {"domain": f"{site.base_url},{copy_site.base_url}"}
    workers = run_workers(2, tmp_path, "sitemap", args, settings)
    exported = Counter(p for w in workers for p in w.paths(""))
    for server in (site, copy_site):
        assert server.site is not None
        mine = Counter({p.removeprefix(server.base_url): n for p, n in exported.items()})
        pages = {p for p in mine if p in server.site.expected_pages}
        assert pages == server.site.expected_pages, server.base_url
        assert max(mine[p] for p in pages) == 1
    # Each site was discovered once, by either worker, and kept its own Crawl-delay.
    assert sum(w.stats.get("distributed/discovery_claimed", 0) for w in workers) == 2
    assert_polite(site)
    assert_polite(copy_site, EXTRAS_DELAY)
