"""Two sites on one host, different ports: separate download slots, each its Crawl-delay."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.demo.site import SiteOptions

from tests.crawl import DISCOVERY_ONLY, run_crawl
from tests.sites import TestSiteServer

SLOW_DELAY, FAST_DELAY = 1.0, 0.2
#: Scheduling jitter allowed below a Crawl-delay (the gaps are measured by the server).
TOLERANCE = 0.05


@pytest.fixture
def two_ports() -> Iterator[tuple[TestSiteServer, TestSiteServer]]:
    slow = TestSiteServer(SiteOptions(articles=4, feeds=False, crawl_delay=SLOW_DELAY))
    fast = TestSiteServer(SiteOptions(articles=4, feeds=False, crawl_delay=FAST_DELAY))
    with slow, fast:
        yield slow, fast


def _page_gaps(server: TestSiteServer) -> list[float]:
    hits = [h for h in server.hits if h.path != "/robots.txt"]
    return [b.time - a.time for a, b in itertools.pairwise(hits)]


@pytest.mark.slow
def test_sites_on_one_host_keep_their_own_crawl_delay(
    two_ports: tuple[TestSiteServer, TestSiteServer], tmp_path: Path
) -> None:
    slow, fast = two_ports
    assert slow.host == fast.host and slow.port != fast.port
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": f"{slow.base_url},{fast.base_url}"},
        DISCOVERY_ONLY,
        fresh_process=True,
    )
    assert result.returncode == 0, result.log[-3000:]
    for server in (slow, fast):
        assert server.site is not None
        assert set(result.paths(server.base_url)) >= server.site.expected_pages
    slow_gaps, fast_gaps = _page_gaps(slow), _page_gaps(fast)
    assert min(slow_gaps) >= SLOW_DELAY - TOLERANCE, slow_gaps
    assert min(fast_gaps) >= FAST_DELAY - TOLERANCE, fast_gaps
    # Separate slots: the fast site was not held to the slow site's pace.
    assert sorted(fast_gaps)[len(fast_gaps) // 2] < SLOW_DELAY / 2, fast_gaps
