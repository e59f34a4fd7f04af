"""Both crawl state backends for the same tests: the SQLite file and a state in Redis (on a
real ``redis-server``, see :mod:`tests.redis_server`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy_maintext.state.crawl_state import CrawlState
from scrapy_maintext.state.store import StateStore

from tests.distributed import redis_or_skip
from tests.redis_server import RedisServer

BACKENDS = ["sqlite", "redis"]

#: Opens the state under test again (as the next run, or another worker, would).
OpenState = Callable[[], StateStore]


@pytest.fixture(scope="module", name="redis_server")
def redis_server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    yield from redis_or_skip(tmp_path_factory.mktemp("redis"))


def redis_client(server: RedisServer) -> Any:
    import redis

    return redis.Redis.from_url(server.url)


@pytest.fixture(name="client")
def empty_redis_fixture(redis_server: RedisServer) -> Any:
    """A client of the module's Redis server, emptied first."""
    found = redis_client(redis_server)
    found.flushall()
    return found


@pytest.fixture(params=BACKENDS, name="open_state")
def open_state_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> OpenState:
    """A function opening one crawl state of the backend ``request.param``."""
    if request.param == "sqlite":
        return lambda: CrawlState(tmp_path / "state.sqlite")
    from scrapy_maintext.state.redis.state import RedisCrawlState

    server: RedisServer = request.getfixturevalue("redis_server")
    redis_client(server).flushall()
    return lambda: RedisCrawlState(redis_client(server), "test", server.url)
