"""Near-duplicates are judged in the order items arrive, not the order workers finish."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.crawl import ROOT

SPIDER = Path(__file__).parent / "fixtures" / "spiders" / "dedup_order.py"


def test_first_of_two_duplicates_is_kept_even_when_it_finishes_last(tmp_path: Path) -> None:
    out = tmp_path / "items.jsonl"
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(SPIDER), "-O", str(out)]
    for setting in ("EXTRACT_ENGINE=trafilatura", "EXTRACT_WORKERS=2", "LOG_LEVEL=INFO"):
        cmd += ["-s", setting]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert [item["order"] for item in items] == [1]
    assert "Near-duplicate" in proc.stderr
