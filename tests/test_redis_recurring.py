"""A recurring crawl with its state in Redis (``REDIS_URL`` + ``CRAWL_STATE=NAME``), run as
users run it: the same command again (cron), a Redis that stops answering or goes away,
damaged keys, a bad ``REDIS_URL``."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest
from scrapy_maintext.state.redis.state import KIND, SCHEMA

from tests.crawl import QUICK_DISCOVERY, CrawlResult, run_crawl
from tests.distributed import (
    Worker,
    news_site,
    redis_or_skip,
    redis_server_per_test,
    start_worker,
    wait_for,
)
from tests.recrawl_site import UNDATED, ChangingSite
from tests.redis_server import RedisServer
from tests.state_backends import redis_client

STATE = "news"
#: Fixtures.
_ = (news_site, redis_server_per_test)


def recurring(news: ChangingSite, redis: RedisServer, out: Path, **settings: Any) -> CrawlResult:
    """The cron line: the same command every time (no per-run key prefix)."""
    out.mkdir()
    news.server.reset()
    merged = {
        **QUICK_DISCOVERY,
        "REDIS_URL": redis.url,
        "CRAWL_STATE": STATE,
        "RECRAWL_SCHEDULE": "every-run",
        **settings,
    }
    return run_crawl("sitemap", out, {"domain": news.base}, merged)


def exported(result: CrawlResult) -> set[str]:
    return {item["url"] for item in result.items}


def test_the_same_command_again_crawls_what_is_new(
    news: ChangingSite, redis_server: RedisServer, tmp_path: Path
) -> None:
    first = recurring(news, redis_server, tmp_path / "run1")
    assert first.returncode == 0 and len(exported(first)) == len(news.stories)
    added = {news.base + news.path(news.add()) for _ in range(5)}
    news.publish()
    second = recurring(news, redis_server, tmp_path / "run2")
    assert second.returncode == 0
    assert exported(second) == added


#: A Redis call's deadline and the shutdown budget in the tests that take Redis away (s).
QUICK_REDIS = {"DISTRIBUTED_REDIS_TIMEOUT": "1", "SHUTDOWN_TIMEOUT": "6"}


def crawl_until_items(news: ChangingSite, redis: RedisServer, tmp_path: Path, count: int) -> Worker:
    """A worker of the recurring crawl, in a process of its own, once it exported ``count``
    pages (a Crawl-delay keeps it busy for seconds more)."""
    settings = {"CRAWL_STATE": STATE, "REDIS_URL": redis.url, "DOWNLOAD_DELAY": "0.3"}
    worker = start_worker(
        "w", tmp_path, "sitemap", {"domain": news.base}, {**settings, **QUICK_REDIS}
    )
    assert wait_for(lambda: len(worker.items()) >= count, 60), "the crawl did not start"
    return worker


def assert_stopped_in_one_line(worker: Worker, redis: RedisServer, *why: str) -> None:
    """One ERROR line naming Redis and one of ``why`` (what the client saw)."""
    assert worker.returncode == 1, worker.log[-3000:]
    assert "Traceback" not in worker.log, worker.log[-3000:]
    said = [line for line in worker.log.splitlines() if "] ERROR: " in line and "Lost:" not in line]
    assert len(said) == 1, said
    assert any(f"Redis {redis.url} failed: {each}" in said[0] for each in why), said
    assert "the crawl stops" in said[0] and worker.log.count("crawl state news") <= 1


def test_a_redis_that_stops_answering_stops_the_crawl(
    news: ChangingSite, redis_server: RedisServer, tmp_path: Path
) -> None:
    worker = crawl_until_items(news, redis_server, tmp_path, 2)
    paused = time.monotonic()
    redis_client(redis_server).execute_command("CLIENT", "PAUSE", 60_000)
    worker.wait(timeout=30)
    # One deadline to notice, none more to close (Redis is not asked again).
    assert time.monotonic() - paused < 8, worker.log[-3000:]
    assert_stopped_in_one_line(worker, redis_server, "Timeout")
    assert len(worker.items()) < len(news.stories)


def test_sigterm_is_seen_while_redis_does_not_answer(
    news: ChangingSite, redis_server: RedisServer, tmp_path: Path
) -> None:
    worker = crawl_until_items(news, redis_server, tmp_path, 2)
    redis_client(redis_server).execute_command("CLIENT", "PAUSE", 60_000)
    assert worker.proc is not None
    worker.proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    worker.wait(timeout=30)
    assert time.monotonic() - sent < 8, worker.log[-3000:]
    assert "Traceback" not in worker.log, worker.log[-3000:]


def test_redis_gone_mid_crawl_is_one_line(news: ChangingSite, tmp_path: Path) -> None:
    servers = redis_or_skip(tmp_path)
    server = next(servers)
    worker = crawl_until_items(news, server, tmp_path, 2)
    servers.close()  # the server stops
    worker.wait(timeout=30)
    # Refused at the next call, or closed or reset under a call in flight when it stopped.
    assert_stopped_in_one_line(
        worker, server, "Error 111", "Connection closed by server", "Error while reading"
    )
    # Pages, not writes (each page writes its row and its schedule).
    assert worker.stats.get("recrawl/state_writes_lost", 0) <= len(worker.items())


def test_a_damaged_row_is_skipped_and_written_again(
    news: ChangingSite, redis_server: RedisServer, tmp_path: Path
) -> None:
    from scrapy_maintext.state.store import url_key

    first = recurring(news, redis_server, tmp_path / "run1")
    assert first.returncode == 0
    damaged = news.base + news.path(next(iter(news.stories)))
    client = redis_client(redis_server)
    client.set(f"maintext:state:{STATE}:u:{url_key(damaged)}", "garbage")
    second = recurring(news, redis_server, tmp_path / "run2")
    assert second.returncode == 0, second.log[-3000:]
    # The other pages its sitemap (304) listed are planned, the damaged one is counted.
    assert "'recrawl/state_rows_skipped': 1" in second.log  # set as the state closes
    assert second.stats.get("recrawl/not_modified") == UNDATED - 1
    assert "is not a row of a crawl state; skipped" in second.log
    # Its sitemap is read whole again: the page comes back, and its row is written again.
    third = recurring(news, redis_server, tmp_path / "run3")
    assert third.returncode == 0 and exported(third) == {damaged}
    fourth = recurring(news, redis_server, tmp_path / "run4")
    assert fourth.returncode == 0 and not exported(fourth) and "not a row" not in fourth.log
    assert "20 known pages: 0 new or changed" in fourth.log


@pytest.mark.parametrize(
    ("key", "damage"),
    [
        ("pages", ("SET", "garbage")),
        ("near:count", ("SADD", "x")),
        ("meta", ("HSET", "schema", "x")),
    ],
)
def test_a_counter_of_the_wrong_type_is_one_line(
    key: str,
    damage: tuple[str, ...],
    news: ChangingSite,
    redis_server: RedisServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client = redis_client(redis_server)
    client.hset(f"maintext:state:{STATE}:meta", mapping={"kind": KIND, "schema": SCHEMA})
    command, *args = damage
    client.execute_command(command, f"maintext:state:{STATE}:{key}", *args)
    refused = recurring(news, redis_server, tmp_path / "run")
    assert refused.returncode == 2 and "Traceback" not in refused.log
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"scrapy crawl: error: crawl state {STATE} (Redis ")
    assert len(err.splitlines()) == 1 and key.split(":")[0] in err, err
    assert not news.server.hits


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:6379/0", "redis://127.0.0.1:port/0", "redis://127.0.0.1:1/0"]
)
@pytest.mark.parametrize("state", ["", STATE])
def test_a_bad_or_unreachable_redis_url_is_one_line(
    url: str, state: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("scrapy_redis")
    settings = {**QUICK_DISCOVERY, "REDIS_URL": url, "CRAWL_STATE": state}
    result = run_crawl("sitemap", tmp_path, {"domain": "http://127.0.0.1:9"}, settings)
    assert result.returncode == 2 and "Traceback" not in result.log
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"scrapy crawl: error: REDIS_URL {url}: "), err
    assert len(err.splitlines()) == 1
    from scrapy_maintext.cli import check_settings

    said = check_settings(["-s", f"REDIS_URL={url}", "-s", f"CRAWL_STATE={state}"])
    assert said is not None and said.startswith(f"maintext crawl: error: REDIS_URL {url}: ")


def test_the_keys_of_one_state_exactly(redis_server: RedisServer) -> None:
    """The documented delete keeps a state whose name begins with the deleted one's."""
    from scrapy_maintext.distributed.fingerprints import RedisFingerprints
    from scrapy_maintext.state.redis.state import RedisCrawlState, key_pattern, state_keys
    from scrapy_maintext.state.validators import Validators

    client = redis_client(redis_server)
    ours: set[str] = set()
    for name in (STATE, f"{STATE}:de", f"{STATE}:u:1", f"{STATE}:near:3:1"):
        with RedisCrawlState(client, name) as state:
            url = "https://example.org/a.html"
            state.record_export(url, 1, 100, Validators(), None, "https://example.org/s.xml")
        fingerprints = RedisFingerprints(client, f"maintext:state:{name}:near", 3)
        fingerprints.check_and_add("00000000000000ff", "https://example.org/a.html")
        ours = ours or {k.decode() for k in client.scan_iter(match="maintext:state:*")}
    # meta, pages, row, the sitemaps' numbers both ways, listing, count, 4 bands
    assert len(ours) == 1 + 1 + 1 + 2 + 1 + 1 + 4
    assert set(state_keys(client, STATE)) == ours
    documented = (Path(__file__).parent.parent / "docs" / "crawling.md").read_text()
    assert key_pattern("NAME").pattern in documented.replace("\\.", ".")
