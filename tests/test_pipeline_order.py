"""Near-duplicates are judged in the order items arrive, not the order workers finish."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import inprocess
from tests.crawl import ALL_IN_PROCESSES, ROOT

#: Extracting the first page takes seconds (that is the point of the spider).
pytestmark = pytest.mark.slow

SPIDER = Path(__file__).parent / "fixtures" / "spiders" / "dedup_order.py"


def test_first_of_two_duplicates_is_kept_even_when_it_finishes_last(tmp_path: Path) -> None:
    out = tmp_path / "items.jsonl"
    command = ["runspider", str(SPIDER), "-O", str(out)]
    for setting in ("EXTRACT_ENGINE=trafilatura", "EXTRACT_WORKERS=2", "LOG_LEVEL=INFO"):
        command += ["-s", setting]
    if ALL_IN_PROCESSES:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", *command],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        returncode, log = proc.returncode, proc.stderr
    else:  # scrapy runspider in the test process (tests/inprocess.py)
        log_file = tmp_path / "crawl.log"
        returncode = inprocess.run_command(command, log_file, timeout=120)
        log = log_file.read_text(encoding="utf-8", errors="replace")
    assert returncode == 0, log[-3000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert [item["order"] for item in items] == [1]
    assert "Near-duplicate" in log
