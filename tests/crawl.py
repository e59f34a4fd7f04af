"""Running the project's spiders as ``scrapy crawl`` does and reading the results.

A crawl runs the project's crawl command in the test process (``tests/inprocess.py``) unless
``fresh_process=True``: then ``scrapy crawl`` runs in a process of its own, as a user runs it.
Tests whose subject is the process (its whole stderr, a signal, the timing of requests that a
busy test process could skew) ask for one. ``MAINTEXT_TEST_CRAWLS=process`` runs every crawl in
a fresh process.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import inprocess

ROOT = Path(__file__).resolve().parent.parent
#: ``MAINTEXT_TEST_CRAWLS=process``: every crawl of :func:`run_crawl` in a fresh process.
ALL_IN_PROCESSES = os.environ.get("MAINTEXT_TEST_CRAWLS", "") == "process"

#: Discovery-only crawls: short delays (robots.txt Crawl-delay still applies), no extraction,
#: and a download timeout below the fixture site's slow page.
DISCOVERY_ONLY = {"DOWNLOAD_DELAY": "0.1", "EXTRACT_ENABLED": "False", "DOWNLOAD_TIMEOUT": "1"}
#: No waits between requests (AutoThrottle's 1 s start included), for crawls whose subject is
#: not politeness: still one request at a time per site, and robots.txt still obeyed.
NO_WAITS = {"DOWNLOAD_DELAY": "0", "AUTOTHROTTLE_ENABLED": "False"}
#: Discovery-only crawls without waits.
QUICK_DISCOVERY = {**DISCOVERY_ONLY, **NO_WAITS}


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
    fresh_process: bool = False,
    open_files: int | None = None,
    pythonpath: tuple[Path, ...] = (),
) -> CrawlResult:
    """``scrapy crawl SPIDER -a ... -s ... -O items.jsonl [-O extra ...]`` in the repo root.

    ``open_files``: in a fresh process whose open-file limit, soft and hard, is this (as
    ``ulimit -n`` sets it). ``pythonpath``: folders put before the repository on the fresh
    process's ``PYTHONPATH`` (a ``sitecustomize`` there runs first)."""
    out = out_dir / "items.jsonl"
    stats_file = out_dir / "stats.json"
    argv = ["crawl", spider, "-O", str(out)]
    for extra in extra_outputs:
        argv += ["-O", extra]
    for key, value in args.items():
        argv += ["-a", f"{key}={value}"]
    merged = {
        "EXTENSIONS": json.dumps({"tests.stats_dump.StatsDump": 0}),
        "TEST_STATS_FILE": str(stats_file),
        "LOG_LEVEL": "INFO",
        **(settings or {}),
    }
    for key, value in merged.items():
        argv += ["-s", f"{key}={value}"]
    if fresh_process or ALL_IN_PROCESSES or open_files is not None or pythonpath:
        cmd = [sys.executable, "-m", "scrapy", *argv]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (*pythonpath, ROOT)))}
        proc = subprocess.run(
            cmd,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            preexec_fn=None if open_files is None else functools.partial(limit_files, open_files),
        )
        log, returncode = proc.stderr, proc.returncode
    else:
        out_dir.mkdir(parents=True, exist_ok=True)  # for the log; Scrapy makes it for -O
        log_file = out_dir / "crawl.log"
        returncode = inprocess.run_command(argv, log_file, timeout)
        log = log_file.read_text(encoding="utf-8", errors="replace") if log_file.exists() else ""
    items = []
    if out.exists():
        # JSON Lines end lines with "\n" only; splitlines() would also split inside a string
        # at U+2028 and the like, which UTF-8 exports leave unescaped.
        lines = out.read_text(encoding="utf-8").split("\n")
        items = [json.loads(line) for line in lines if line.strip()]
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    return CrawlResult(items, stats, log, returncode)


def limit_files(count: int) -> None:
    """Set this process's open-file limit, soft and hard (``ulimit -n count``)."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


def kill_when(cmd: list[str], ready: Callable[[], bool], log: Path, timeout: float = 120) -> None:
    """Run ``cmd`` (``scrapy crawl ...``) in a fresh process and SIGKILL it, and the
    extraction workers of its process group, once ``ready()`` is true."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True
        )
        try:
            deadline = time.monotonic() + timeout
            while not ready():
                assert proc.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, "the crawl did not get going"
                time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        finally:
            # Extraction workers of the killed crawl (they would exit on their own).
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
