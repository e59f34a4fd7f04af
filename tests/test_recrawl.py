"""Recurring crawls (``CRAWL_STATE``): a run fetches and exports only what is new or changed.

The site changes between runs as a newsroom changes it (:mod:`tests.recrawl_site`); the test
server counts every request and answers conditional ones with 304.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.demo.site import SiteOptions

from tests.crawl import NO_WAITS, CrawlResult, run_crawl
from tests.recrawl_site import (
    FEED_SIZE,
    NEWSROOM_DAY_OUTCOMES,
    UNDATED,
    ChangingSite,
    newsroom_day,
)
from tests.sites import TestSiteServer

#: Today's rule (every known page without a newer date asked each run); the adaptive
#: schedule has tests of its own (tests/test_recrawl_schedule.py).
SETTINGS = {**NO_WAITS, "DOWNLOAD_TIMEOUT": "5", "RECRAWL_SCHEDULE": "every-run"}


@pytest.fixture
def news() -> Iterator[ChangingSite]:
    with TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.3") as server:
        yield ChangingSite(server)


def crawl(news: ChangingSite, out: Path, state: Path, spider: str = "sitemap") -> CrawlResult:
    news.server.reset()
    args = {"domain": news.base} if spider == "sitemap" else {"url": f"{news.base}/feed.xml"}
    settings = {**SETTINGS, "CRAWL_STATE": str(state), "CRAWL_REPORT": str(out / "report.json")}
    result = run_crawl(spider, out, args, settings)
    assert result.returncode == 0, result.log[-3000:]
    return result


def article_hits(news: ChangingSite) -> Counter[tuple[str, int]]:
    """(path, status) of the article requests the server answered."""
    return Counter((h.path, h.status) for h in news.server.hits if h.path.startswith("/articles/"))


def outcomes(result: CrawlResult) -> dict[str, int]:
    return {
        key.removeprefix("recrawl/"): value
        for key, value in result.stats.items()
        if key.startswith("recrawl/") and key.split("/")[1] in OUTCOMES
    }


OUTCOMES = ("new", "changed", "unchanged", "not_modified", "gone", "skipped_by_date")


def test_sitemap_recrawl_exports_only_new_and_changed(news: ChangingSite, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite"
    first = crawl(news, tmp_path / "run1", state)
    assert len(first.items) == 20
    assert {item["revision"] for item in first.items} == {1}
    assert {item["previous_export"] for item in first.items} == {None}
    assert outcomes(first) == {"new": 20}

    # Nothing changed: the index answers 304, no article is downloaded, nothing exported.
    second = crawl(news, tmp_path / "run2", state)
    assert second.items == []
    hits = article_hits(news)
    assert {status for _, status in hits} == {304}
    assert sum(hits.values()) == UNDATED  # only the pages listed without lastmod are asked
    assert ("/sitemap_index.xml", 304) in {(h.path, h.status) for h in news.server.hits}
    assert outcomes(second) == {"not_modified": UNDATED}
    assert (
        "20 known pages: 0 new or changed, 3 unchanged, 17 behind unchanged sitemaps or feeds,"
        " 0 gone, 0 not due, 0 not reached" in second.log
    )
    assert second.stats["recrawl/sitemaps_not_modified"] == 1

    # The site changes: 2 edits with lastmod bumped, 1 without, 2 added, 1 removed.
    day = newsroom_day(news)
    third = crawl(news, tmp_path / "run3", state)
    exported = {item["url"].removeprefix(news.base): item for item in third.items}
    assert set(exported) == day.exported
    for path in day.changed:
        assert exported[path]["revision"] == 2
        assert exported[path]["previous_export"] is not None
        assert "Correction:" in exported[path]["text"]
    for path in day.added:
        assert exported[path]["revision"] == 1
    downloaded = {path for (path, status) in article_hits(news) if status == 200}
    assert downloaded == set(exported)
    assert (day.removed, 404) in article_hits(news)
    assert outcomes(third) == NEWSROOM_DAY_OUTCOMES
    assert "22 known pages: 5 new or changed" in third.log
    report = (tmp_path / "run3" / "report.json").read_text()
    assert '"changed": 3' in report and '"gone": 1' in report


def test_feed_recrawl_exports_only_new_entries(news: ChangingSite, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite"
    first = crawl(news, tmp_path / "run1", state, spider="feed")
    assert len(first.items) == FEED_SIZE
    second = crawl(news, tmp_path / "run2", state, spider="feed")
    assert second.items == []
    assert not article_hits(news)
    assert second.stats["recrawl/feeds_not_modified"] == 1

    added = [news.add(), news.add()]
    news.publish()
    third = crawl(news, tmp_path / "run3", state, spider="feed")
    assert sorted(i["url"].removeprefix(news.base) for i in third.items) == sorted(
        news.path(s) for s in added
    )
    assert {path for path, _ in article_hits(news)} == {news.path(s) for s in added}
    assert outcomes(third) == {"new": 2, "skipped_by_date": FEED_SIZE - 2}


def test_max_pages_counts_requested_pages_and_the_rest_comes_next_time(
    news: ChangingSite, tmp_path: Path
) -> None:
    state = tmp_path / "state.sqlite"
    crawl(news, tmp_path / "run1", state)
    added = [news.add() for _ in range(4)]
    news.publish()
    settings = {**SETTINGS, "CRAWL_STATE": str(state)}
    news.server.reset()
    # Pages skipped by their sitemap date do not count against max_pages.
    cut = run_crawl("sitemap", tmp_path / "run2", {"domain": news.base, "max_pages": "3"}, settings)
    assert cut.returncode == 0, cut.log[-3000:]
    first_half = {item["url"].removeprefix(news.base) for item in cut.items}
    assert len(first_half) == 3  # the 3 newest pages, all new (undated ones come last)
    # The cut plan leaves the site's sitemaps unremembered: the next run plans the rest.
    rest = crawl(news, tmp_path / "run3", state)
    second_half = {item["url"].removeprefix(news.base) for item in rest.items}
    assert first_half | second_half == {news.path(s) for s in added}
    assert not first_half & second_half


def test_near_duplicate_filter_spans_runs(news: ChangingSite, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite"
    first = crawl(news, tmp_path / "run1", state)
    assert len(first.items) == 20

    # A copy of an article exported in run 1 appears at a new URL; another article is
    # corrected; a third gets new links beside it, its text the same.
    slugs = list(news.stories)
    original, corrected, relinked = slugs[UNDATED], slugs[UNDATED + 1], slugs[UNDATED + 2]
    copy = news.republish(original)
    news.edit(corrected, "a correction under the same URL")
    news.relink(relinked)
    news.publish()
    second = crawl(news, tmp_path / "run2", state)

    exported = {item["url"].removeprefix(news.base): item for item in second.items}
    assert set(exported) == {news.path(corrected)}
    assert exported[news.path(corrected)]["revision"] == 2
    downloaded = {path for (path, status) in article_hits(news) if status == 200}
    assert downloaded == {news.path(s) for s in (copy, corrected, relinked)}
    # The copy: a near-duplicate of run 1's export; the relinked page: its own last export
    # (dropped as unchanged by the recrawl stage, not as a duplicate of itself).
    assert second.stats["extract/dropped/duplicate"] == 1
    assert f"Near-duplicate of fingerprint {exported_fingerprint(first, original)}" in second.log
    assert outcomes(second) == {
        "changed": 1,
        "unchanged": 1,
        "not_modified": UNDATED,
        "skipped_by_date": 20 - UNDATED - 2,
    }

    # Decided: the copy is not asked for again while its lastmod stays.
    third = crawl(news, tmp_path / "run3", state)
    assert third.items == []
    assert (news.path(copy), 200) not in article_hits(news)


def exported_fingerprint(result: CrawlResult, slug: str) -> str:
    (item,) = [i for i in result.items if i["url"].endswith(f"/{slug}.html")]
    return str(item["fingerprint"])
