"""A site whose articles share a template the extractor keeps, crawled through its sitemap.

The share line and the subscription box sit inside ``<article>``, so a single-page extractor
keeps them (checked first, on the same pages). With the site memory, every exported page
loses them, the first pages (held for the warm-up) included, the article text stays, and
the output is the same whether pages are extracted by two worker processes or by threads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.demo.site import SiteOptions
from scrapy_maintext.extraction import extract
from scrapy_maintext.models.metrics import prf, tokens

from tests.crawl import CrawlResult, run_crawl
from tests.sites import TestSiteServer

#: A template line no phrase of the text convention names ("Share this ..." would be furniture
#: on every page, memory or not: ``extraction.phrases``).
SHARE = (
    "Every article of the Valley Chronicle is free to read: forward this story to a friend "
    "who lives in the valley."
)
PROMO = (
    "Support independent local journalism in the valley by subscribing to the Valley "
    "Chronicle today, from two euros a month."
)
ARTICLES = 9
# The memory is off by default (no measured gain): these tests switch it on.
FAST = {
    "DOWNLOAD_DELAY": "0",
    "AUTOTHROTTLE_ENABLED": "False",
    "DOWNLOAD_TIMEOUT": "5",
    "SITE_MEMORY_ENABLED": "True",
}
#: Token recall of each article's own text that the memory may not cost.
MIN_RECALL = 0.95


@pytest.fixture(scope="module")
def template_site() -> Iterator[TestSiteServer]:
    with TestSiteServer(SiteOptions(articles=ARTICLES, crawl_delay=None), host="127.0.0.4") as srv:
        assert srv.site is not None
        for article in srv.site.articles:
            route = srv.site.routes[f"/articles/{article.slug}.html"]
            page = route.body.decode()
            page = page.replace('<article class="post">', f'<article class="post"><p>{SHARE}</p>')
            route.body = page.replace("</article>", f"<p>{PROMO}</p></article>").encode()
        yield srv


def crawl(
    server: TestSiteServer, out: Path, workers: str, jobdir: Path | None = None
) -> CrawlResult:
    settings = {**FAST, "EXTRACT_WORKERS": workers, "JOBDIR": str(jobdir or out / "job")}
    result = run_crawl("sitemap", out, {"domain": server.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    return result


def test_template_is_gone_from_every_exported_page(
    template_site: TestSiteServer, tmp_path: Path
) -> None:
    site = template_site.site
    assert site is not None
    pages = {a.slug: site.routes[f"/articles/{a.slug}.html"].body for a in site.articles}
    alone = [extract(body, f"{template_site.base_url}/{slug}") for slug, body in pages.items()]
    assert all(SHARE in d.text and PROMO in d.text for d in alone)  # kept without memory

    result = crawl(template_site, tmp_path / "processes", "2")
    by_path = {i["url"].removeprefix(template_site.base_url): i for i in result.items}
    assert set(by_path) == site.expected_pages
    for article in site.articles:
        item = by_path[f"/articles/{article.slug}.html"]
        assert SHARE not in item["text"] and PROMO not in item["text"], item["url"]
        assert item["site_memory_removed"] >= 2
        recall = prf(tokens(item["text"]), tokens(article.main_text()))[1]
        assert recall >= MIN_RECALL, (item["url"], recall)
    stats = result.stats
    assert stats["extract/site_memory/sites"] == 1
    assert stats["extract/site_memory/blocks_removed"] >= 2 * ARTICLES
    assert stats["extract/site_memory/held/warmup"] == 5  # the default warm-up
    snapshot = json.loads((tmp_path / "processes" / "job" / "site-memory.json").read_text())
    assert snapshot["seq"] == len(result.items)

    threads = crawl(template_site, tmp_path / "threads", "0")
    texts = {i["url"]: i["text"] for i in result.items}
    assert {i["url"]: i["text"] for i in threads.items} == texts


def test_pages_reach_the_memory_in_the_plans_order_one_at_a_time(
    template_site: TestSiteServer, tmp_path: Path
) -> None:
    """What the warm-up decides depends on which pages come first: with no delay, Scrapy's
    own downloader sent the whole queue at once (11 requests in flight), pages arrived in
    whatever order a loaded machine answered them, and in about one run in five both about
    pages were among the first five, so the template (then on 3 of 5 pages) stayed."""
    site = template_site.site
    assert site is not None
    template_site.reset()
    result = crawl(template_site, tmp_path, "2")
    pages = [h for h in template_site.hits if h.path in site.expected_pages]
    assert [h.in_flight for h in pages] == [1] * len(site.expected_pages)
    newest_first = sorted(site.articles, key=lambda a: a.date, reverse=True)
    expected = [f"/articles/{a.slug}.html" for a in newest_first]
    assert [h.path for h in pages][: len(expected)] == expected
    assert result.stats["extract/site_memory/held/warmup"] == 5


def test_switched_off_the_crawl_keeps_the_template(
    template_site: TestSiteServer, tmp_path: Path
) -> None:
    settings = {**FAST, "SITE_MEMORY_ENABLED": "False"}
    result = run_crawl("sitemap", tmp_path, {"domain": template_site.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    articles = [i for i in result.items if "/articles/" in i["url"]]
    assert len(articles) == ARTICLES
    assert all(SHARE in i["text"] and "site_memory_removed" not in i for i in articles)
    assert not any(key.startswith("extract/site_memory") for key in result.stats)


def test_resumed_crawl_decides_as_an_uninterrupted_one(
    template_site: TestSiteServer, tmp_path: Path
) -> None:
    whole = crawl(template_site, tmp_path / "whole", "2")
    stopped_dir, resumed_dir = tmp_path / "stopped", tmp_path / "resumed"
    stopped_dir.mkdir()
    # Stopped after the warm-up (5 pages), while pages are decided on arrival; the delay
    # leaves pages in the JOBDIR queue at the stop.
    settings = {
        **FAST,
        "DOWNLOAD_DELAY": "0.3",
        "CONCURRENT_REQUESTS": "2",
        "JOBDIR": str(tmp_path / "job"),
        "CLOSESPIDER_ITEMCOUNT": "7",
    }
    stopped = run_crawl("sitemap", stopped_dir, {"domain": template_site.base_url}, settings)
    assert stopped.stats.get("finish_reason") == "closespider_itemcount", stopped.log[-2000:]
    assert len(stopped.items) < len(whole.items)
    resumed = crawl(template_site, resumed_dir, "2", tmp_path / "job")
    # The memory came back from JOBDIR: no warm-up again, every page decided on arrival.
    assert "(1 sites known" in resumed.log
    assert not any(key.startswith("extract/site_memory/held") for key in resumed.stats)
    snapshot = json.loads((tmp_path / "job" / "site-memory.json").read_text())
    assert snapshot["seq"] == len(whole.items) == snapshot["sites"][0][1]["pages"]
    both = {i["url"]: i["text"] for i in stopped.items + resumed.items}
    assert both == {i["url"]: i["text"] for i in whole.items}


def test_a_site_smaller_than_the_warmup_is_decided_when_the_crawl_drains(
    template_site: TestSiteServer, tmp_path: Path
) -> None:
    settings = {**FAST, "SITE_MEMORY_WARMUP": "50", "EXTRACT_WORKERS": "2"}
    result = run_crawl("sitemap", tmp_path, {"domain": template_site.base_url}, settings, 120)
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == ARTICLES + 2  # nothing lost, nothing left waiting
    assert result.stats["extract/site_memory/held/flush"] == len(result.items)
    articles = [i for i in result.items if "/articles/" in i["url"]]
    assert all(SHARE not in i["text"] and PROMO not in i["text"] for i in articles)
