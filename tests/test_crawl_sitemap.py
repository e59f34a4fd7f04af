"""``scrapy crawl sitemap`` against the hostile fixture site, checked from the server's side.

The tests that measure the gaps between requests crawl the polite copy of the site (with a
Crawl-delay) in a fresh ``scrapy crawl`` process, and take seconds; the others crawl the site
without Crawl-delay in the test process.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CRAWL_DELAY
from tests.crawl import DISCOVERY_ONLY, NO_WAITS, QUICK_DISCOVERY, run_crawl
from tests.sites import SERVE_TIME, TestSiteServer

#: Slack between Scrapy's send times and the server's arrival times (seconds): a loaded
#: 2-core machine delays single connections by tens of milliseconds. Still far below the
#: gap between Crawl-delay (0.4 s) and the DOWNLOAD_DELAY (0.1 s) the tests set.
TOLERANCE = 0.1
#: Requests that are not pages: discovery documents.
DISCOVERY = ("/robots.txt", "/sitemap", "/sitemaps/", "/feed", "/atom.xml", "/index.rdf", "/xxe")


def page_hits(server: TestSiteServer) -> Counter[str]:
    return Counter(p for p in server.paths() if not p.startswith(DISCOVERY))


def test_sitemap_crawl_fetches_each_allowed_page_once(
    hostile_site: TestSiteServer, tmp_path: Path
) -> None:
    site = hostile_site.site
    assert site is not None
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": hostile_site.base_url},
        QUICK_DISCOVERY,
    )
    assert result.returncode == 0, result.log[-3000:]

    exported = Counter(result.paths(hostile_site.base_url))
    assert set(exported) == site.expected_pages
    assert max(exported.values()) == 1

    hits = page_hits(hostile_site)
    assert not set(hits) & site.disallowed, "robots.txt Disallow was not obeyed"
    assert "/files/report.pdf" not in hits
    for path in site.expected_pages - {"/busy.html"}:
        assert hits[path] == 1, path
    assert hits["/busy.html"] == 2  # 429 once, then the page
    assert hostile_site.paths().count("/robots.txt") == 1

    stats = result.stats
    assert stats["discovery/invalid/hostile_xml"] == 1
    assert stats["discovery/invalid/gzip_bomb"] == 1
    assert stats["discovery/rejected/duplicate"] >= 1
    assert stats["discovery/page_errors/http_404"] == 1
    assert stats["discovery/page_errors/robots_forbidden"] == 1
    assert stats["discovery/skipped/non_html"] == 1
    assert stats["politeness/retry_after"] == 1
    assert stats["discovery/page_errors/timeout"] == 1  # after Scrapy's own retries


@pytest.mark.slow
def test_sitemap_crawl_is_polite(polite_site: TestSiteServer, tmp_path: Path) -> None:
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": polite_site.base_url, "max_pages": "6"},
        DISCOVERY_ONLY,
        fresh_process=True,
    )
    assert result.returncode == 0, result.log[-3000:]
    assert (
        "scrapy_maintext.politeness.throttle.PoliteAutoThrottle" in result.log
    )  # AutoThrottle is on
    hits = list(polite_site.hits)
    assert all(h.in_flight == 1 for h in hits), "more than one request at a time"
    assert all(h.user_agent.startswith("scrapy-maintext/") for h in hits)
    assert "Scrapy/" not in hits[0].user_agent
    # After robots.txt is read, every gap honours its Crawl-delay (the answer itself takes
    # SERVE_TIME, which Scrapy counts in the gap).
    gaps = [b.time - a.time for a, b in itertools.pairwise(hits[1:])]
    assert gaps and min(gaps) >= CRAWL_DELAY - TOLERANCE, gaps
    assert SERVE_TIME < CRAWL_DELAY


@pytest.mark.slow
def test_retry_after_pauses_the_domain(hostile_site: TestSiteServer, tmp_path: Path) -> None:
    # No Crawl-delay on this site: the gap after the 429 is the Retry-After pause alone.
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": hostile_site.base_url},
        DISCOVERY_ONLY,
        fresh_process=True,
    )
    assert result.returncode == 0
    hits = hostile_site.hits
    index = next(i for i, h in enumerate(hits) if h.status == 429)
    retry_after = 1.0
    assert hits[index + 1].time - hits[index].time >= retry_after - TOLERANCE


def test_since_and_max_pages_fetch_newest_first(
    hostile_site: TestSiteServer, tmp_path: Path
) -> None:
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": hostile_site.base_url, "since": "2026-03-01", "max_pages": "3"},
        # With delays: every sitemap is read before the first page leaves, so the pages
        # come newest first across sitemaps.
        DISCOVERY_ONLY,
    )
    assert result.returncode == 0
    fetched = [p for p in hostile_site.paths() if p.startswith("/articles/")]
    assert fetched == [
        "/articles/bakery-12.html",  # 2026-05-22
        "/articles/vineyard-8.html",  # 2026-03-22 (news sitemap)
        "/articles/bridge-7.html",  # 2026-03-15 (news sitemap)
    ]
    news = {i["url"].rsplit("/", 1)[-1]: i for i in result.items}["vineyard-8.html"]
    assert news["source_date"] == "2026-03-22T08:00:00+00:00"
    assert news["source_title"] == "The story of the terraced vineyard, part 1"
    assert news["discovered_via"] == "sitemap"
    assert news["source_url"].endswith("/sitemaps/news.xml")
    assert news["status"] == 200 and news["fetched_at"]


def test_lang_picks_hreflang_alternate(hostile_site: TestSiteServer, tmp_path: Path) -> None:
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": hostile_site.base_url, "lang": "de"},
        QUICK_DISCOVERY,
    )
    paths = set(result.paths(hostile_site.base_url))
    assert "/de/about.html" in paths and "/about.html" not in paths


def test_no_sitemap_then_explore_follows_links(bare_site: TestSiteServer, tmp_path: Path) -> None:
    plain = run_crawl("sitemap", tmp_path, {"domain": bare_site.base_url}, NO_WAITS)
    assert plain.returncode == 0 and plain.items == []
    assert "explore=1" in plain.log

    bare_site.reset()
    explored = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": bare_site.base_url, "explore": "1", "max_pages": "8"},
        {**NO_WAITS, "EXTRACT_ENABLED": "False"},
    )
    assert explored.returncode == 0, explored.log[-3000:]
    paths = explored.paths(bare_site.base_url)
    assert len(paths) == len(set(paths)) == 8
    assert paths[0] in ("", "/")  # the home page (courlan drops a bare trailing slash)
    assert all(p.startswith("/articles/") for p in paths[1:])  # breadth first: home's links
    assert not any("utm_" in p for p in bare_site.paths())  # tracking parameters stripped
    assert {i["discovered_via"] for i in explored.items[1:]} == {"link"}


@pytest.mark.slow
def test_default_politeness_is_one_request_per_second(
    bare_site: TestSiteServer, tmp_path: Path
) -> None:
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": bare_site.base_url, "explore": "1", "max_pages": "3"},
        {"EXTRACT_ENABLED": "False"},
        fresh_process=True,
    )
    assert result.returncode == 0 and len(result.items) == 3
    hits = bare_site.hits
    gaps = [b.time - a.time for a, b in itertools.pairwise(hits)]
    assert len(gaps) >= 4 and min(gaps) >= 1.0 - TOLERANCE, gaps
    assert all(h.in_flight == 1 for h in hits)


@pytest.mark.slow
def test_several_sites_in_parallel_each_polite(
    polite_site: TestSiteServer, bare_site: TestSiteServer, tmp_path: Path
) -> None:
    domains = tmp_path / "domains.txt"
    domains.write_text(f"# sites\n{bare_site.base_url}\n")
    result = run_crawl(
        "sitemap",
        tmp_path,
        {
            "domain": polite_site.base_url,
            "domains_file": str(domains),
            "explore": "1",
            "max_pages": "3",
        },
        DISCOVERY_ONLY,
        fresh_process=True,
    )
    assert result.returncode == 0, result.log[-3000:]
    hosts = Counter(item["url"].split("/")[2] for item in result.items)
    assert hosts == {polite_site.base_url[7:]: 3, bare_site.base_url[7:]: 3}
    for server in (polite_site, bare_site):
        assert all(h.in_flight == 1 for h in server.hits)
    # The two sites were crawled at the same time, each under its own slot: one shared slot
    # would space every request of the crawl by the hostile site's Crawl-delay.
    assert bare_site.hits[0].time < polite_site.hits[-1].time
    assert polite_site.hits[0].time < bare_site.hits[-1].time
    merged = sorted(h.time for h in [*polite_site.hits, *bare_site.hits])
    assert min(b - a for a, b in itertools.pairwise(merged)) < CRAWL_DELAY / 2
