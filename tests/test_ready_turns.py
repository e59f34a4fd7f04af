"""``TAKE_TURNS`` (``politeness.ready_turns``): the turns of a batch of sites taken in one
call, on a real Redis server, exactly where a reservation would have dispatched at once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.distributed import redis_or_skip
from tests.redis_server import RedisServer

redis = pytest.importorskip("redis")

NAMES = ("next", "sent", "floor", "inflight", "turn", "pause")


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    yield from redis_or_skip(tmp_path_factory.mktemp("redis"))


@pytest.fixture
def server(redis_server: RedisServer) -> Any:
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    return client


def site_keys(site: str) -> list[str]:
    return [f"{site}:{name}" for name in NAMES]


def take(server: Any, sites: dict[str, tuple[int, int, str]], answers: Any = ()) -> list[int]:
    from scrapy_maintext.politeness.ready_turns import TAKE_TURNS

    script = server.register_script(TAKE_TURNS)
    keys: list[str] = []
    args: list[Any] = []
    for site, token, delay, age in answers:
        keys += site_keys(site)[:4]
        args += [token, delay, age]
    head = [60_000, 30_000, len(answers)]
    for site, (delay, floor, token) in sites.items():
        keys += site_keys(site)
        args += [delay, floor, token]
    return [int(x) for x in script(keys, head + args)]


def test_free_sites_are_taken_and_busy_ones_left_untouched(server: Any) -> None:
    server.set("busy:inflight", "b:1")  # another worker's request in flight
    server.set("waiting:turn", 5)  # a worker waits for its turn
    server.set("paused:pause", 1, px=5_000)  # a Retry-After pause
    server.set("reserved:next", int(time.time() * 1000) + 10_000)  # a reservation ahead
    before = {
        k: server.get(k)
        for site in ("busy", "waiting", "paused", "reserved")
        for k in site_keys(site)
    }
    taken = take(
        server,
        {
            "free": (100, 0, "a:1"),
            "busy": (100, 0, "a:2"),
            "waiting": (100, 0, "a:3"),
            "paused": (100, 0, "a:4"),
            "reserved": (100, 0, "a:5"),
        },
    )
    assert taken == [1, 0, 0, 0, 0]
    after = {
        k: server.get(k)
        for site in ("busy", "waiting", "paused", "reserved")
        for k in site_keys(site)
    }
    assert after == before  # nothing written for a site not taken
    # The free site: as a dispatch would leave it (in flight, sent now, next after the delay).
    sent = int(server.get("free:sent"))
    assert server.get("free:inflight") == b"a:1" and int(server.get("free:next")) == sent + 100
    assert 0 < server.pttl("free:inflight") <= 30_000


def test_the_delay_since_the_last_request_and_the_shared_floor_hold(server: Any) -> None:
    assert take(server, {"s": (0, 0, "a:1")}) == [1]
    server.delete("s:inflight", "s:next")
    # 200 ms floor (another worker's robots.txt Crawl-delay): the last send was just now.
    server.set("s:floor", 200)
    assert take(server, {"s": (0, 0, "a:2")}) == [0]
    time.sleep(0.25)
    assert take(server, {"s": (0, 0, "a:3")}) == [1]
    assert int(server.get("s:next")) == int(server.get("s:sent")) + 200


def test_this_workers_answer_in_the_same_call_frees_its_site(server: Any) -> None:
    assert take(server, {"s": (100, 0, "a:1")}) == [1]
    assert take(server, {"s": (100, 0, "a:2")}) == [0]  # a:1 still in flight
    time.sleep(0.2)
    # a:1 answered 150 ms ago (held by its worker): the delay after it has passed.
    assert take(server, {"s": (100, 0, "a:2")}, answers=[("s", "a:1", 100, 150)]) == [1]
    assert server.get("s:inflight") == b"a:2"
    # Without the age the answer would count from now and hold the site 100 ms more.
    server.flushall()
    assert take(server, {"s": (100, 0, "a:1")}) == [1]
    time.sleep(0.2)
    assert take(server, {"s": (100, 0, "a:2")}, answers=[("s", "a:1", 100, 0)]) == [0]
