"""The rows of a crawl state kept in Redis as stored (schema 2: a JSON array a row, sitemaps
numbered), and a state written by an earlier version (schema 1): refused by a crawl in one
line, brought up to date by ``maintext state NAME --upgrade``; on a real Redis server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scrapy_maintext.state.crawl_state import CrawlStateError
from scrapy_maintext.state.store import Visit, url_key
from scrapy_maintext.state.validators import Validators

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.distributed import news_site
from tests.recrawl_site import ChangingSite
from tests.redis_server import RedisServer
from tests.state_backends import (  # noqa: F401 (fixtures)
    empty_redis_fixture,
    redis_client,
    redis_server_fixture,
)

pytest.importorskip("redis")
#: Fixtures.
_ = (news_site,)

SITEMAP = "https://example.org/sitemaps/news.xml"
#: What the rows of schema 1 held (as its scripts wrote them: a JSON object of text).
OLD_ROWS = {
    "https://example.org/a.html": {
        "u": "https://example.org/a.html",
        "e": '"abc"',
        "m": "1790000000",
        "l": "1790000000",
        "h": "-4611686018427387904",
        "f": "1790000001",
        "x": "1790000002",
        "r": "2",
        "s": SITEMAP,
        "p": "00000000000000ff",
        "du": "1790003600",
        "iv": "3600",
        "ck": "1790000002",
    },
    "https://example.org/b.html": {"u": "https://example.org/b.html", "r": "0", "s": SITEMAP},
    SITEMAP: {"u": SITEMAP, "r": "0", "d": "1", "e": '"s1"'},
}


def write_schema_1(client: Any, name: str = "news") -> None:
    prefix = f"maintext:state:{name}"
    client.hset(f"{prefix}:meta", mapping={"kind": "scrapy-maintext crawl state", "schema": 1})
    client.set(f"{prefix}:pages", 2)
    for url, row in OLD_ROWS.items():
        client.set(f"{prefix}:u:{url_key(url)}", json.dumps(row))
        if "s" in row:
            client.sadd(f"{prefix}:src:{row['s']}", str(url_key(url)))


def state_command(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from scrapy_maintext.cli import main

    capsys.readouterr()
    status = main(["state", *argv])
    return status, capsys.readouterr().err.strip()


def test_a_row_as_stored_is_read_back_as_written(client: Any) -> None:
    """What the scripts write is what :func:`encode` writes, and reads back the same:
    64-bit hashes as text, times as numbers, slashes unescaped, text that is no ASCII, a
    backslash before a slash."""
    from scrapy_maintext.state.redis.keys import decode, encode
    from scrapy_maintext.state.redis.state import RedisCrawlState

    url = 'https://example.org/ünï/a\\/b.html?q="x"'
    with RedisCrawlState(client, "rows") as state:
        validators = Validators('W/"é\\"/', 1790000000)
        state.record_export(url, -(2**63), 1790000001, validators, 123, SITEMAP, "ff" * 8)
        state.record_visit(url, Visit(1790003600, 3600, 1790000001, None, 2**63 - 1))
    raw = client.get(f"maintext:state:rows:u:{url_key(url)}")
    row = decode(raw)
    assert row is not None and encode(row).encode() == raw
    assert b"\\/" not in raw.replace(b"\\\\/", b"") and b'"1790000001"' not in raw
    with RedisCrawlState(client, "rows") as state:
        record = state.get(url)
        assert record is not None and record.url == url and record.source == SITEMAP
        assert record.validators == validators and record.text_hash == -(2**63)
        assert record.listed == 123 and record.fingerprint == "ff" * 8
        assert state.visit(url) == Visit(1790003600, 3600, 1790000001, None, 2**63 - 1)
        assert state.listed_by(SITEMAP) == [url]
    assert client.hget("maintext:state:rows:src", SITEMAP) == b"1"
    assert client.hget("maintext:state:rows:srcid", "1") == SITEMAP.encode()


@pytest.mark.parametrize("value", ['{"u": "https://example.org/a.html"}', "[1.5]", "[]", "[[]]"])
def test_what_is_no_row_of_schema_2_is_none(value: str) -> None:
    from scrapy_maintext.state.redis.keys import decode

    assert decode(value) is None


def test_a_state_of_schema_1_is_refused_in_one_line(client: Any) -> None:
    from scrapy_maintext.state.redis.state import RedisCrawlState

    write_schema_1(client)
    with pytest.raises(CrawlStateError) as refused:
        RedisCrawlState(client, "news", "redis://127.0.0.1:1/0")
    said = str(refused.value)
    assert len(said.splitlines()) == 1
    assert "has schema 1, written by an earlier version" in said
    assert "`maintext state news --upgrade`" in said


def test_a_crawl_on_a_state_of_schema_1_exits_2_in_one_line(
    news: ChangingSite,
    redis_server: RedisServer,
    client: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_schema_1(client)
    settings = {**QUICK_DISCOVERY, "REDIS_URL": redis_server.url, "CRAWL_STATE": "news"}
    refused = run_crawl("sitemap", tmp_path, {"domain": news.base}, settings)
    assert refused.returncode == 2 and "Traceback" not in refused.log
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--upgrade" in err, err
    assert not news.server.hits
    status, said = state_command("news", "-s", f"REDIS_URL={redis_server.url}", capsys=capsys)
    assert status == 2 and "--upgrade" in said and len(said.splitlines()) == 1


def test_upgrade_keeps_every_row_and_listing(
    redis_server: RedisServer, client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from scrapy_maintext.state.redis.state import RedisCrawlState

    write_schema_1(client)
    client.set("maintext:state:news:held:w1", 1)
    where = f"REDIS_URL={redis_server.url}"
    status, said = state_command("news", "-s", where, "--upgrade", capsys=capsys)
    assert status == 2 and "in use by a crawl (1 worker)" in said
    client.delete("maintext:state:news:held:w1")
    status, said = state_command("news", "-s", where, "--upgrade", capsys=capsys)
    assert status == 0 and said.endswith(": 3 rows rewritten"), said
    assert not client.exists(f"maintext:state:news:src:{SITEMAP}")
    with RedisCrawlState(client, "news") as state:
        for url, row in OLD_ROWS.items():
            record = state.get(url)
            assert record is not None and record.url == url
            assert record.source == row.get("s") and record.revision == int(row["r"])
            assert record.etag == row.get("e") and record.fingerprint == row.get("p")
        assert state.get_many([*OLD_ROWS])[SITEMAP].last_modified is None
        assert sorted(state.listed_by(SITEMAP)) == sorted(u for u in OLD_ROWS if u != SITEMAP)
        assert state.listed_by(SITEMAP, undated=True) == ["https://example.org/b.html"]
        assert state.visit("https://example.org/a.html") == Visit(
            1790003600, 3600, 1790000002, None, None
        )
        assert state.known_pages() == 2
        state.record_seen("https://example.org/c.html", None, None, SITEMAP)
    assert client.scard("maintext:state:news:src:1") == 3
    status, said = state_command("news", "-s", where, "--upgrade", capsys=capsys)
    assert status == 0 and said.endswith(": 0 rows rewritten")
    status, said = state_command("news", "-s", where, "--json", capsys=capsys)
    assert status == 0 and not said


def test_upgrade_of_a_state_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, said = state_command(str(tmp_path / "s.sqlite"), "--upgrade", capsys=capsys)
    assert status == 2 and "--upgrade is for a state kept in Redis" in said
