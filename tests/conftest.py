"""Shared fixtures: local fixture sites served on 127.0.0.1 for the whole session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.utils.reactor import install_reactor

from tests.inprocess import ASYNCIO_REACTOR
from tests.sites import SiteOptions, TestSiteServer, make_hostile


def pytest_configure(config: pytest.Config) -> None:
    # The start-up cache (fields.startup_cache) in a folder of the run's own, not the
    # user's ~/.cache; crawl processes the tests start inherit it. A test of the cache itself
    # points it elsewhere.
    if "MAINTEXT_CACHE_DIR" not in os.environ:
        _made_cache.append(tempfile.mkdtemp(prefix="maintext-test-cache-"))
        os.environ["MAINTEXT_CACHE_DIR"] = _made_cache[0]
    # The reactor every crawl runs on, installed before any test imports Twisted's default
    # one (scrapy.utils.test.get_crawler would): crawls in the test process
    # (tests/inprocess.py) run on it, and unit tests see what a crawl process has.
    install_reactor(ASYNCIO_REACTOR)


#: The start-up cache folder this process made (removed at the end of the run).
_made_cache: list[str] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _made_cache:
        shutil.rmtree(folder, ignore_errors=True)


#: Crawl-delay of the polite fixture site (seconds): above the tests' DOWNLOAD_DELAY, so the
#: gaps the server sees prove that robots.txt set them.
CRAWL_DELAY = 0.4


def _serve(
    options: SiteOptions, host: str = "127.0.0.1", hostile: bool = False
) -> Iterator[TestSiteServer]:
    with TestSiteServer(options, host=host) as server:
        if hostile:
            make_hostile(server)
        yield server


@pytest.fixture(scope="session")
def _hostile_server() -> Iterator[TestSiteServer]:
    yield from _serve(SiteOptions(crawl_delay=None), hostile=True)


@pytest.fixture
def hostile_site(_hostile_server: TestSiteServer) -> TestSiteServer:
    """Sitemaps, feeds, articles and every hostile corner, no Crawl-delay; the request log
    starts empty."""
    _hostile_server.reset()
    return _hostile_server


@pytest.fixture(scope="session")
def _polite_server() -> Iterator[TestSiteServer]:
    yield from _serve(SiteOptions(crawl_delay=CRAWL_DELAY), hostile=True)


@pytest.fixture
def polite_site(_polite_server: TestSiteServer) -> TestSiteServer:
    """The hostile site with a robots.txt Crawl-delay of :data:`CRAWL_DELAY`, for the tests
    that measure the gaps between requests; the request log starts empty."""
    _polite_server.reset()
    return _polite_server


@pytest.fixture(scope="session")
def _bare_server() -> Iterator[TestSiteServer]:
    # Another loopback host than the hostile site: its own download slot in multi-site crawls.
    yield from _serve(SiteOptions(sitemaps=False, feeds=False, crawl_delay=None), "127.0.0.2")


@pytest.fixture
def bare_site(_bare_server: TestSiteServer) -> TestSiteServer:
    """A site with neither sitemap nor feed, and no Crawl-delay."""
    _bare_server.reset()
    return _bare_server


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from the working tree (offline: no build isolation)."""
    out = tmp_path_factory.mktemp("wheel")
    root = Path(__file__).resolve().parent.parent
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*cmd, str(root), "-w", str(out)], check=True, timeout=300, capture_output=True)
    return next(out.glob("*.whl"))
