"""SIGKILL in the middle of a recurring crawl: the next run exports what the killed one missed.

A page's row in the crawl state is committed only after its document is written, so every
new or changed page is exported by one of the two runs; only those in flight at the kill
(in the downloader or extraction, or written in the state's last commit window,
``CRAWL_STATE_COMMIT_DELAY``) may be exported by both.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.demo.site import SiteOptions

from tests.crawl import NO_WAITS, run_crawl
from tests.recrawl_site import ChangingSite
from tests.sites import TestSiteServer
from tests.test_crawl_kill import MAX_IN_FLIGHT, SETTINGS, _kill_after, _urls

pytestmark = pytest.mark.slow

ARTICLES = 40
#: Pages exported by the killed run whose rows its last commit window had not written yet
#: (CRAWL_STATE_COMMIT_DELAY 0.25 s at a DOWNLOAD_DELAY of 0.2 s).
COMMIT_WINDOW_PAGES = 2
#: The runs come seconds apart: every-run, so that the changed site's sitemaps are read
#: again at once (the adaptive schedule would leave them for an hour).
EVERY_RUN = {"RECRAWL_SCHEDULE": "every-run"}


@pytest.fixture
def news() -> Iterator[ChangingSite]:
    with TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.5") as server:
        yield ChangingSite(server, count=ARTICLES)


def _cmd(news: ChangingSite, state: Path, out: Path) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"domain={news.base}"]
    cmd += ["-O", str(out)]
    for key, value in {**SETTINGS, **EVERY_RUN, "CRAWL_STATE": str(state)}.items():
        cmd += ["-s", f"{key}={value}"]
    return cmd


def _killed_then_rerun(news: ChangingSite, state: Path, out: Path, expected: set[str]) -> Counter:
    news.server.reset()
    killed = out / "killed.jsonl"
    out.mkdir()
    _kill_after(_cmd(news, state, killed), news.server, expected, killed)
    first = _urls(killed, news.base)
    assert len(first) < len(expected)
    settings = {**SETTINGS, **NO_WAITS, **EVERY_RUN, "CRAWL_STATE": str(state)}
    second = run_crawl("sitemap", out / "rerun", {"domain": news.base}, settings)
    assert second.returncode == 0, second.log[-3000:]
    return Counter(first + second.paths(news.base))


def test_sigkill_then_rerun_loses_nothing(news: ChangingSite, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite"
    everything = {news.path(slug) for slug in news.stories}
    both = _killed_then_rerun(news, state, tmp_path / "a", everything)
    assert set(both) == everything, sorted(everything - set(both))
    twice = [path for path, n in both.items() if n > 1]
    assert len(twice) <= MAX_IN_FLIGHT + COMMIT_WINDOW_PAGES, twice

    # The site changes; the crawl that sees it is killed too, and run again.
    slugs = list(news.stories)
    changed = slugs[10:30]
    for slug in changed:
        news.edit(slug, f"{slug} corrected")
    news.publish()
    paths = {news.path(slug) for slug in changed}
    both = _killed_then_rerun(news, state, tmp_path / "b", paths)
    assert set(both) == paths, sorted(paths ^ set(both))
    twice = [path for path, n in both.items() if n > 1]
    assert len(twice) <= MAX_IN_FLIGHT + COMMIT_WINDOW_PAGES, twice
