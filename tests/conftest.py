"""Shared fixtures: local fixture sites served on 127.0.0.1 for the whole session."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions

#: Crawl-delay of the fixture sites (seconds): above the tests' DOWNLOAD_DELAY, so the gaps
#: the server sees prove that robots.txt set them.
CRAWL_DELAY = 0.4


def _serve(options: SiteOptions, host: str = "127.0.0.1") -> Iterator[SiteServer]:
    with SiteServer(options, host=host) as server:
        yield server


@pytest.fixture(scope="session")
def _hostile_server() -> Iterator[SiteServer]:
    yield from _serve(SiteOptions(hostile=True, crawl_delay=CRAWL_DELAY))


@pytest.fixture
def hostile_site(_hostile_server: SiteServer) -> SiteServer:
    """Sitemaps, feeds, articles and every hostile corner; the request log starts empty."""
    _hostile_server.reset()
    return _hostile_server


@pytest.fixture(scope="session")
def _bare_server() -> Iterator[SiteServer]:
    # Another loopback host than the hostile site: its own download slot in multi-site crawls.
    yield from _serve(SiteOptions(sitemaps=False, feeds=False, crawl_delay=None), "127.0.0.2")


@pytest.fixture
def bare_site(_bare_server: SiteServer) -> SiteServer:
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
