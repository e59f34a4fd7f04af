"""The crawl state kept in Redis (``REDIS_URL`` with ``CRAWL_STATE=NAME``), on a real Redis
server: what only a shared, server-side state has (the rest is in tests/test_crawl_state.py,
run on both backends)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scrapy_maintext.state.crawl_state import CrawlStateError
from scrapy_maintext.state.schedule import Clock, Schedule, SchedulePolicy
from scrapy_maintext.state.store import StateUnavailable
from scrapy_maintext.state.validators import Validators

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.distributed import redis_or_skip
from tests.sites import TestSiteServer
from tests.state_backends import (  # noqa: F401 (fixtures)
    empty_redis_fixture,
    redis_client,
    redis_server_fixture,
)

pytest.importorskip("redis")

URL = "https://example.org/a.html"
SITEMAP = "https://example.org/sitemap.xml"


def redis_state(client: Any, name: str = "news") -> Any:
    from scrapy_maintext.state.redis.state import RedisCrawlState

    return RedisCrawlState(client, name)


def test_two_workers_revisions_only_go_up(client: Any) -> None:
    one, two = redis_state(client), redis_state(client)
    one.record_export(URL, 1, 100, Validators('"a"', None), 5, SITEMAP)
    one.commit()
    # Both workers export the page again in the same moment: each export counts once.
    one.record_export(URL, 2, 200, Validators('"b"', None), 6, None)
    two.record_export(URL, 3, 201, Validators('"c"', None), 6, None)
    two.commit()
    one.commit()
    record = two.get(URL)
    assert record is not None and record.revision == 3
    # Last writer wins; the first export stays the first.
    assert (record.text_hash, record.etag, record.first_export, record.last_export) == (
        2,
        '"b"',
        100,
        200,
    )
    assert record.source == SITEMAP and two.listed_by(SITEMAP) == [URL]
    # A page seen again (304) keeps its revision, even when it was a sitemap's row first.
    two.record_seen(URL, None, None, None, document=True)
    two.commit()
    assert one.get(URL).revision == 3  # type: ignore[union-attr]
    assert one.known_pages() == 1


def test_uncommitted_writes_are_lost_and_never_seen(client: Any) -> None:
    state = redis_state(client)
    state.record_export(URL, 1, 100, Validators(), None, None, "00000000000000ff")
    assert state.pending == 1 and state.get(URL) is None
    state.abandon()  # a worker killed before its commit
    state.commit()
    other = redis_state(client)
    assert other.get(URL) is None and list(other.fingerprints()) == []
    assert other.known_pages() == 0


def test_a_commit_that_cannot_reach_redis_writes_nothing(tmp_path: Path) -> None:
    servers = redis_or_skip(tmp_path)
    server = next(servers)
    state = redis_state(redis_client(server))
    state.record_export(URL, 1, 100, Validators(), None, None)
    servers.close()  # the server stops
    with pytest.raises(StateUnavailable, match="crawl state news"):
        state.commit()
    assert state.pending == 0


def test_sitemaps_documents_and_unlisted_pages(client: Any) -> None:
    state = redis_state(client)
    child = "https://example.org/sitemap-1.xml"
    state.record_seen(child, Validators('"s"', None), 50, SITEMAP, document=True)
    state.record_seen(URL, None, None, child)
    state.record_seen("https://example.org/b.html", None, 70, child)
    state.commit()
    assert state.listed_by(SITEMAP, documents=True) == [child]
    assert sorted(state.listed_by(child)) == [URL, "https://example.org/b.html"]
    assert state.listed_by(child, undated=True) == [URL]
    assert state.known_pages() == 2
    # Listed by another sitemap now: it leaves the first one's list.
    state.record_seen(URL, None, None, "https://example.org/sitemap-2.xml")
    state.unlist(["https://example.org/b.html"])
    state.commit()
    assert state.listed_by(child) == []
    assert state.listed_by("https://example.org/sitemap-2.xml") == [URL]


def test_the_schedule_is_kept_in_redis(client: Any) -> None:
    policy = SchedulePolicy("adaptive", 3600, 86_400)
    clock = Clock(1_790_812_800)
    state = redis_state(client)
    schedule = Schedule(state, policy, clock)
    first = schedule.visited(SITEMAP, False, digest=7)
    state.commit()
    later = Schedule(redis_state(client), policy, clock)
    assert later.get(SITEMAP) == first and first.changed is not None
    assert later.not_due([SITEMAP, URL]) == {SITEMAP}
    # A 304 keeps the digest; the visit without one replaces the row (no stale field).
    state.record_visit(URL, type(first)(10, 3600, 5))
    state.commit()
    assert later.get(URL) == type(first)(10, 3600, 5, None, None)


def test_what_is_not_a_crawl_state_is_refused(client: Any) -> None:
    client.set("maintext:state:other:meta", "x")
    with pytest.raises(CrawlStateError, match="is not a crawl state"):
        redis_state(client, "other")
    client.hset("maintext:state:newer:meta", mapping={"kind": "scrapy-maintext crawl state"})
    client.hset("maintext:state:newer:meta", "schema", 99)
    with pytest.raises(CrawlStateError, match="newer than this version"):
        redis_state(client, "newer")
    with pytest.raises(CrawlStateError, match="not a file path"):
        redis_state(client, "state/news.sqlite")


def test_unreachable_redis_is_one_line() -> None:
    import redis

    client = redis.Redis.from_url("redis://127.0.0.1:1/0")
    with pytest.raises(CrawlStateError, match=r"crawl state news: Redis unreachable"):
        redis_state(client)


def test_crawl_with_an_unreachable_redis_state_exits_2(
    hostile_site: TestSiteServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = {**QUICK_DISCOVERY, "CRAWL_STATE": "news", "REDIS_URL": "redis://127.0.0.1:1/0"}
    result = run_crawl("sitemap", tmp_path / "out", {"domain": hostile_site.base_url}, settings)
    assert result.returncode == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("scrapy crawl: error: REDIS_URL redis://127.0.0.1:1/0: ")
    assert "Redis unreachable" in err and len(err.splitlines()) == 1
    assert not hostile_site.paths() and "Traceback" not in result.log


def test_a_redis_error_is_a_failed_write_that_stops_the_crawl(tmp_path: Path) -> None:
    from scrapy.utils.test import get_crawler
    from scrapy_maintext.report.losses import ledger_of, lost
    from scrapy_maintext.state.recrawl import Recrawl, RecrawlSettings
    from scrapy_maintext.vocabulary.names import Stat

    servers = redis_or_skip(tmp_path)
    server = next(servers)
    crawler = get_crawler(settings_dict={"CRAWL_STATE": "news", "REDIS_URL": server.url})
    ledger_of(crawler).stopping = True  # no engine here: the stop itself is not tested
    state = redis_state(redis_client(server))
    recrawl = Recrawl(crawler, state, RecrawlSettings.from_crawler(crawler))
    recrawl.write(state.record_export, URL, 1, 100, Validators(), None, None)
    servers.close()
    recrawl.flush()
    assert recrawl.broken and state.pending == 0
    recrawl.write(state.mark_gone, URL)  # nothing more is written
    recrawl.write(state.mark_gone, URL + "?2")
    assert crawler.stats is not None
    # Pages, not writes: the first page's two writes are one outcome lost.
    assert crawler.stats.get_value(Stat.RECRAWL_STATE_WRITES_LOST) == 2
    # Said once, in one line, naming what failed: the server (the state has no URL here).
    assert list(ledger_of(crawler).problems) == ["Redis"]
    assert lost(crawler.stats)  # the crawl exits 1


def mget_calls(client: Any) -> int:
    return int(client.info("commandstats").get("cmdstat_mget", {}).get("calls", 0))


def test_a_visit_read_with_its_row_is_not_asked_again(client: Any) -> None:
    """The row read when a page is requested holds its visit: the visit asked once the page
    is answered comes from it (one round trip a page, not two), once; a visit written since
    is read from Redis."""
    policy = SchedulePolicy("adaptive", 3600, 86_400)
    state = redis_state(client)
    schedule = Schedule(state, policy, Clock(1_790_812_800))
    first = schedule.visited(URL, False)
    state.commit()
    reader = redis_state(client)
    assert reader.get(URL) is None  # a visit, but no export yet: no record
    before = mget_calls(client)
    assert reader.visits([URL, SITEMAP]) == {URL: first}
    assert mget_calls(client) == before + 1, "SITEMAP, not read with a row, is asked"
    assert reader.visits([URL]) == {URL: first}
    assert mget_calls(client) == before + 2, "a kept visit is taken once"
    reader.get(URL)
    later = Schedule(reader, policy, Clock(1_790_812_800 + 7_200)).visited(URL, True)
    reader.commit()
    assert reader.visits([URL]) == {URL: later}


def test_rows_read_ahead_are_taken_once_and_dropped_by_a_write(client: Any) -> None:
    """The rows of the requests a worker took from the shared queue are read in one round
    trip; each :meth:`get` takes its own from there, once; a write of this state to a URL
    drops what was read ahead for it (the next read asks Redis)."""
    writer = redis_state(client)
    pages = [f"https://example.org/{n}.html" for n in range(3)]
    for page in pages:
        writer.record_export(page, 7, 1_790_812_800, Validators('"e"', None), None, None)
    writer.commit()
    reader, expected = redis_state(client), writer.get(pages[0])
    before = mget_calls(client)
    reader.read_ahead([*pages, URL])
    assert mget_calls(client) == before + 1
    assert expected is not None and reader.get(pages[0]) == expected
    assert reader.get(URL) is None
    assert mget_calls(client) == before + 1, "read ahead, not asked again"
    reader.record_seen(pages[1], Validators('"f"', None), None, None)
    reader.commit()
    record = reader.get(pages[1])
    assert record is not None and record.etag == '"f"'
    assert mget_calls(client) == before + 2, "dropped by the write: asked again"
    reader.get(pages[0])
    assert mget_calls(client) == before + 3, "taken once"


def calls(client: Any, command: str) -> int:
    return int(client.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))


def test_a_listing_is_read_once_until_the_next_commit(client: Any) -> None:
    """The pages and the documents a sitemap listed are asked for one after the other, and
    its pages' rows next: one read of the listing and its rows until the next commit (what
    a commit wrote is read again)."""
    writer = redis_state(client)
    pages = [f"https://example.org/{n}.html" for n in range(3)]
    for page in pages:
        writer.record_seen(page, None, 1_790_000_000, SITEMAP)
    writer.record_seen("https://example.org/child.xml", None, None, SITEMAP, document=True)
    writer.commit()
    reader = redis_state(client)
    reader.get(SITEMAP)  # the sitemaps' numbers and the like, read once a process
    before = calls(client, "smembers"), mget_calls(client)
    dated, undated = reader.pages_listed_by(SITEMAP)
    assert set(dated) == set(pages) and undated == []
    assert reader.listed_by(SITEMAP, documents=True) == ["https://example.org/child.xml"]
    assert set(reader.get_many([*pages, URL])) == set(pages)
    assert (calls(client, "smembers"), mget_calls(client)) == (before[0] + 1, before[1] + 2)
    reader.record_seen(pages[0], None, 1_790_000_100, SITEMAP)
    reader.commit()
    dated, _ = reader.pages_listed_by(SITEMAP)
    assert calls(client, "smembers") == before[0] + 2
    assert set(dated) == set(pages)
    record = reader.get_many([pages[0]])[pages[0]]
    assert record.listed == 1_790_000_100
