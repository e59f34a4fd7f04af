"""Rendering with the crawl's other machinery, with the real Chromium: a JOBDIR crawl killed
in the middle and resumed (no page lost, none rendered again that was exported), a
recurring crawl whose pages answer 304 (no render), and workers sharing a crawl on a real
Redis (each page rendered by one of them)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.crawl import NO_WAITS, kill_when, run_crawl
from tests.distributed import redis_or_skip, run_workers
from tests.js_site import mixed_routes, needs_browser
from tests.sites import SiteOptions, TestSiteServer

pytestmark = [pytest.mark.slow, needs_browser]

#: Pages of each kind on the mixed site (server, inline, fetched, next).
COPIES = 3


@contextmanager
def mixed_site(etags: bool = False) -> Iterator[TestSiteServer]:
    """The benchmark's mixed site; with ``etags``, every page answers 304 when asked with
    its ETag."""
    options = SiteOptions(articles=1, feeds=False, crawl_delay=None)
    with TestSiteServer(options) as server:
        assert server.site is not None
        routes = mixed_routes(server.base_url, COPIES, seed=7)
        if etags:
            for path, route in routes.items():
                if path.endswith(".html"):
                    route.headers["ETag"] = f'"{path.strip("/")}"'
        server.site.routes = routes
        yield server


def rendered_kinds(paths: list[str]) -> set[str]:
    return {p for p in paths if p.startswith(("/inline-", "/fetched-"))}


def all_pages(server: TestSiteServer) -> set[str]:
    assert server.site is not None
    return {p for p in server.site.routes if p.endswith(".html")}


def exported(path: Path, base: str) -> list[dict]:
    if not path.exists():
        return []
    items = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # the half line a killed crawl may leave
    return [{**item, "path": item["url"].removeprefix(base)} for item in items]


def test_a_killed_rendering_crawl_resumes_without_losing_or_rerendering(tmp_path: Path) -> None:
    with mixed_site() as server:
        base, pages = server.base_url, all_pages(server)
        jobdir, first_out = tmp_path / "job", tmp_path / "first.jsonl"
        settings = {"DOWNLOAD_DELAY": "0.2", "LOG_LEVEL": "INFO", "JOBDIR": str(jobdir)}
        cmd = [sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"domain={base}"]
        cmd += ["-O", str(first_out)]
        for key, value in settings.items():
            cmd += ["-s", f"{key}={value}"]

        def two_rendered() -> bool:
            done = exported(first_out, base)
            return sum(i["text_source"] == "rendered" for i in done) >= 2

        # SIGKILL once two rendered pages are out, the browser most likely mid-render.
        kill_when(cmd, two_rendered, tmp_path / "first.log")
        first = exported(first_out, base)
        assert len(first) < len(pages)
        served_api = Counter(p for p in server.paths() if p.startswith("/api/"))
        second_dir = tmp_path / "second"
        second_dir.mkdir()
        second = run_crawl("sitemap", second_dir, {"domain": base}, {**settings, **NO_WAITS})
        after_api = Counter(p for p in server.paths() if p.startswith("/api/"))
    assert second.returncode == 0, second.log[-3000:]
    both = Counter([i["path"] for i in first] + second.paths(base))
    assert set(both) == pages, sorted(pages - set(both))
    # A page exported by the killed crawl is neither exported nor rendered again; the one
    # page that may be is the one being rendered or exported at the kill.
    twice = [path for path, n in both.items() if n > 1]
    assert len(twice) <= 1, twice
    rendered_second = [i for i in second.items if i["text_source"] == "rendered"]
    assert second.stats["render/pages"] == len(rendered_second)
    first_fetched = {i["path"] for i in first if i["path"].startswith("/fetched-")}
    for path in first_fetched - set(twice):
        api = path.replace("/fetched-", "/api/").replace(".html", ".json")
        assert after_api[api] == served_api[api], f"{path} was rendered again"
    for item in [*first, *second.items]:
        path = item["url"].removeprefix(base)
        if rendered_kinds([path]):
            assert item["text_source"] == "rendered", path


def test_a_recurring_crawl_renders_nothing_for_pages_that_answer_304(tmp_path: Path) -> None:
    with mixed_site(etags=True) as server:
        base, pages = server.base_url, all_pages(server)
        # Every page asked again each run (not when due, which a rerun at once is not).
        state = str(tmp_path / "state.sqlite")
        settings = {**NO_WAITS, "CRAWL_STATE": state, "RECRAWL_SCHEDULE": "every-run"}
        first_dir, second_dir = tmp_path / "1", tmp_path / "2"
        first_dir.mkdir()
        second_dir.mkdir()
        first = run_crawl("sitemap", first_dir, {"domain": base}, settings)
        assert first.returncode == 0, first.log[-3000:]
        assert set(first.paths(base)) == pages
        assert first.stats["render/pages"] == len(rendered_kinds(list(pages)))
        server.reset()
        second = run_crawl("sitemap", second_dir, {"domain": base}, settings)
        hits = [(h.path, h.status) for h in server.hits]
    assert second.returncode == 0, second.log[-3000:]
    assert second.items == []
    # Every page asked conditionally and answered 304; nothing rendered, no browser started,
    # none of the pages' own requests made again.
    assert {status for path, status in hits if path in pages} == {304}
    assert second.stats["recrawl/not_modified"] == len(pages)
    assert "render/pages" not in second.stats
    assert not any(key.startswith("playwright/") for key in second.stats)
    assert not [path for path, _ in hits if path.startswith("/api/")]


def test_workers_sharing_a_crawl_on_redis_render_each_page_once(tmp_path: Path) -> None:
    (tmp_path / "redis").mkdir()
    for redis in redis_or_skip(tmp_path / "redis"):
        with mixed_site() as server:
            base, pages = server.base_url, all_pages(server)
            settings = {
                "REDIS_URL": redis.url,
                "EXTRACT_ENABLED": "True",
                # A render holds the site's slot; the shared pace's lease outlives it.
                "DOWNLOAD_TIMEOUT": "20",
            }
            workers = run_workers(2, tmp_path, "sitemap", {"domain": base}, settings, held=[server])
            api_hits = Counter(p for p in server.paths() if p.startswith("/api/"))
    exported_paths = Counter(p for w in workers for p in w.paths(base))
    assert set(exported_paths) == pages and max(exported_paths.values()) == 1, exported_paths
    rendered = [i for w in workers for i in w.items() if i["text_source"] == "rendered"]
    assert {i["url"].removeprefix(base) for i in rendered} == rendered_kinds(list(pages))
    assert sum(w.stats.get("render/pages", 0) for w in workers) == len(rendered)
    # Each fetched page's data asked once, by the worker that rendered it.
    assert set(api_hits.values()) == {1} and len(api_hits) == COPIES, api_hits
