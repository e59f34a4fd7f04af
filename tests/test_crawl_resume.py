"""JOBDIR: stop a crawl half-way, restart it, and no page is fetched twice or lost."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.sites import TestSiteServer


def test_resume_fetches_nothing_twice_and_loses_nothing(
    hostile_site: TestSiteServer, tmp_path: Path
) -> None:
    site = hostile_site.site
    assert site is not None
    jobdir = tmp_path / "job"
    # Requests already handed to the downloader are finished before a crawl stops; with a
    # small CONCURRENT_REQUESTS most of the plan is still in the JOBDIR queue at the stop.
    settings = {**QUICK_DISCOVERY, "JOBDIR": str(jobdir), "CONCURRENT_REQUESTS": "2"}
    first_dir, second_dir = tmp_path / "1", tmp_path / "2"
    first_dir.mkdir()
    second_dir.mkdir()
    first = run_crawl(
        "sitemap",
        first_dir,
        {"domain": hostile_site.base_url},
        {**settings, "CLOSESPIDER_ITEMCOUNT": "5"},
    )
    assert first.stats.get("finish_reason") == "closespider_itemcount", first.log[-2000:]
    assert 5 <= len(first.items) < len(site.expected_pages)

    second = run_crawl("sitemap", second_dir, {"domain": hostile_site.base_url}, settings)
    assert second.returncode == 0, second.log[-3000:]

    both = Counter(first.paths(hostile_site.base_url) + second.paths(hostile_site.base_url))
    assert set(both) == site.expected_pages
    assert max(both.values()) == 1, "an item was exported twice"
    pages = Counter(p for p in hostile_site.paths() if p in site.expected_pages)
    assert all(n == 1 for p, n in pages.items() if p != "/busy.html"), pages
