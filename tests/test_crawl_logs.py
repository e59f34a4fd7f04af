"""Crawl logs name dropped pages but never hold their bodies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.crawl import NO_WAITS, run_crawl
from tests.js_site import BROWSER
from tests.sites import Route, SiteOptions, TestSiteServer, page_html

#: A page with no main text but a large body (an app shell): rendered, and dropped.
SHELL_BYTES = 2_000_000


@pytest.fixture(scope="module")
def dropping_site() -> Iterator[TestSiteServer]:
    """Three articles, a near-duplicate of the first, and a big page without text."""
    with TestSiteServer(SiteOptions(articles=3, feeds=False, crawl_delay=None)) as server:
        site = server.site
        assert site is not None
        first = site.articles[0]
        site.routes["/copy.html"] = Route(page_html(first, site.articles[1:]).encode())
        shell = "<html><body><div id=app></div><script>" + "x" * SHELL_BYTES + "</script>"
        site.routes["/shell.html"] = Route(shell.encode())
        listed = site.routes["/sitemaps/pages.txt"].body.decode()
        listed += f"{server.base_url}/copy.html\n{server.base_url}/shell.html\n"
        site.routes["/sitemaps/pages.txt"] = Route(listed.encode(), "text/plain")
        yield server


@pytest.mark.slow
def test_dropped_pages_are_named_not_written(dropping_site: TestSiteServer, tmp_path: Path) -> None:
    site = dropping_site.site
    assert site is not None
    settings = {**NO_WAITS, "EXTRACT_WORKERS": "1", "LOG_LEVEL": "DEBUG"}
    # A process of its own: the log is all the crawl writes to stderr, its workers' included.
    result = run_crawl(
        "sitemap", tmp_path, {"domain": dropping_site.base_url}, settings, fresh_process=True
    )
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats.get("extract/dropped/duplicate") == 1
    # The shell is rendered where a browser is, and has no text even so; else it is counted
    # as needing JavaScript.
    if os.access(BROWSER, os.X_OK):
        assert result.stats.get("extract/dropped/no_text_rendered") == 1
        assert f"No main text after rendering: {dropping_site.base_url}/shell.html" in result.log
    else:
        assert result.stats.get("extract/dropped/needs_javascript") == 1
    assert "/copy.html" in result.log and "/shell.html" in result.log
    # Neither the HTML nor the article's text of any page is in the log.
    assert "<!DOCTYPE" not in result.log and "xxxxxxxxxx" not in result.log
    for article in site.articles:
        assert article.paragraphs[0] not in result.log
    assert len(result.log) < SHELL_BYTES / 10
