"""Running the project's spiders as a user does (``scrapy crawl``) and reading the results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: Discovery-only crawls: short delays (robots.txt Crawl-delay still applies), no extraction,
#: and a download timeout below the fixture site's slow page.
DISCOVERY_ONLY = {"DOWNLOAD_DELAY": "0.1", "EXTRACT_ENABLED": "False", "DOWNLOAD_TIMEOUT": "1"}


@dataclass
class CrawlResult:
    items: list[dict[str, Any]]
    stats: dict[str, Any]
    log: str
    returncode: int

    def paths(self, base_url: str) -> list[str]:
        return [item["url"].removeprefix(base_url) for item in self.items]


def run_crawl(
    spider: str,
    out_dir: Path,
    args: dict[str, str],
    settings: dict[str, Any] | None = None,
    timeout: float = 240,
    extra_outputs: tuple[str, ...] = (),
) -> CrawlResult:
    """``scrapy crawl SPIDER -a ... -s ... -O items.jsonl [-O extra ...]`` in the repo root."""
    out = out_dir / "items.jsonl"
    stats_file = out_dir / "stats.json"
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, "-O", str(out)]
    for extra in extra_outputs:
        cmd += ["-O", extra]
    for key, value in args.items():
        cmd += ["-a", f"{key}={value}"]
    merged = {
        "EXTENSIONS": json.dumps({"tests.stats_dump.StatsDump": 0}),
        "TEST_STATS_FILE": str(stats_file),
        "LOG_LEVEL": "INFO",
        **(settings or {}),
    }
    for key, value in merged.items():
        cmd += ["-s", f"{key}={value}"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    items = []
    if out.exists():
        # JSON Lines end lines with "\n" only; splitlines() would also split inside a string
        # at U+2028 and the like, which UTF-8 exports leave unescaped.
        lines = out.read_text(encoding="utf-8").split("\n")
        items = [json.loads(line) for line in lines if line.strip()]
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    return CrawlResult(items, stats, proc.stderr, proc.returncode)
