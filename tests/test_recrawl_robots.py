"""robots.txt kept in the crawl state between runs and asked conditionally (issue 47): real
crawls of the changing news site (its robots.txt answers with ETag and Last-Modified, and 304
to a conditional request), the server counting every request, with both state backends."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.crawl import NO_WAITS, CrawlResult, run_crawl
from tests.distributed import news_site, state_backend
from tests.recrawl_site import ChangingSite

#: Fixtures.
_ = (news_site, state_backend)

T0 = 1_800_000_000
HOUR = 3600


def crawl(
    news: ChangingSite, out: Path, state: dict[str, str], now: int, **extra: Any
) -> tuple[CrawlResult, list[tuple[str, int]]]:
    """A run at ``now`` (the crawl's clock), and the server's log: (path, status)."""
    news.server.reset()
    out.mkdir(parents=True, exist_ok=True)
    settings = {**NO_WAITS, **state, "RECRAWL_SCHEDULE": "every-run", "RECRAWL_NOW": str(now)}
    result = run_crawl("sitemap", out, {"domain": news.base}, {**settings, **extra})
    assert result.returncode == 0, result.log[-3000:]
    assert "Traceback" not in result.log, result.log
    return result, [(h.path, h.status) for h in news.server.hits]


def robots_hits(hits: list[tuple[str, int]]) -> list[int]:
    return [status for path, status in hits if path == "/robots.txt"]


def test_robots_kept_a_day_then_asked_conditionally(
    news: ChangingSite, backend: dict[str, str], tmp_path: Path
) -> None:
    forbidden = news.path(list(news.stories)[5])
    news.robots_rules = f"Disallow: {forbidden}\n"
    news.publish()
    first, hits = crawl(news, tmp_path / "1", backend, T0)
    assert robots_hits(hits) == [200]
    assert forbidden not in {item["url"].removeprefix(news.base) for item in first.items}

    # An hour later: robots.txt is not asked; its kept copy names the sitemap and forbids
    # the same page (its rules are obeyed, not an empty file's).
    second, hits = crawl(news, tmp_path / "2", backend, T0 + HOUR)
    assert robots_hits(hits) == []
    assert second.stats["politeness/robots_kept"] == 1
    paths = {path for path, _ in hits}
    assert "/sitemap_index.xml" in paths and "/sitemap.xml" not in paths
    assert forbidden not in paths

    # A day later: asked with its validators; the 304 reuses the kept body.
    third, hits = crawl(news, tmp_path / "3", backend, T0 + 25 * HOUR)
    assert robots_hits(hits) == [304]
    assert third.stats["politeness/robots_not_modified"] == 1
    paths = {path for path, _ in hits}
    assert "/sitemap_index.xml" in paths and forbidden not in paths

    # The 304 started another day: an hour later it is not asked again.
    _, hits = crawl(news, tmp_path / "4", backend, T0 + 26 * HOUR)
    assert robots_hits(hits) == []

    # robots.txt changes (the forbidden page is allowed again): the next conditional request
    # gets the new file, and the page is fetched.
    news.robots_rules = ""
    news.robots_modified += timedelta(days=2)
    news.publish()
    _, hits = crawl(news, tmp_path / "5", backend, T0 + 50 * HOUR)
    assert robots_hits(hits) == [200]
    assert (forbidden, 200) in {(path, status) for path, status in hits}


def test_unchanged_hourly_run_asks_one_request(
    news: ChangingSite, backend: dict[str, str], tmp_path: Path
) -> None:
    """Every page dated: an unchanged run an hour later asks the sitemap index (304), and
    nothing else of the site."""
    for story in news.stories.values():
        story.dated = True
    news.publish()
    crawl(news, tmp_path / "1", backend, T0)
    second, hits = crawl(news, tmp_path / "2", backend, T0 + HOUR)
    assert [(path, status) for path, status in hits] == [("/sitemap_index.xml", 304)]
    assert second.items == []


@pytest.mark.parametrize("cache_control", ["no-cache", "max-age=0", "max-age=600"])
def test_cache_control_shortens_the_time_kept(
    news: ChangingSite, tmp_path: Path, cache_control: str
) -> None:
    """A robots.txt that asks not to be cached (or for ten minutes) is asked again an hour
    later (conditionally: 304)."""
    news.publish()
    assert news.server.site is not None
    route = news.server.site.routes["/robots.txt"]
    route.headers["Cache-Control"] = cache_control
    state = {"CRAWL_STATE": str(tmp_path / "state.sqlite")}
    crawl(news, tmp_path / "1", state, T0)
    second, hits = crawl(news, tmp_path / "2", state, T0 + HOUR)
    assert robots_hits(hits) == [304]
    assert second.stats["politeness/robots_not_modified"] == 1


def test_without_state_robots_is_asked_every_run(news: ChangingSite, tmp_path: Path) -> None:
    for run in (1, 2):
        news.server.reset()
        out = tmp_path / str(run)
        out.mkdir()
        result = run_crawl("sitemap", out, {"domain": news.base}, dict(NO_WAITS))
        assert result.returncode == 0
        assert robots_hits([(h.path, h.status) for h in news.server.hits]) == [200]


def test_a_forgotten_site_is_asked_its_robots_txt_again(
    news: ChangingSite, backend: dict[str, str], tmp_path: Path
) -> None:
    from scrapy_maintext.cli import main

    crawl(news, tmp_path / "1", backend, T0)
    if "REDIS_URL" in backend:
        where = [backend["REDIS_URL"], backend["CRAWL_STATE"]]
    else:
        where = [backend["CRAWL_STATE"]]
    assert main(["state", *where, "--forget", news.base]) == 0
    _, hits = crawl(news, tmp_path / "2", backend, T0 + HOUR)
    assert robots_hits(hits) == [200]


def test_a_redirected_robots_txt_is_kept_under_the_site(news: ChangingSite, tmp_path: Path) -> None:
    """robots.txt that redirects (to https, to a CDN path): the copy is kept under the URL
    asked, so the next run finds it."""
    from tests.sites import Route

    assert news.server.site is not None
    routes = news.server.site.routes
    routes["/robots-live.txt"] = routes["/robots.txt"]
    routes["/robots.txt"] = Route(b"", status=301, headers={"Location": "/robots-live.txt"})
    state = {"CRAWL_STATE": str(tmp_path / "state.sqlite")}
    first, hits = crawl(news, tmp_path / "1", state, T0)
    assert ("/robots-live.txt", 200) in hits and len(first.items) == len(news.stories)
    second, hits = crawl(news, tmp_path / "2", state, T0 + HOUR)
    assert not [path for path, _ in hits if path.startswith("/robots")]
    assert second.stats["politeness/robots_kept"] == 1
