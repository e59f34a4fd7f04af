"""A recurring crawl's end line and report count every known page once (issue 47): new,
changed, unchanged, behind a sitemap or feed that is as it was, gone, not due; the numbers
add up to the pages the state knows, with both state backends (real crawls of the changing
news site of :mod:`tests.recrawl_site`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.crawl import NO_WAITS, CrawlResult, run_crawl
from tests.distributed import news_site, state_backend
from tests.recrawl_site import UNDATED, ChangingSite, newsroom_day

#: Fixtures.
_ = (news_site, state_backend)

END_LINE = re.compile(
    r"Recurring crawl: (\d+) known pages: (\d+) new or changed, (\d+) unchanged, (\d+) behind "
    r"unchanged sitemaps or feeds, (\d+) gone, (\d+) not due, (-?\d+) "
    r"(?:not reached|decided by other workers or not reached)"
)


def crawl(news: ChangingSite, out: Path, state: dict[str, str], spider: str) -> CrawlResult:
    news.server.reset()
    out.mkdir(parents=True, exist_ok=True)
    args = {"domain": news.base} if spider == "sitemap" else {"url": f"{news.base}/feed.xml"}
    settings: dict[str, Any] = {
        **NO_WAITS,
        **state,
        "RECRAWL_SCHEDULE": "every-run",
        "CRAWL_REPORT": str(out / "report.json"),
    }
    result = run_crawl(spider, out, args, settings)
    assert result.returncode == 0, result.log[-3000:]
    assert "Traceback" not in result.log, result.log
    return result


def end_line(result: CrawlResult) -> dict[str, int]:
    found = END_LINE.search(result.log)
    assert found, result.log[-3000:]
    names = ("known", "fresh", "unchanged", "behind", "gone", "not_due", "not_reached")
    counts = dict(zip(names, map(int, found.groups()), strict=True))
    parts = sum(value for name, value in counts.items() if name != "known")
    assert parts == counts["known"], counts
    return counts


def report_recrawl(out: Path) -> dict[str, int]:
    report = json.loads((out / "report.json").read_text())
    return {k: v for k, v in report["recrawl"].items() if isinstance(v, int)}


def test_sitemap_runs_add_up(news: ChangingSite, backend: dict[str, str], tmp_path: Path) -> None:
    first = crawl(news, tmp_path / "run1", backend, "sitemap")
    assert end_line(first) == {
        "known": 20, "fresh": 20, "unchanged": 0, "behind": 0, "gone": 0, "not_due": 0,
        "not_reached": 0,
    }  # fmt: skip

    # Unchanged: the index answers 304; its dated pages are behind it, its undated asked.
    second = crawl(news, tmp_path / "run2", backend, "sitemap")
    behind = 20 - UNDATED
    assert end_line(second) == {
        "known": 20, "fresh": 0, "unchanged": UNDATED, "behind": behind, "gone": 0,
        "not_due": 0, "not_reached": 0,
    }  # fmt: skip
    recrawl = report_recrawl(tmp_path / "run2")
    assert recrawl["behind_unchanged"] == behind
    assert recrawl["not_reached"] == 0 and recrawl["known"] == 20

    # A day: 3 changed, 2 added, 1 removed (404: gone); the rest unchanged by their dates.
    newsroom_day(news)
    third = crawl(news, tmp_path / "run3", backend, "sitemap")
    assert end_line(third) == {
        "known": 22, "fresh": 5, "unchanged": 16, "behind": 0, "gone": 1, "not_due": 0,
        "not_reached": 0,
    }  # fmt: skip


def test_feed_behind_not_modified_counts(
    news: ChangingSite, backend: dict[str, str], tmp_path: Path
) -> None:
    first = crawl(news, tmp_path / "run1", backend, "feed")
    known = end_line(first)["known"]
    second = crawl(news, tmp_path / "run2", backend, "feed")
    assert second.stats["recrawl/feeds_not_modified"] == 1
    assert end_line(second) == {
        "known": known, "fresh": 0, "unchanged": 0, "behind": known, "gone": 0,
        "not_due": 0, "not_reached": 0,
    }  # fmt: skip


def test_pages_no_longer_reached_are_said(news: ChangingSite, tmp_path: Path) -> None:
    """A known page of a site this run does not crawl is "not reached", not left out."""
    state = {"CRAWL_STATE": str(tmp_path / "state.sqlite")}
    first = crawl(news, tmp_path / "run1", state, "sitemap")
    second = crawl(news, tmp_path / "run2", state, "feed")
    counts = end_line(second)
    assert counts["known"] == end_line(first)["known"]
    assert counts["not_reached"] > 0
    assert counts["not_reached"] == counts["known"] - counts["fresh"] - counts["unchanged"]
