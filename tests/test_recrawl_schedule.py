"""Adaptive revisits (``RECRAWL_SCHEDULE=adaptive``): the rules on a fake clock, the schedule
in a real state file, and recurring crawls whose clock is set by ``RECRAWL_NOW``."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scrapy.settings import Settings
from scrapy_maintext.cli import main
from scrapy_maintext.commands.crawl import crawl_state_problem
from scrapy_maintext.demo.site import SiteOptions
from scrapy_maintext.discovery.feeds import parse_feed
from scrapy_maintext.discovery.sitemaps import parse_sitemap
from scrapy_maintext.state.crawl_state import CrawlState, url_key
from scrapy_maintext.state.recrawl_discovery import DiscoveryMemory, NotDueDocuments
from scrapy_maintext.state.schedule import (
    DAY,
    EVERY_RUN,
    JITTER,
    Clock,
    Hints,
    Schedule,
    SchedulePolicy,
    Visit,
    changefreq_seconds,
    feed_hints,
    freshness_seconds,
    is_due,
    next_visit,
    parse_now,
    ttl_seconds,
    update_period_seconds,
)
from scrapy_maintext.state.sqlite_schema import SCHEMA_VERSION
from scrapy_maintext.state.validators import Validators

from tests.crawl import NO_WAITS, run_crawl
from tests.recrawl_site import FEED_SIZE, UNDATED, ChangingSite
from tests.sites import TestSiteServer

HOUR = 3_600
T0 = 1_800_000_000
POLICY = SchedulePolicy(min_interval=HOUR, max_interval=DAY)


def test_unchanged_grows_changed_shrinks_within_bounds() -> None:
    visit = next_visit(POLICY, None, T0, changed=True, modified=T0 - 100 * DAY)
    assert (visit.interval, visit.due, visit.checked) == (HOUR, T0 + HOUR, T0)
    intervals = []
    now = T0
    for _ in range(12):
        now = visit.due
        visit = next_visit(POLICY, visit, now, changed=False)
        intervals.append(visit.interval)
    assert intervals[:3] == [5_400, 8_100, 12_150]  # x1.5
    assert intervals[-1] == DAY  # up to RECRAWL_MAX_INTERVAL
    visit = next_visit(POLICY, visit, now + DAY, changed=True)
    assert visit.interval == DAY // 2 and visit.changed == now + DAY
    for _ in range(6):
        visit = next_visit(POLICY, visit, visit.due, changed=True)
    assert visit.interval == HOUR  # down to RECRAWL_MIN_INTERVAL


def test_a_url_that_just_changed_is_not_left_long() -> None:
    """Unchanged once after changing every hour: 10% of the time it has been unchanged
    bounds the interval, so a busy feed is read again in the next run."""
    changed = Visit(T0 + HOUR, HOUR, T0, changed=T0)
    visit = next_visit(POLICY, changed, T0 + HOUR, changed=False)
    assert visit.interval == HOUR
    # Unchanged for 5 days: 12 hours.
    old = Visit(T0, 20 * HOUR, T0 - HOUR, changed=T0 - 5 * DAY)
    assert next_visit(POLICY, old, T0, changed=False).interval == 12 * HOUR


def test_hints_bound_the_interval() -> None:
    long = Visit(T0, DAY, T0 - DAY, changed=T0 - 60 * DAY)
    hourly = Hints(change_period=changefreq_seconds("hourly"))
    assert next_visit(POLICY, long, T0, False, hourly).interval == HOUR
    fresh = Hints(fresh_for=6 * HOUR)
    new = next_visit(POLICY, None, T0, True, fresh)
    assert new.interval == 6 * HOUR  # ttl / max-age: not before
    assert next_visit(POLICY, None, T0, True, Hints(fresh_for=90 * DAY)).interval == DAY


def test_due_with_half_a_run_of_slack_and_spread() -> None:
    visit = Visit(T0 + 5_400, 5_400, T0)
    assert not is_due(POLICY, visit, T0)
    assert is_due(POLICY, visit, T0 + HOUR)  # 1.5 h rounds to the next hourly run
    assert is_due(POLICY, None, T0)
    assert is_due(SchedulePolicy(EVERY_RUN), Visit(T0 + DAY, DAY, T0), T0)
    old = Visit(T0, DAY, T0 - DAY, changed=T0 - 100 * DAY)
    spread = next_visit(POLICY, old, T0, False, spread=0.999)
    assert T0 + DAY * (1 - JITTER) <= spread.due < T0 + DAY


def test_hint_parsing() -> None:
    assert changefreq_seconds(" Daily ") == DAY
    assert changefreq_seconds("never") is None and changefreq_seconds(None) is None
    assert update_period_seconds("hourly", "2") == HOUR // 2
    assert update_period_seconds("weekly", "x") == 7 * DAY
    assert ttl_seconds("60") == HOUR and ttl_seconds("-1") is None
    assert freshness_seconds(b"public, max-age=600", None, None, T0) == 600
    assert freshness_seconds(b"max-age=600, s-maxage=60", None, None, T0) == 60
    assert freshness_seconds(b"no-cache", b"Thu, 01 Jan 2099 00:00:00 GMT", None, T0) is None
    expires, date = b"Sun, 06 Nov 1994 09:49:37 GMT", b"Sun, 06 Nov 1994 08:49:37 GMT"
    assert freshness_seconds(None, expires, date, T0) == HOUR
    assert freshness_seconds(None, b"0", None, T0) is None


def test_hints_come_from_sitemaps_and_feeds() -> None:
    sitemap = (
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url>'
        b"<loc>https://e.org/a</loc><changefreq>weekly</changefreq></url></urlset>"
    )
    (entry,) = parse_sitemap(sitemap).entries
    assert changefreq_seconds(entry.changefreq) == 7 * DAY
    feed = (
        b'<rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel>'
        b"<title>t</title><ttl>30</ttl><sy:updatePeriod>daily</sy:updatePeriod>"
        b"<sy:updateFrequency>4</sy:updateFrequency></channel></rss>"
    )
    assert feed_hints(parse_feed(feed)) == Hints(change_period=DAY // 4, fresh_for=1_800)


def test_settings_are_checked_before_a_crawl(tmp_path: Path) -> None:
    base = {"CRAWL_STATE": str(tmp_path / "s.sqlite")}
    assert crawl_state_problem(Settings(base)) is None
    bad = crawl_state_problem(Settings({**base, "RECRAWL_SCHEDULE": "hourly"}))
    assert bad == "RECRAWL_SCHEDULE='hourly': use adaptive or every-run"
    bad = crawl_state_problem(Settings({**base, "RECRAWL_MAX_INTERVAL": "60"}))
    assert bad is not None and "0 < minimum <= maximum" in bad
    bad = crawl_state_problem(Settings({**base, "RECRAWL_NOW": "2026-10-01T00:00"}))
    assert bad is not None and "time zone" in bad
    assert parse_now("2026-10-01T00:00:00Z") == 1_790_812_800


def test_sitemap_body_changes_count_and_304_keeps_them(tmp_path: Path) -> None:
    clock = Clock(T0)
    url = "https://example.org/sitemap.xml"
    with CrawlState(tmp_path / "state.sqlite") as state:
        schedule = Schedule(state, POLICY, clock)
        assert schedule.due(url) and schedule.get(url) is None
        first = schedule.visited(url, False, digest=1)
        assert not schedule.due(url)
        clock.at = first.due
        assert schedule.due(url)
        assert schedule.visited(url, False, digest=1).interval == HOUR  # young: 10% bound
        clock.at += 30 * DAY
        grown = schedule.visited(url, False)  # a 304: the body stays the one read
        assert grown.interval == HOUR * 1.5 and grown.digest == 1
        assert schedule.visited(url, False, digest=2).interval == HOUR  # changed
        state.commit()
        assert schedule.not_due([url, "https://example.org/new"]) == {url}
        assert Schedule(state, SchedulePolicy(EVERY_RUN), clock).not_due([url]) == set()


def test_pages_without_a_date_wait_unless_their_sitemap_dropped_them(tmp_path: Path) -> None:
    clock = Clock(T0)
    with CrawlState(tmp_path / "state.sqlite") as state:
        schedule = Schedule(state, POLICY, clock)
        memory = DiscoveryMemory(state, schedule)
        a, b, c, d = (f"https://e.org/{name}" for name in "abcd")
        for url in (a, b, c):
            schedule.visited(url, True)
        memory.unlisted["https://e.org"] = [a]  # no longer listed: checked now
        dated = {a: None, b: None, c: datetime(2026, 1, 1, tzinfo=UTC), d: None}
        assert memory.not_due("https://e.org", dated) == {b}
        clock.at += HOUR
        assert memory.not_due("https://e.org", dated) == set()


def test_a_state_of_schema_2_is_migrated_and_everything_is_due(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite"
    with CrawlState(path) as state:
        state.record_export("https://example.org/a", 1, T0, Validators(), None, None)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript("DROP TABLE schedule; DROP TABLE robots; PRAGMA user_version=2;")
    with CrawlState(path) as state:
        schedule = Schedule(state, POLICY, Clock(T0))
        assert schedule.due("https://example.org/a")
        schedule.visited("https://example.org/a", False)
        state.commit()
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
        keys = db.execute("SELECT key FROM schedule").fetchall()
        assert keys == [(url_key("https://example.org/a"),)]


# A recurring crawl with its clock set: the site of tests/test_recrawl.py.


@pytest.fixture
def news() -> Iterator[ChangingSite]:
    with TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.7") as server:
        yield ChangingSite(server)


def _crawl(
    news: ChangingSite, out: Path, state: Path, now: int, spider: str = "sitemap", **extra: str
) -> set[tuple[str, int]]:
    news.server.reset()
    settings = {
        **NO_WAITS,
        "DOWNLOAD_TIMEOUT": "5",
        "EXTRACT_ENABLED": "False",
        "CRAWL_STATE": str(state),
        "RECRAWL_NOW": str(now),
        **extra,
    }
    args = {"domain": news.base} if spider == "sitemap" else {"url": f"{news.base}/feed.xml"}
    result = run_crawl(spider, out, args, settings)
    assert result.returncode == 0, result.log[-3000:]
    return {(h.path, h.status) for h in news.server.hits}


def _articles(hits: set[tuple[str, int]]) -> set[tuple[str, int]]:
    return {(path, status) for path, status in hits if path.startswith("/articles/")}


@pytest.mark.slow  # four crawls: about 6 s
def test_adaptive_rerun_skips_what_is_not_due_but_not_what_is_announced(
    news: ChangingSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs every 10 minutes (RECRAWL_MIN_INTERVAL=600): the undated pages, unchanged at
    the second run, are due again 15 minutes later; the sitemap index, new, in 10."""
    state = tmp_path / "state.sqlite"
    slugs = list(news.stories)
    undated = {news.path(s) for s in slugs[:UNDATED]}
    every_10_min = {"RECRAWL_MIN_INTERVAL": "600"}
    first = _crawl(news, tmp_path / "1", state, T0, **every_10_min)
    assert len({p for p, s in _articles(first) if s == 200}) == 20
    second = _crawl(news, tmp_path / "2", state, T0 + 600, **every_10_min)
    assert _articles(second) == {(path, 304) for path in undated}

    announced, silent = slugs[UNDATED], slugs[0]
    news.edit(announced, "announced by its lastmod")
    news.edit(silent, "silent", bump_lastmod=False)
    news.publish()
    # Five minutes later: the index is read, its announced edit fetched; the undated pages
    # (the silent edit among them) are not due.
    third = _crawl(news, tmp_path / "3", state, T0 + 900, **every_10_min)
    assert ("/sitemap_index.xml", 200) in third
    assert _articles(third) == {(news.path(announced), 200)}
    # Two days later every undated page is due: the silent edit is found.
    fourth = _crawl(news, tmp_path / "4", state, T0 + 2 * DAY, **every_10_min)
    assert {path for path, _ in _articles(fourth)} == undated
    assert (news.path(silent), 200) in fourth

    # What the state command makes of the file the crawls wrote: under the crawl's
    # schedule, nothing is due at the moment of the run that just read what was.
    now = ["--now", str(T0 + 2 * DAY), "-s", "RECRAWL_MIN_INTERVAL=600"]
    assert main(["state", str(state), "--json", *now]) == 0
    (site,) = json.loads(capsys.readouterr().out)["sites"]
    assert (site["site"], site["known"], site["listings"]) == (news.base, 22, 2)
    assert (site["revisions"], site["changed_24h"], site["due_now"]) == (22, 1, 0)


def test_a_feed_is_read_when_due(news: ChangingSite, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite"
    assert len(_articles(_crawl(news, tmp_path / "1", state, T0, "feed"))) == FEED_SIZE
    added = news.add()
    news.publish()
    # Read ten minutes ago: the feed is not due, nothing is asked (robots.txt neither).
    assert _crawl(news, tmp_path / "2", state, T0 + 600, "feed") == set()
    hits = _crawl(news, tmp_path / "3", state, T0 + HOUR, "feed")
    assert ("/feed.xml", 200) in hits and _articles(hits) == {(news.path(added), 200)}


@pytest.mark.slow  # two crawls: about 3 s
def test_a_lowered_max_interval_applies_at_the_next_run(news: ChangingSite, tmp_path: Path) -> None:
    """Undated pages stored due a day after their visit (under the default maximum); the
    next run lowers RECRAWL_MAX_INTERVAL to 6 hours: 7 hours later it asks for them."""
    state = tmp_path / "state.sqlite"
    _crawl(news, tmp_path / "1", state, T0)
    with contextlib.closing(sqlite3.connect(state)) as db, db:
        db.execute("UPDATE schedule SET due = checked + ?, interval = ?", (DAY, DAY))
    undated = {news.path(s) for s in list(news.stories)[:UNDATED]}
    six_hours = {"RECRAWL_MAX_INTERVAL": str(6 * HOUR)}
    hits = _crawl(news, tmp_path / "2", state, T0 + 7 * HOUR, **six_hours)
    assert _articles(hits) == {(path, 304) for path in undated}


def _cron_run(news: ChangingSite, out: Path, state: Path, now: int) -> str:
    """The documented cron line as a user runs it (the default console), on the sitemap."""
    news.server.reset()
    out.mkdir()
    argv = ["crawl", "sitemap", "-a", f"domain={news.base}", "-O", str(out / "news.jsonl")]
    for key, value in {
        **NO_WAITS,
        "EXTRACT_ENABLED": "False",
        "CRAWL_STATE": str(state),
        "RECRAWL_NOW": str(now),
    }.items():
        argv += ["-s", f"{key}={value}"]
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy_maintext", *argv],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stderr


def test_a_cron_run_that_reads_nothing_says_why_once_on_the_console(
    news: ChangingSite, tmp_path: Path
) -> None:
    """Ten minutes after a run, the sitemap index is not due: the default console (no
    ``-v``, no ``-L``) says so in one line, with when it is read and how to read it now."""
    state = tmp_path / "state.sqlite"
    first = _cron_run(news, tmp_path / "1", state, T0)
    assert "Not due" not in first
    again = _cron_run(news, tmp_path / "2", state, T0 + 600)
    said = [line for line in again.splitlines() if "Not due: " in line]
    assert len(said) == 1, again
    started = (
        rf"{news.base}/sitemap_index.xml read by a run started from \d{{4}}-\d\d-\d\d \d\d:\d\d UTC"
    )
    assert re.search(started, said[0]), said[0]
    assert said[0].endswith("To read it now: -s RECRAWL_SCHEDULE=every-run"), said[0]
    assert not news.server.hits or {h.path for h in news.server.hits} <= {"/robots.txt"}


def test_not_due_documents_are_one_line_naming_the_first() -> None:
    documents = NotDueDocuments()
    assert documents.line(600) is None
    documents.add("https://a.example/feed.xml", T0 + 900)
    documents.add("https://a.example/sitemap.xml", T0 + 600)
    documents.add("https://a.example/news.xml", None)
    line = documents.line(600)
    assert line is not None and line.startswith(
        "Not due: 3 sitemaps or feeds (https://a.example/news.xml first) read by a run "
        "started from now (RECRAWL_SCHEDULE=adaptive, RECRAWL_MIN_INTERVAL=600)"
    )
