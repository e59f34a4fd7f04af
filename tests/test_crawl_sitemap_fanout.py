"""A sitemap index tree that fans out 20 ways: the good pages come out early.

Every index lists 20 child indexes (old ``lastmod``), without end; the root also lists, last,
a sitemap of the site's articles with the newest ``lastmod``. Read in document order and
breadth first, every sitemap up to ``DISCOVERY_MAX_SITEMAPS`` came before the first page,
and every index past the depth limit was a warning of its own. Later, with every sitemap
handed to Scrapy at once, the pages found early still waited behind the sitemaps the
downloader already held (``CONCURRENT_REQUESTS`` of them): now the spider holds a site's
sitemaps back, two at a time in Scrapy, and the pages go out between them.

The tree of issue 35 (:class:`~tests.sitemap_trees.IndexTreeServer`): every index lists 20
undated indexes and, last, the same sitemap of articles. Read deepest first, that sitemap
waited behind the whole budget of indexes; the tree is now read level by level, newest first
within a level.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scrapy_maintext.demo.site import SiteOptions
from scrapy_maintext.spiders.sites import SitemapQueue

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.sitemap_trees import FAN_OUT, GOOD_PAGES, FanOutServer, IndexTreeServer

MAX_SITEMAPS = 100
MAX_DEPTH = 2
#: Small enough for a quick test; a real delay would only stretch the same order.
CRAWL_DELAY = 0.02
TREE_SETTINGS = {
    **QUICK_DISCOVERY,
    "DOWNLOAD_TIMEOUT": "10",  # no retries on a loaded machine: the order is the subject
    "DISCOVERY_MAX_SITEMAPS": str(MAX_SITEMAPS),
    "DISCOVERY_SITEMAP_MAX_DEPTH": str(MAX_DEPTH),
}


@pytest.fixture
def fan_out() -> Iterator[FanOutServer]:
    options = SiteOptions(sitemaps=False, feeds=False, crawl_delay=None)
    with FanOutServer(options, host="127.0.0.4", crawl_delay=CRAWL_DELAY) as server:
        yield server


def test_good_pages_come_out_early_and_depth_is_said_once(
    fan_out: FanOutServer, tmp_path: Path
) -> None:
    result = run_crawl("sitemap", tmp_path, {"domain": fan_out.base_url}, TREE_SETTINGS)
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == GOOD_PAGES
    paths = fan_out.paths()
    first_page = next(i for i, p in enumerate(paths) if p.startswith("/articles/"))
    sitemaps_read = len({p for p in paths if p.endswith(".xml")})
    assert sitemaps_read == MAX_SITEMAPS
    # The newest sitemap (listed last) is read right after the root, and its pages go out
    # once more than DISCOVERY_SITEMAPS_BEFORE_PAGES sitemaps wait, not after all of them.
    assert paths.index("/posts.xml") == 2, paths[:6]
    # robots.txt, the root, its newest child (the good sitemap), the index whose 20 children
    # put more than DISCOVERY_SITEMAPS_BEFORE_PAGES sitemaps in waiting, and the two
    # sitemaps in Scrapy's hands (Scrapy's 16 requests in the downloader hold no more).
    assert first_page <= 6, paths[: first_page + 1]
    # The rest of the tree is read after the pages, not before them.
    assert sum(p.endswith(".xml") for p in paths[first_page:]) > MAX_SITEMAPS - 10
    assert result.stats["discovery/sitemaps/too_deep"] > 100
    too_deep = [line for line in result.log.splitlines() if "nesting too deep" in line]
    assert len(too_deep) == 1, too_deep
    assert f"{result.stats['discovery/sitemaps/too_deep']} sitemaps not read" in too_deep[0]
    over = [line for line in result.log.splitlines() if "Too many sitemaps" in line]
    assert len(over) == 1


def test_without_early_pages_every_sitemap_comes_first(
    fan_out: FanOutServer, tmp_path: Path
) -> None:
    settings = {**TREE_SETTINGS, "DISCOVERY_SITEMAPS_BEFORE_PAGES": "0"}
    result = run_crawl("sitemap", tmp_path, {"domain": fan_out.base_url}, settings)
    paths = fan_out.paths()
    first_page = next(i for i, p in enumerate(paths) if p.startswith("/articles/"))
    assert first_page == MAX_SITEMAPS + 1  # robots.txt, then every sitemap
    assert len(result.items) == GOOD_PAGES


def test_sitemap_queue_order_and_limit() -> None:
    queue = SitemapQueue()
    old, new = datetime(2020, 1, 1, tzinfo=UTC), datetime(2026, 5, 1, tzinfo=UTC)
    for name, depth, lastmod in [
        ("deep-new", 2, new),
        ("undated", 1, None),
        ("old", 1, old),
        ("new", 1, new),
        ("deep", 2, old),
        ("old-again", 1, old),
    ]:
        queue.push(name, depth, lastmod)
    # Level by level; newest first within a level (undated last, in the order found).
    assert queue.release(2) == ["new", "old"]
    assert queue.release(2) == []  # two in flight
    queue.answered()
    assert queue.release(2) == ["old-again"]
    queue.answered()
    queue.answered()
    assert queue.release(2) == ["undated", "deep-new"]
    queue.answered()
    assert queue.release(2) == ["deep"]


@pytest.fixture
def index_tree() -> Iterator[IndexTreeServer]:
    options = SiteOptions(sitemaps=False, feeds=False, crawl_delay=None)
    with IndexTreeServer(options, crawl_delay=CRAWL_DELAY) as server:
        yield server


def test_an_endless_index_tree_is_read_level_by_level(
    index_tree: IndexTreeServer, tmp_path: Path
) -> None:
    """Issue 35: every index lists 20 further indexes and, last, the articles' sitemap.
    Read deepest first, the articles' sitemap (on the first index read) waited behind the
    whole budget of indexes; read level by level, it comes with the root's children."""
    result = run_crawl("sitemap", tmp_path, {"domain": index_tree.base_url}, TREE_SETTINGS)
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == GOOD_PAGES  # and the crawl ended by itself
    paths = index_tree.paths()
    # robots.txt, the root, its 20 child indexes, then the articles' sitemap, once.
    assert paths.index("/posts.xml") == 2 + FAN_OUT, paths[:30]
    assert paths.count("/posts.xml") == 1
    # ... then the two sitemaps in Scrapy's hands, and the pages.
    first_page = next(i for i, p in enumerate(paths) if p.startswith("/articles/"))
    assert first_page <= 2 + FAN_OUT + 3, paths[: first_page + 1]
    levels = [p.count("-") for p in paths if p.startswith("/tree/")]
    assert levels == sorted(levels)
    assert len(levels) == MAX_SITEMAPS - 1  # the budget, less the articles' sitemap
    # Every index of the last level read lists 20 indexes too deep, and the articles'
    # sitemap, already read: not counted as too deep.
    last_level = MAX_SITEMAPS - 2 - FAN_OUT
    assert result.stats["discovery/sitemaps/too_deep"] == last_level * FAN_OUT
