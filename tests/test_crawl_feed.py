"""``scrapy crawl feed``: feeds found on the home page, or given with ``-a url=``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.crawl import DISCOVERY_ONLY, QUICK_DISCOVERY, run_crawl
from tests.sites import TestSiteServer


def test_feed_crawl_discovers_all_feed_formats(
    hostile_site: TestSiteServer, tmp_path: Path
) -> None:
    site = hostile_site.site
    assert site is not None
    result = run_crawl(
        "feed",
        tmp_path,
        {"domain": hostile_site.base_url},
        QUICK_DISCOVERY,
    )
    assert result.returncode == 0, result.log[-3000:]
    articles = {f"/articles/{a.slug}.html" for a in site.articles}
    exported = Counter(result.paths(hostile_site.base_url))
    assert set(exported) == articles and max(exported.values()) == 1
    hits = Counter(p for p in hostile_site.paths() if p.startswith("/articles/"))
    assert set(hits) == articles and max(hits.values()) == 1
    assert not any(p.startswith("/private/") for p in hostile_site.paths())

    for kind in ("rss", "atom", "json", "rdf"):
        assert result.stats[f"discovery/feeds/{kind}"] == 1, kind
    assert result.stats["discovery/invalid/hostile_xml"] == 1  # the announced XXE feed
    by_path = {i["url"].removeprefix(hostile_site.base_url): i for i in result.items}
    first = site.articles[0]
    item = by_path[f"/articles/{first.slug}.html"]
    assert item["discovered_via"] == "feed"
    assert item["source_url"].endswith("/feed.xml")
    assert item["source_title"] == first.title
    assert item["source_date"] == f"{first.date}T09:30:00+00:00"


def test_feed_url_argument_and_since(hostile_site: TestSiteServer, tmp_path: Path) -> None:
    site = hostile_site.site
    assert site is not None
    feeds = f"{hostile_site.base_url}/atom.xml,{hostile_site.base_url}/feed.json"
    # With delays: both feeds are read before the first article leaves, so the export
    # order is the newest-first order of the two feeds together.
    result = run_crawl(
        "feed",
        tmp_path,
        {"url": feeds, "since": "2026-03-01"},
        DISCOVERY_ONLY,
    )
    assert result.returncode == 0, result.log[-3000:]
    in_feeds = site.articles[4:10]
    expected = [a for a in in_feeds if a.date >= "2026-03-01"]
    assert expected and len(expected) < len(in_feeds)
    newest_first = sorted(expected, key=lambda a: a.date, reverse=True)
    assert result.paths(hostile_site.base_url) == [f"/articles/{a.slug}.html" for a in newest_first]
    assert "/" not in hostile_site.paths()  # no home-page discovery with explicit feeds


def test_urls_file(hostile_site: TestSiteServer, tmp_path: Path) -> None:
    urls = tmp_path / "feeds.txt"
    urls.write_text(f"# news feeds\n{hostile_site.base_url}/index.rdf\n")
    result = run_crawl(
        "feed",
        tmp_path,
        {"urls_file": str(urls)},
        QUICK_DISCOVERY,
    )
    assert result.returncode == 0
    assert len(result.items) == 2
    assert {i["discovered_via"] for i in result.items} == {"feed"}
