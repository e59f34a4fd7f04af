"""Several recurring crawls on one Redis (issue 41): each crawl state has its own shared
run, a worker never joins another state's run, and the messages name their cause."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.crawl import QUICK_DISCOVERY, CrawlResult, run_crawl
from tests.distributed import (
    Worker,
    news_site,
    redis_or_skip,
    redis_server_per_test,
    start_worker,
    wait_for,
)
from tests.recrawl_site import ChangingSite
from tests.redis_server import RedisServer
from tests.sites import TestSiteServer
from tests.state_backends import redis_client

#: Fixtures.
_ = (news_site, redis_server_per_test)


@pytest.fixture(name="two_sites")
def two_sites_fixture() -> Iterator[tuple[ChangingSite, ChangingSite]]:
    """Two news sites of their own hosts (two slots: two sites of one crawl or of two)."""
    from scrapy_maintext.demo.site import SiteOptions

    with (
        TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.7") as one,
        TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.8") as two,
    ):
        yield ChangingSite(one), ChangingSite(two)


def joined(worker: Worker) -> bool:
    log = worker.out_dir / "log.txt"
    return log.exists() and "joined shared crawl" in log.read_text(errors="replace")


@pytest.mark.parametrize("prefix", [{}, {"DISTRIBUTED_KEY_PREFIX": "shared"}])
def test_two_crawls_of_two_states_started_together_never_mix(
    prefix: dict[str, str],
    two_sites: tuple[ChangingSite, ChangingSite],
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    """The documented line (REDIS_URL + its own CRAWL_STATE, no DISTRIBUTED_KEY_PREFIX), or
    one prefix given to both, for two crawls at once: each exports exactly its own site's
    pages, into its own state."""
    sites = list(two_sites)
    for site in sites:
        site.server.gate.clear()  # both workers join before either site answers
    workers = []
    try:
        for i, site in enumerate(sites):
            settings = {"REDIS_URL": redis_server.url, "CRAWL_STATE": f"site{i}", **prefix}
            workers.append(
                start_worker(f"w{i}", tmp_path, "sitemap", {"domain": site.base}, settings)
            )
        assert wait_for(lambda: all(joined(w) for w in workers), 60), "the workers did not join"
    finally:
        for site in sites:
            site.server.gate.set()
    for worker, site in zip(workers, sites, strict=True):
        worker.wait()
        assert worker.returncode == 0, worker.log[-3000:]
        assert sorted(worker.paths(site.base)) == sorted(site.path(s) for s in site.stories)


def test_a_worker_of_another_state_is_refused_in_one_line(
    news: ChangingSite,
    redis_server: RedisServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A prefix set to the run of a recurring crawl: a crawl of no state (or another) does
    not join it, finish it or clear it."""
    settings = {**QUICK_DISCOVERY, "REDIS_URL": redis_server.url, "DISTRIBUTED_KEY_PREFIX": "x"}
    first = run_crawl(
        "sitemap", tmp_path / "a", {"domain": news.base}, {**settings, "CRAWL_STATE": "news"}
    )
    assert first.returncode == 0 and len(first.items) == len(news.stories)
    capsys.readouterr()
    news.server.reset()
    settings["DISTRIBUTED_KEY_PREFIX"] = "x:state:news"
    refused = run_crawl("sitemap", tmp_path / "b", {"domain": news.base}, settings)
    assert refused.returncode == 2 and "Traceback" not in refused.log
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "x:state:news" in err and "belongs to crawl state 'news'" in err, err
    assert "DISTRIBUTED_KEY_PREFIX" in err and not news.server.hits


def test_a_run_changed_hands_is_refused_at_join(redis_server: RedisServer) -> None:
    """Two workers of two states on one prefix (the crawl command checked before either
    began): the second is refused when it joins, and the run is left as it was."""
    from scrapy_maintext.distributed.state import CrawlState, ForeignRun

    client = redis_client(redis_server)
    first = CrawlState(client, "p", "w1", 60, crawl_state="news")
    assert first.start_run("run1", renew=True) == ("run1", False)
    with pytest.raises(ForeignRun, match="belongs to crawl state 'news'; CRAWL_STATE=blog"):
        CrawlState(client, "p", "w2", 60, crawl_state="blog").start_run("run2", renew=True)
    with pytest.raises(ForeignRun, match="a crawl without CRAWL_STATE does not join"):
        CrawlState(client, "p", "w3", 60).start_run("run3", renew=True)
    assert first.run_id_now() == "run1"


SITEMAP = "/sitemaps/posts.xml"


def recurring(news: ChangingSite, redis: RedisServer, out: Path, **settings: Any) -> CrawlResult:
    """The cron line of a recurring crawl of ``news`` in state ``news``."""
    out.mkdir()
    news.server.reset()
    merged = {**QUICK_DISCOVERY, "REDIS_URL": redis.url, "CRAWL_STATE": "news", **settings}
    return run_crawl(
        "sitemap", out, {"domain": news.base}, {"RECRAWL_SCHEDULE": "every-run", **merged}
    )


@pytest.mark.parametrize("fresh", [False, True])
def test_a_damaged_listing_is_skipped_never_a_hang(
    fresh: bool, news: ChangingSite, redis_server: RedisServer, tmp_path: Path
) -> None:
    """A ``:src:<number>`` key that is no set: on a state whose sitemap answers 304, and on
    a fresh state (its sitemap will be the first numbered). Skipped and counted, no
    traceback, the crawl ends; its sitemap is read whole by the next run, which finds every
    page."""
    client = redis_client(redis_server)
    if not fresh:
        assert recurring(news, redis_server, tmp_path / "run0").returncode == 0
    number = client.hget("maintext:state:news:src", f"{news.base}{SITEMAP}")
    assert (number is None) == fresh
    listing = f"maintext:state:news:src:{(number or b'1').decode()}"
    client.delete(listing)
    client.set(listing, "garbage")
    damaged = recurring(news, redis_server, tmp_path / "run1")
    assert damaged.returncode == 0 and "Traceback" not in damaged.log, damaged.log[-3000:]
    assert damaged.stats.get("recrawl/state_keys_skipped") == 1
    assert f"{listing} is not a listing of a crawl state; skipped" in damaged.log
    if fresh:
        assert len(damaged.items) == len(news.stories)
    again = recurring(news, redis_server, tmp_path / "run2")
    assert again.returncode == 0 and "not a listing" not in again.log
    assert again.stats.get("recrawl/not_modified")
    assert client.type(listing) == b"set" and client.scard(listing) == len(news.stories)
    assert client.hget("maintext:state:news:srcid", listing.rsplit(":", 1)[1]) == (
        f"{news.base}{SITEMAP}".encode()
    )
    assert again.stats.get("recrawl/known") == len(news.stories)
    assert f"{len(news.stories)} known pages: 0 new or changed" in again.log


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (
            {"DISTRIBUTED_REDIS_TIMEOUT": "0"},
            "DISTRIBUTED_REDIS_TIMEOUT=0: give a number of seconds",
        ),
        ({"DISTRIBUTED_REDIS_TIMEOUT": "soon"}, "DISTRIBUTED_REDIS_TIMEOUT=soon: give a number"),
        (
            {"REDIS_PARAMS": '{"socket_timeout": "x"}'},
            "REDIS_PARAMS: socket_timeout='x' is no number",
        ),
        ({"REDIS_PARAMS": '{"colour": "blue"}'}, "REDIS_PARAMS: "),
        ({"REDIS_PARAMS": "not json"}, "REDIS_PARAMS: not a JSON object"),
    ],
)
@pytest.mark.parametrize("state", ["", "news"])
def test_a_bad_setting_is_named_in_one_line(
    settings: dict[str, str],
    said: str,
    state: str,
    redis_server: RedisServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Not blamed on REDIS_URL, not called an unreachable Redis."""
    merged = {**QUICK_DISCOVERY, "REDIS_URL": redis_server.url, "CRAWL_STATE": state, **settings}
    result = run_crawl("sitemap", tmp_path, {"domain": "http://127.0.0.1:9"}, merged)
    assert result.returncode == 2 and "Traceback" not in result.log
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("scrapy crawl: error: "), err
    assert said in err and "REDIS_URL" not in err and "unreachable" not in err, err


def test_a_full_redis_is_called_full(
    news: ChangingSite,
    redis_server: RedisServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Redis at its maxmemory answers, and refuses writes: it is not 'unreachable'."""
    client = redis_client(redis_server)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)
    refused = recurring(news, redis_server, tmp_path / "run")
    client.config_set("maxmemory", 0)
    assert refused.returncode == 2 and "Traceback" not in refused.log
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unreachable" not in err, err
    assert "Redis is full: it refuses writes at its maxmemory (" in err, err
    assert not news.server.hits


def test_a_sitemap_not_due_says_when_and_how_to_read_it_now(
    news: ChangingSite, redis_server: RedisServer, tmp_path: Path
) -> None:
    """An adaptive rerun minutes after new articles appear: the undated sitemap index is not
    due; the run says until when, and how to read it now (which then finds them)."""
    first = recurring(news, redis_server, tmp_path / "run1", RECRAWL_SCHEDULE="adaptive")
    assert first.returncode == 0 and len(first.items) == len(news.stories)
    added = {news.base + news.path(news.add()) for _ in range(2)}
    news.publish()
    rerun = recurring(news, redis_server, tmp_path / "run2", RECRAWL_SCHEDULE="adaptive")
    assert rerun.returncode == 0 and not rerun.items
    said = [line for line in rerun.log.splitlines() if "Not due: " in line]
    assert (
        len(said) == 1 and f"{news.base}/sitemap_index.xml read by a run started from 20" in said[0]
    )
    assert "To read it now: -s RECRAWL_SCHEDULE=every-run" in said[0]
    now = recurring(news, redis_server, tmp_path / "run3", RECRAWL_SCHEDULE="every-run")
    assert now.returncode == 0 and {item["url"] for item in now.items} == added


def state_command(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from scrapy_maintext.cli import main

    capsys.readouterr()
    status = main(["state", *argv])
    out, err = capsys.readouterr()
    return status, out, err.strip()


NOW = "2026-10-01T00:00:00Z"


def test_maintext_state_reads_a_redis_state_as_a_file(
    news: ChangingSite,
    redis_server: RedisServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same crawl into a state file and into Redis: the same table and JSON; --forget
    refused while a crawl holds the state, then done."""
    settings = {"RECRAWL_SCHEDULE": "adaptive", "RECRAWL_NOW": NOW}
    assert recurring(news, redis_server, tmp_path / "redis", **settings).returncode == 0
    sqlite = str(tmp_path / "news.sqlite")
    out = tmp_path / "file"
    out.mkdir()
    merged = {**QUICK_DISCOVERY, "CRAWL_STATE": sqlite, **settings}
    assert run_crawl("sitemap", out, {"domain": news.base}, merged).returncode == 0
    redis_url = f"REDIS_URL={redis_server.url}"
    for shown in (["--now", NOW], ["--now", NOW, "--json"]):
        status, from_redis, err = state_command("news", "-s", redis_url, *shown, capsys=capsys)
        assert status == 0, err
        from_file = state_command(sqlite, *shown, capsys=capsys)[1]
        as_url = state_command(redis_server.url, "news", *shown, capsys=capsys)[1]
        assert as_url == from_redis
        if "--json" not in shown:
            assert from_redis == from_file
            continue
        redis_json, file_json = (
            {k: v for k, v in json.loads(text).items() if k in ("sites", "total")}
            for text in (from_redis, from_file)
        )
        assert redis_json["total"]["known"] == len(news.stories) + 2  # index, sitemap
        assert redis_json == file_json
    host = news.base.removeprefix("http://")
    # A crawl holding the state (its site held at the gate): --forget is refused.
    news.server.gate.clear()
    held = {"REDIS_URL": redis_server.url, "CRAWL_STATE": "news", "RECRAWL_SCHEDULE": "every-run"}
    worker = start_worker("held", tmp_path, "sitemap", {"domain": news.base}, held)
    try:
        assert wait_for(lambda: joined(worker), 60)
        status, _, err = state_command("news", "-s", redis_url, "--forget", host, capsys=capsys)
    finally:
        news.server.gate.set()
        worker.wait()
    assert status == 2 and len(err.splitlines()) == 1 and "is in use by a crawl" in err, err
    assert worker.returncode == 0, worker.log[-3000:]
    status, _, err = state_command("news", "-s", redis_url, "--forget", host, capsys=capsys)
    assert (
        status == 0
        and err
        == f"Forgot {len(news.stories) + 2} URLs of {news.base} in news (Redis {redis_server.url})"
    )
    status, shown_json, _ = state_command("news", "-s", redis_url, "--json", capsys=capsys)
    assert status == 0 and json.loads(shown_json)["sites"] == []
    assert int(redis_client(redis_server).get("maintext:state:news:pages")) == 0
    again = recurring(news, redis_server, tmp_path / "again")
    assert again.returncode == 0 and len(again.items) == len(news.stories)


def test_maintext_state_of_a_redis_state_that_is_not_there_is_one_line(
    redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = state_command("nothing", "-s", f"REDIS_URL={redis_server.url}", capsys=capsys)
    assert status == 2 and err == (
        f"maintext state: error: crawl state nothing (Redis {redis_server.url}) does not exist"
    )
    status, _, err = state_command("news", "-s", "REDIS_URL=redis://127.0.0.1:1/0", capsys=capsys)
    assert status == 2 and len(err.splitlines()) == 1 and "Redis unreachable" in err, err


def test_a_row_damaged_before_the_first_run_is_counted_right(
    news: ChangingSite, redis_server: RedisServer, tmp_path: Path
) -> None:
    """A fresh state with one row key damaged: every page exported, the state knows them all
    (``P:pages``), and the skip is in the report JSON beside the other recrawl counts."""
    from scrapy_maintext.state.store import url_key

    damaged = news.base + news.path(list(news.stories)[-1])
    client = redis_client(redis_server)
    client.set(f"maintext:state:news:u:{url_key(damaged)}", "garbage")
    report = tmp_path / "report.json"
    result = recurring(news, redis_server, tmp_path / "run", CRAWL_REPORT=str(report))
    assert result.returncode == 0 and len(result.items) == len(news.stories)
    count = len(news.stories)
    assert f"{count} known pages: {count} new or changed" in result.log
    assert int(client.get("maintext:state:news:pages")) == count
    recrawl = json.loads(report.read_text())["recrawl"]
    assert recrawl["state_rows_skipped"] == 1 and recrawl["known"] == count, recrawl


def test_redis_lost_does_not_say_nothing_is_known(news: ChangingSite, tmp_path: Path) -> None:
    """After Redis went away mid-crawl, the run's last line does not claim 0 pages known."""
    servers = redis_or_skip(tmp_path)
    server = next(servers)
    settings = {"CRAWL_STATE": "news", "REDIS_URL": server.url, "DOWNLOAD_DELAY": "0.3"}
    settings |= {"DISTRIBUTED_REDIS_TIMEOUT": "1", "SHUTDOWN_TIMEOUT": "6"}
    worker = start_worker("w", tmp_path, "sitemap", {"domain": news.base}, settings)
    assert wait_for(lambda: len(worker.items()) >= 2, 60), "the crawl did not start"
    assert isinstance(servers, Generator)
    servers.close()  # the server stops
    worker.wait(timeout=30)
    assert worker.returncode == 1
    said = [line for line in worker.log.splitlines() if "Recurring crawl: " in line]
    assert len(said) == 1 and "an unknown number of known pages" in said[0], said
    assert "recrawl/known" not in worker.stats


def test_a_damaged_listing_is_found_again_from_the_rows(redis_server: RedisServer) -> None:
    """The store itself: a listing of another type is read from the rows (once a run),
    counted, and written again at the next commit; a write that meets one replaces it."""
    from scrapy_maintext.state.redis.state import RedisCrawlState
    from scrapy_maintext.state.validators import Validators

    client = redis_client(redis_server)
    sitemap = "https://example.org/s.xml"
    urls = [f"https://example.org/{i}.html" for i in range(3)]
    with RedisCrawlState(client, "rows") as state:
        for url in urls:
            state.record_export(url, 1, 100, Validators(), None, sitemap)
    listing = f"maintext:state:rows:src:{client.hget('maintext:state:rows:src', sitemap).decode()}"
    client.delete(listing)
    client.hset(listing, "x", "y")
    with RedisCrawlState(client, "rows") as state:
        assert sorted(state.listed_by(sitemap)) == urls
        assert sorted(state.listed_by(sitemap, undated=True)) == urls
        assert state.skipped_keys == {listing} and not state.skipped
    assert client.type(listing) == b"set" and client.scard(listing) == 3
    client.delete(listing)
    client.set(listing, "garbage")
    with RedisCrawlState(client, "rows") as state:
        state.record_export(urls[0], 2, 200, Validators(), None, sitemap)
        state.commit()
        assert state.skipped_keys == {listing}
    assert client.type(listing) == b"set" and client.scard(listing) == 3


def test_a_killed_run_is_finished_only_by_its_own_state(
    two_sites: tuple[ChangingSite, ChangingSite], redis_server: RedisServer, tmp_path: Path
) -> None:
    """A worker of one state killed mid-run; a crawl of another state started next exports
    only its own site; the first state's next worker finishes its run."""
    first, second = two_sites
    slow = {"REDIS_URL": redis_server.url, "DOWNLOAD_DELAY": "0.3"}
    killed = start_worker(
        "a1", tmp_path, "sitemap", {"domain": first.base}, {**slow, "CRAWL_STATE": "a"}
    )
    assert wait_for(lambda: len(killed.items()) >= 2, 60), "the crawl did not start"
    killed.kill()
    killed.wait()
    other = {"REDIS_URL": redis_server.url, "CRAWL_STATE": "b"}
    b = start_worker("b", tmp_path, "sitemap", {"domain": second.base}, other).wait()
    assert b.returncode == 0, b.log[-3000:]
    assert sorted(b.paths(second.base)) == sorted(second.path(s) for s in second.stories)
    again = {"REDIS_URL": redis_server.url, "CRAWL_STATE": "a"}
    a = start_worker("a2", tmp_path, "sitemap", {"domain": first.base}, again).wait()
    assert a.returncode == 0, a.log[-3000:]
    done = set(killed.paths(first.base)) | set(a.paths(first.base))
    assert done == {first.path(s) for s in first.stories}
    assert all(item["url"].startswith(first.base) for item in a.items() + killed.items())


def test_a_damaged_fingerprint_key_is_dropped_and_counted(redis_server: RedisServer) -> None:
    """The near-duplicate index kept with a state: a band bucket that is no hash and a field
    that is no run of fingerprint entries are dropped and counted; the check goes on."""
    from scrapy_maintext.distributed.fingerprints import RedisFingerprints, band_slots

    client = redis_client(redis_server)
    prefix = "maintext:state:news:near"
    fingerprints = RedisFingerprints(client, prefix, 3)
    fp, near = "00000000000000ff", "00000000000000fe"
    assert fingerprints.check_and_add(fp, "https://a/1") is None
    (first, _), (second, field), *_ = band_slots(prefix, fp, 3)
    client.delete(first)
    client.set(first, "garbage")
    client.hset(second, field, "not a fingerprint")
    # Far from fp (32 bits), in fp's first two bands: every band is read.
    assert fingerprints.check_and_add("ffffffff000000ff", "https://a/3") is None
    assert fingerprints.skipped == 2 and client.type(first) == b"hash"
    assert fingerprints.check_and_add(near, "https://a/2") == fp
    assert fingerprints.check_and_add(fp, "https://a/1") is None  # itself, not a duplicate
