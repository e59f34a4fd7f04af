"""The whole browser's memory cap (RENDER_BROWSER_MEMORY_MB): measured over the processes under
Playwright's driver (``render.footprint``), and a browser over it started again between
renders, with no page lost. Real processes and the real Chromium."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from scrapy_maintext.render.footprint import DRIVER_MARK, browser_memory_mb

from tests.crawl import NO_WAITS, run_crawl
from tests.js_site import PAGES, RENDERED, needs_browser, serve_js_site

#: A child that holds this many MB and a grandchild that holds as much: a driver's tree.
HELD_MB = 40
_HOLD = (
    f"x = bytearray({HELD_MB} * 2**20); x[::4096] = b'y' * len(x[::4096]); "
    "import time; time.sleep(60)"
)


def _tree(mark: str) -> subprocess.Popen[bytes]:
    """A process named like a driver (``mark`` on its command line) with a child, each
    holding HELD_MB of touched memory."""
    code = (
        "import subprocess, sys, time; "
        f"subprocess.Popen([sys.executable, '-c', {_HOLD!r}]); "
        f"{_HOLD}"
    )
    return subprocess.Popen([sys.executable, "-c", code, mark])


def _settled(expected_at_least: float) -> float:
    held = 0.0
    for _ in range(100):
        held = browser_memory_mb() or 0.0
        if held >= expected_at_least:
            break
        time.sleep(0.1)
    return held


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux's /proc only")
def test_memory_under_a_driver_counts_its_whole_tree_and_nothing_else() -> None:
    before = browser_memory_mb() or 0.0
    other = _tree("not-a-driver")
    try:
        time.sleep(1.0)
        assert (browser_memory_mb() or 0.0) - before < HELD_MB / 2
        driver = _tree(DRIVER_MARK.decode())
        try:
            held = _settled(before + 0.9 * HELD_MB)
            # The driver's child (the browser) counts; the driver itself is not the browser.
            assert held - before >= 0.9 * HELD_MB, held
            assert held - before < 1.5 * HELD_MB, held
        finally:
            driver.kill()
            driver.wait()
    finally:
        other.kill()
        other.wait()


@pytest.mark.slow
@needs_browser
def test_a_browser_over_its_memory_cap_is_started_again_and_no_page_is_lost(
    tmp_path: Path,
) -> None:
    # 1 MB: every browser is over it after its first render, so each render gets a new one.
    settings = {**NO_WAITS, "RENDER_THIN_WAIT": "0", "RENDER_BROWSER_MEMORY_MB": "1"}
    with serve_js_site() as js_site:
        base = js_site.base_url
        result = run_crawl("sitemap", tmp_path, {"domain": base}, settings)
    assert result.returncode == 0, result.log[-3000:]
    items = {item["url"].removeprefix(base): item for item in result.items}
    assert set(items) == set(PAGES), sorted(items)
    for path in RENDERED:
        assert items[path]["text_source"] == "rendered", path
        assert PAGES[path].paragraphs[-1] in items[path]["text"], path
    stats = result.stats
    assert stats["render/pages"] == len(RENDERED)
    assert stats["render/browser_over_memory"] >= len(RENDERED) - 1
    assert stats["render/browser_restarts"] >= stats["render/browser_over_memory"]
    assert stats["playwright/browser_count"] >= len(RENDERED)
    assert stats["render/browser_peak_mb"] > 1
    assert "RENDER_BROWSER_MEMORY_MB=1" in result.log
