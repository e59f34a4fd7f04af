"""The private Scrapy hooks behind :mod:`scrapy_maintext.scrapy_internals` behave as used.

Checked by behaviour on a real engine (``tests/scrapy_probe.py``, in a fresh process with its
own reactor); the robots.txt and AutoThrottle hooks by the politeness crawls
(tests/test_politeness_edges.py, tests/test_crawl_ports.py, tests/test_crawl_sitemap.py); the
downloader's one request at a time with no delay by tests/test_crawl_site_memory.py; the
HTTP/1.1 handler's bounded pool here and by tests/test_crawl_no_hang.py; scrapy-playwright's
hooks (``scrapy_internals.playwright``) here with the real Chromium
(``tests/playwright_probe.py``), and by the render crawls (tests/test_render_crawl.py).
``pyproject.toml`` bounds Scrapy to the versions this was checked with; ``.ci/newest-scrapy``
runs these tests against the newest Scrapy release before the bound is raised.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import scrapy
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tests.js_site import needs_browser


def test_installed_scrapy_is_in_the_declared_range() -> None:
    requirement = next(r for r in (version_requirements()) if r.lower().startswith("scrapy"))
    specifier = SpecifierSet(requirement[len("scrapy") :].split(";")[0])
    assert Version(scrapy.__version__) in specifier, (scrapy.__version__, requirement)


def version_requirements() -> list[str]:
    from importlib.metadata import requires

    assert version("scrapy-maintext")
    return [r for r in requires("scrapy-maintext") or [] if "extra ==" not in r]


def probe() -> dict[str, object]:
    script = Path(__file__).with_name("scrapy_probe.py")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_slot_hooks_key_configure_and_drain_a_live_download_slot() -> None:
    seen = probe()
    assert seen["key"] == "site:8080"
    # The per-slot settings reach the slot the downloader creates.
    assert seen["delay"] == 5.0
    # One request downloads at once, two wait their delay in the slot's queue...
    assert seen["queued"] == 2 and seen["drained_while_downloading"] is False
    # ... and the quick stop takes them out.
    assert seen["taken"] == 2 and seen["queued_after"] == 0


def test_explicit_encoding_is_the_one_a_response_was_built_with() -> None:
    seen = probe()
    assert seen["explicit"] == "cp1252" and seen["implicit"] is None


def test_the_http_handler_gets_a_pool_bounded_by_the_open_file_budget() -> None:
    from scrapy.utils.test import get_crawler
    from scrapy_maintext.open_files import crawl_budget
    from scrapy_maintext.scrapy_internals import BoundedConnectionPool, BoundedHTTP11DownloadHandler

    crawler = get_crawler(
        settings_dict={"KEEPALIVE_MAX_IDLE": 7, "CONCURRENT_REQUESTS_PER_DOMAIN": 2}
    )
    handler = BoundedHTTP11DownloadHandler(crawler)
    pool = handler._pool
    assert isinstance(pool, BoundedConnectionPool)
    assert pool.max_idle == crawl_budget(crawler.settings).idle == 7
    # What Scrapy set on its own pool is kept.
    assert pool.maxPersistentPerHost == 2
    assert pool._factory.__name__ == "_LenientHTTP11ClientFactory"


def test_sites_started_in_turn_keep_two_idle_connections_each() -> None:
    """With DISCOVERY_SITES_AT_ONCE, the idle connections kept follow the sites under way
    (two each), within KEEPALIVE_MAX_IDLE; without it, KEEPALIVE_MAX_IDLE alone."""
    from scrapy.utils.test import get_crawler
    from scrapy_maintext.scrapy_internals import BoundedHTTP11DownloadHandler

    def max_idle(**settings: int) -> int:
        handler = BoundedHTTP11DownloadHandler(get_crawler(settings_dict=settings))
        return int(handler._pool.max_idle)

    assert max_idle(KEEPALIVE_MAX_IDLE=100, DISCOVERY_SITES_AT_ONCE=3) == 6
    assert max_idle(KEEPALIVE_MAX_IDLE=4, DISCOVERY_SITES_AT_ONCE=3) == 4
    assert max_idle(KEEPALIVE_MAX_IDLE=100, DISCOVERY_SITES_AT_ONCE=-1) == 100
    # By default, 4 sites per request in flight.
    assert max_idle(KEEPALIVE_MAX_IDLE=1000, CONCURRENT_REQUESTS=5) == 40


def test_a_shared_queue_keeps_the_connections_the_budget_allows() -> None:
    """With REDIS_URL the shared queue serves every planned site's pages in turn, not a
    window's: KEEPALIVE_MAX_IDLE alone bounds the idle connections."""
    from scrapy.utils.test import get_crawler
    from scrapy_maintext.scrapy_internals import BoundedHTTP11DownloadHandler

    settings = {"KEEPALIVE_MAX_IDLE": 1000, "CONCURRENT_REQUESTS": 5, "REDIS_URL": "redis://x"}
    handler = BoundedHTTP11DownloadHandler(get_crawler(settings_dict=settings))
    assert handler._pool.max_idle == 1000


def test_the_slot_ring_queue_takes_idle_sites_in_turn_and_keeps_priorities() -> None:
    """The spiders' scheduler queue: each site's requests by priority, the sites in turn,
    a site with a download active passed over while another has none; its length counted."""
    from scrapy import Request
    from scrapy.squeues import FifoMemoryQueue
    from scrapy.utils.test import get_crawler
    from scrapy_maintext.scrapy_internals import SlotRingPriorityQueue
    from scrapy_maintext.spiders.sitemap import SitemapSpider

    crawler = get_crawler(SitemapSpider)
    assert crawler.settings["SCHEDULER_PRIORITY_QUEUE"].endswith("SlotRingPriorityQueue")
    crawler.spider = crawler._create_spider(domain="example.org")
    crawler.engine = crawler._create_engine()
    queue = SlotRingPriorityQueue.from_crawler(crawler, FifoMemoryQueue, "")
    for site in "abc":
        for i in range(2):
            queue.push(Request(f"http://{site}.example/{i}", priority=i))
    assert len(queue) == 6
    taken = [queue.pop() for _ in range(3)]
    assert [r.url for r in taken if r] == [f"http://{s}.example/1" for s in "abc"]
    # Site a now has a download active: b and c go first, then a.
    downloader = crawler.engine.downloader
    _, slot = downloader._get_slot(taken[0])
    slot.active.add(taken[0])
    rest = [queue.pop() for _ in range(3)]
    assert [r.url for r in rest if r] == [
        "http://b.example/0",
        "http://c.example/0",
        "http://a.example/0",
    ]
    assert len(queue) == 0 and queue.pop() is None and queue.peek() is None


@needs_browser
def test_scrapy_playwright_hooks_start_late_wrap_wait_and_hear_the_browser_go() -> None:
    pytest.importorskip("scrapy_playwright", reason="the render extra is not installed")
    script = Path(__file__).with_name("playwright_probe.py")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert "error" not in seen, seen
    # Nothing starts with the engine; start() starts the driver, the first page the browser.
    assert seen["started_by_engine"] is False and seen["driver_started"] is True
    assert seen["browser_before_page"] is False and seen["browser_after_page"] is True
    # The download goes through render(); the page's own wait replaces the page methods and
    # sees the page; a killed browser is heard, and forgotten on demand.
    assert seen["calls"] == ["render", "page_ready:Written by the server.", "browser_lost"]
    assert seen["text"] is True and seen["forgotten"] is True
    # A page that crashed is not opened again.
    assert seen["retries"] == 0
