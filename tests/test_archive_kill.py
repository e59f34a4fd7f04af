"""WARC_OUTPUT under a SIGKILL and in a distributed crawl (two processes, one folder)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.demo.site import SiteOptions
from warcio.archiveiterator import ArchiveIterator

from tests.crawl import kill_when
from tests.distributed import redis_or_skip, run_workers
from tests.redis_server import RedisServer
from tests.sites import TestSiteServer
from tests.warc_checks import decoded_payload, read_warc, sha1_digest

#: Crawl processes at a real pace, killed or sharing Redis: seconds per test.
pytestmark = pytest.mark.slow

ARTICLES = 30
#: Pages the server has answered when the crawl is killed.
KILL_AFTER = 10


@pytest.fixture(scope="module")
def site() -> Iterator[TestSiteServer]:
    options = SiteOptions(articles=ARTICLES, crawl_delay=None)
    with TestSiteServer(options, host="127.0.0.4") as server:
        yield server


def _whole_records(path: Path) -> tuple[list[str], bool]:
    """Record types read whole from ``path``, and whether the file ends inside a record."""
    types: list[str] = []
    data = path.read_bytes()
    with path.open("rb") as handle:
        iterator = ArchiveIterator(handle)
        for record in iterator:
            payload = record.raw_stream.read()
            digest = record.rec_headers.get_header("WARC-Payload-Digest")
            offset = iterator.get_record_offset()
            if record.raw_stream.limit or (digest and digest != sha1_digest(payload)):
                return types, True
            types.append(record.rec_type)
    return types, offset + iterator.get_record_length() < len(data)


def test_sigkill_leaves_every_closed_record_readable(site: TestSiteServer, tmp_path: Path) -> None:
    site.reset()
    warc_dir, out = tmp_path / "warc", tmp_path / "items.jsonl"
    settings = {
        "DOWNLOAD_DELAY": "0.2",
        "AUTOTHROTTLE_ENABLED": "False",
        "EXTRACT_WORKERS": "1",
        "WARC_OUTPUT": str(warc_dir),
        "WARC_MAX_SIZE": "20000",
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"domain={site.base_url}"]
    cmd += ["-O", str(out)]
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    assert site.site is not None
    expected = site.site.expected_pages

    def served() -> int:
        return sum(1 for p in site.paths() if p in expected)

    kill_when(cmd, lambda: served() >= KILL_AFTER, tmp_path / "crawl.log")
    assert served() < len(expected), "the crawl ended before the kill"
    files = sorted(warc_dir.glob("*.warc.gz"))
    assert len(files) >= 2
    responses = 0
    for index, path in enumerate(files):
        types, cut = _whole_records(path)
        # Only the file being written at the kill may end inside a record.
        assert not cut or index == len(files) - 1, path.name
        assert types[0] == "warcinfo"
        responses += types.count("response")
    assert responses >= KILL_AFTER
    # Every document the killed crawl exported leads to its own, whole record.
    lines = out.read_text(encoding="utf-8").split("\n") if out.exists() else []
    items = [json.loads(line) for line in lines if line.strip().endswith("}")]
    for item in items:
        headers, payload = decoded_payload(warc_dir / item["warc_file"], item["warc_offset"])
        assert headers["WARC-Target-URI"] == item["final_url"] and payload


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    yield from redis_or_skip(tmp_path_factory.mktemp("redis"))


def test_two_workers_share_one_archive_folder(
    site: TestSiteServer, redis_server: RedisServer, tmp_path: Path
) -> None:
    import redis

    redis.Redis.from_url(redis_server.url).flushall()
    site.reset()
    warc_dir = tmp_path / "warc"
    settings = {
        "REDIS_URL": redis_server.url,
        "EXTRACT_ENABLED": "True",
        "EXTRACT_WORKERS": "1",
        "WARC_OUTPUT": str(warc_dir),
        "WARC_MAX_SIZE": "5000",
    }
    workers = run_workers(2, tmp_path, "sitemap", {"domain": site.base_url}, settings, [site])
    files = sorted(warc_dir.glob("*.warc.gz"))
    # Each worker's files all there: none overwrote another's.
    written = {name for path in files for name in [path.name]}
    pids = {path.name.split("-")[-2] for path in files}
    assert len(pids) == 2, "both workers wrote WARC files"
    assert len(written) == len(files)
    for path in files:
        assert read_warc(path)[0].headers["WARC-Filename"] == path.name
    items = [item for worker in workers for item in worker.items()]
    assert site.site is not None
    assert {item["url"].removeprefix(site.base_url) for item in items} == site.site.expected_pages
    for item in items:
        headers, _ = decoded_payload(warc_dir / item["warc_file"], item["warc_offset"])
        assert headers["WARC-Target-URI"] == item["final_url"]
        assert headers["WARC-Record-ID"] == f"<{item['warc_record_id']}>"
