"""A crawl keeps its start-up heap out of the garbage collector's passes, extraction on or
off (``EXTRACT_GC_FREEZE``; issue 47: a discovery crawl's full passes walked Scrapy's and
Twisted's objects again and again)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from tests.broad_sites import broad_sites
from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.heap_probe import FROZEN_MIN_STAT


@pytest.mark.parametrize("freeze", [True, False])
def test_a_crawl_without_extraction_freezes_its_start_up_heap(tmp_path: Path, freeze: bool) -> None:
    """Two sites of three pages, extraction off: every page exported, the heap frozen at
    each of them (or never, with EXTRACT_GC_FREEZE off), and thawed once the crawl ended."""
    with broad_sites(2, 3) as urls:
        (tmp_path / "sites.txt").write_text("\n".join(urls) + "\n")
        extensions = {"tests.stats_dump.StatsDump": 0, "tests.heap_probe.HeapProbe": -1}
        result = run_crawl(
            "sitemap",
            tmp_path,
            {"domains_file": str(tmp_path / "sites.txt")},
            {
                **QUICK_DISCOVERY,
                "EXTENSIONS": json.dumps(extensions),
                "EXTRACT_GC_FREEZE": str(freeze),
            },
        )
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == 6
    frozen = result.stats[FROZEN_MIN_STAT]
    assert (frozen > 0) if freeze else (frozen == 0)
    assert gc.get_freeze_count() == 0
