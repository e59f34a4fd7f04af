"""A crawl of many planned pages holds requests for its sites, not for its URLs (issue 47)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.broad_sites import broad_sites
from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.held_pages import HELD_MAX_STAT, QUEUE_STAT

PAGES = 40


def test_planned_pages_wait_in_their_site_queue_and_every_one_is_fetched(
    tmp_path: Path,
) -> None:
    """Three sites of 40 pages (one answering its pages with 404): every page requested once,
    each of the others exported once, and never more than 2 of a site's pages waiting in the
    scheduler (2 x CONCURRENT_REQUESTS_PER_DOMAIN)."""
    hits: list[tuple[int, str]] = []
    with broad_sites(3, PAGES, missing=frozenset({1}), hits=hits) as urls:
        (tmp_path / "sites.txt").write_text("\n".join(urls) + "\n")
        extensions = {"tests.stats_dump.StatsDump": 0, "tests.held_pages.HeldPages": -1}
        result = run_crawl(
            "sitemap",
            tmp_path,
            {"domains_file": str(tmp_path / "sites.txt")},
            {**QUICK_DISCOVERY, "EXTENSIONS": json.dumps(extensions)},
        )
    assert result.returncode == 0, result.log[-3000:]
    # The sites' slots taken in turn (Scrapy's queue scanned every site per request).
    assert result.stats[QUEUE_STAT] == "SlotRingPriorityQueue"
    pages = Counter((site, path) for site, path in hits if path.startswith("/story-"))
    assert len(pages) == 3 * PAGES and set(pages.values()) == {1}
    exported = Counter(item["url"] for item in result.items)
    assert len(exported) == 2 * PAGES and set(exported.values()) == {1}
    assert not any(url.startswith(urls[1]) for url in exported)
    assert 1 <= result.stats[HELD_MAX_STAT] <= 2
    assert result.stats["discovery/page_errors/http_404"] == PAGES


def test_sites_start_in_turn_and_every_page_is_exported_once(tmp_path: Path) -> None:
    """Twelve sites (one dead, one answering its pages with 404) with three under way at a
    time (DISCOVERY_SITES_AT_ONCE=3): every page requested once and exported once, no site
    left out, and a site's robots.txt asked only once all but two of the sites started before
    it are done (the window, read from the server's own log)."""
    hits: list[tuple[int, str]] = []
    sites, dead, missing = 12, frozenset({4}), frozenset({7})
    with broad_sites(sites, 6, dead=dead, missing=missing, hits=hits) as urls:
        (tmp_path / "sites.txt").write_text("\n".join(urls) + "\n")
        extensions = {"tests.stats_dump.StatsDump": 0}
        result = run_crawl(
            "sitemap",
            tmp_path,
            {"domains_file": str(tmp_path / "sites.txt")},
            {
                **QUICK_DISCOVERY,
                "EXTENSIONS": json.dumps(extensions),
                "DISCOVERY_SITES_AT_ONCE": "3",
                # A done site's pages are in the downloader: two at most, all sites together.
                "CONCURRENT_REQUESTS": "2",
            },
        )
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats["discovery/sites_at_once_max"] == 3
    pages = Counter((site, path) for site, path in hits if path.startswith("/story-"))
    alive = [i for i in range(sites) if i not in dead]
    assert set(pages) == {(i, f"/story-{p}.html") for i in alive for p in range(6)}
    assert set(pages.values()) == {1}
    exported = Counter(item["url"] for item in result.items)
    assert set(exported.values()) == {1}
    assert len(exported) == 6 * (len(alive) - len(missing))
    # When a site's robots.txt is asked, at most two others have more than the two pages a
    # done site may still have in the downloader (CONCURRENT_REQUESTS) to ask.
    robots = {site: n for n, (site, path) in enumerate(hits) if path == "/robots.txt"}
    for site, asked in robots.items():
        later = Counter(s for s, path in hits[asked:] if path.startswith("/story-"))
        busy = [s for s in robots if s != site and robots[s] < asked and later[s] > 2]
        assert len(busy) <= 2, (site, busy)
