"""The private Scrapy hooks the politeness components (and the site memory's drain check)
build on still exist as used.

Checked with Scrapy 2.15 to 2.19: ``_parse_robots`` gained its ``request`` argument in
2.18 and slots their ``jitter`` in 2.19, hence ``scrapy>=2.19``.

``pyproject.toml`` bounds Scrapy to the versions this was checked with; ``.ci/newest-scrapy``
runs this file (and the politeness crawls) against the newest Scrapy release, so a release
that moves one of these hooks is caught before the bound is raised.
"""

from __future__ import annotations

import collections
import inspect
from importlib.metadata import version

import scrapy
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from scrapy.core.downloader import Downloader, Slot
from scrapy.core.engine import ExecutionEngine
from scrapy.core.engine import _Slot as EngineSlot
from scrapy.core.scraper import Scraper
from scrapy.core.scraper import Slot as ScraperSlot
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.extensions.throttle import AutoThrottle
from scrapy.utils.test import get_crawler
from scrapy_maintext.politeness.robots import RobotsPolitenessMiddleware


def _params(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_installed_scrapy_is_in_the_declared_range() -> None:
    requirement = next(r for r in (version_requirements()) if r.lower().startswith("scrapy"))
    specifier = SpecifierSet(requirement[len("scrapy") :].split(";")[0])
    assert Version(scrapy.__version__) in specifier, (scrapy.__version__, requirement)


def version_requirements() -> list[str]:
    from importlib.metadata import requires

    assert version("scrapy-maintext")
    return [r for r in requires("scrapy-maintext") or [] if "extra ==" not in r]


def test_robots_middleware_hooks() -> None:
    # RobotsPolitenessMiddleware overrides these two and swaps entries of _parsers.
    assert _params(RobotsTxtMiddleware._parse_robots) == ["self", "response", "netloc", "request"]
    assert inspect.iscoroutinefunction(RobotsTxtMiddleware._parse_robots)
    assert _params(RobotsTxtMiddleware._robots_error) == ["self", "exc", "netloc"]
    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    middleware = RobotsPolitenessMiddleware(crawler)
    assert isinstance(middleware._parsers, dict)


def test_autothrottle_hooks() -> None:
    # PoliteAutoThrottle wraps this handler and reads the slot through _get_slot.
    assert _params(AutoThrottle._response_downloaded) == ["self", "response", "request", "spider"]
    assert _params(AutoThrottle._get_slot) == ["self", "request", "spider"]


def test_downloader_slot_fields() -> None:
    # Crawl-delay and Retry-After adjust these on live slots; QuickStop empties ``queue``
    # (a deque of (request, deferred) pairs) when the crawl stops.
    slot = Slot(concurrency=1, delay=1.0, jitter=0.0)
    for name in ("delay", "lastseen", "jitter"):
        assert hasattr(slot, name), name
    assert isinstance(slot.queue, collections.deque)
    assert "slot.queue.popleft()" in inspect.getsource(Downloader._process_queue)
    assert "per_slot_settings" in inspect.getsource(Downloader.__init__)
    assert _params(Downloader.get_slot_key) == ["self", "request"]


def test_scraper_slot_fields_read_by_the_site_memory_drain() -> None:
    # SiteMemoryStage._nothing_else_can_come reads these to tell that only held items are
    # left; a held item's response must stay ``active`` until its item is processed.
    slot = ScraperSlot()
    assert isinstance(slot.active, set) and isinstance(slot.queue, collections.deque)
    assert slot.itemproc_size == 0
    source = inspect.getsource(Scraper.enqueue_scrape)
    assert source.index("yield dfd") < source.index("finally:")
    assert source.index("finally:") < source.index("self.slot.finish_response(")
    assert "_start" in inspect.getsource(ExecutionEngine.__init__)
    # The engine's in-progress set holds a request until its response's scrape is done.
    assert "self.inprogress: set[Request] = set()" in inspect.getsource(EngineSlot.__init__)
    source = inspect.getsource(ExecutionEngine._start_scheduled_request)
    assert source.index("_handle_downloader_output") < source.index("_remove_request")
    assert "yield self.scraper.enqueue_scrape(" in inspect.getsource(
        ExecutionEngine._handle_downloader_output
    )
    assert _params(ExecutionEngine.needs_backout) == ["self"]
