"""A recurring crawl shared by two workers (``REDIS_URL`` with ``CRAWL_STATE=NAME``): the
crawl state kept in a real Redis server gives the same runs as one machine's file
(tests/test_recrawl.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.distributed import Worker, news_site, redis_server_per_test, run_workers
from tests.recrawl_site import NEWSROOM_DAY_OUTCOMES, UNDATED, ChangingSite, newsroom_day
from tests.redis_server import RedisServer

#: Worker processes on a real Redis server: seconds per test.
pytestmark = pytest.mark.slow

STATE = "news"
#: Fixtures.
_ = (news_site, redis_server_per_test)


def shared_run(news: ChangingSite, redis: RedisServer, run: str, tmp_path: Path) -> list[Worker]:
    """One run of the recurring crawl: two workers, a shared crawl of its own (a new key
    prefix per run), the one crawl state ``news`` in Redis."""
    news.server.reset()
    settings = {
        "REDIS_URL": redis.url,
        "CRAWL_STATE": STATE,
        "DISTRIBUTED_KEY_PREFIX": f"{run}:%(spider)s",
        "RECRAWL_SCHEDULE": "every-run",
        "DOWNLOAD_DELAY": "0",  # no Crawl-delay either: politeness has tests of its own
    }
    out = tmp_path / run
    out.mkdir()
    return run_workers(2, out, "sitemap", {"domain": news.base}, settings, held=[news.server])


def exported(workers: list[Worker], news: ChangingSite) -> Counter[str]:
    return Counter(p for w in workers for p in w.paths(news.base))


def article_hits(news: ChangingSite) -> Counter[tuple[str, int]]:
    return Counter((h.path, h.status) for h in news.server.hits if h.path.startswith("/articles/"))


def outcomes(workers: list[Worker]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for worker in workers:
        for key, value in worker.stats.items():
            name = key.removeprefix("recrawl/")
            if key.startswith("recrawl/") and name in OUTCOMES:
                total[name] += value
    return dict(total)


OUTCOMES = ("new", "changed", "unchanged", "not_modified", "gone", "skipped_by_date")


def test_two_workers_share_one_recurring_crawl(
    news: ChangingSite, redis_server: RedisServer, tmp_path: Path
) -> None:
    first = shared_run(news, redis_server, "run1", tmp_path)
    everything = {news.path(slug) for slug in news.stories}
    assert exported(first, news) == Counter(everything)
    assert {i["revision"] for w in first for i in w.items()} == {1}

    # Nothing changed: no article downloaded (the undated ones answer 304), nothing exported.
    second = shared_run(news, redis_server, "run2", tmp_path)
    assert not exported(second, news)
    hits = article_hits(news)
    assert {status for _, status in hits} == {304} and sum(hits.values()) == UNDATED
    assert outcomes(second) == {"not_modified": UNDATED}

    # 2 edits with lastmod bumped, 1 without, 2 added, 1 removed: exactly those, once.
    day = newsroom_day(news)
    third = shared_run(news, redis_server, "run3", tmp_path)
    assert exported(third, news) == Counter(day.exported)
    items = {i["url"].removeprefix(news.base): i for w in third for i in w.items()}
    assert {items[p]["revision"] for p in day.changed} == {2}
    downloaded = Counter(path for (path, status), n in article_hits(news).items() if status == 200)
    assert downloaded == Counter({path: 1 for path in day.exported})
    assert (day.removed, 404) in article_hits(news)
    assert outcomes(third) == NEWSROOM_DAY_OUTCOMES
    assert known_pages(redis_server) == 22


def known_pages(server: RedisServer) -> Any:
    import redis
    from scrapy_maintext.state.redis.state import RedisCrawlState

    with RedisCrawlState(redis.Redis.from_url(server.url), STATE) as state:
        return state.known_pages()
