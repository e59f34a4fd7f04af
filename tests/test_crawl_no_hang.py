"""A crawl never hangs: a broad crawl under a low open-file limit finishes with nothing
dropped, idle connections are bounded, a limit too low for the crawl is one line before it
starts, and one SIGTERM stops a crawl within seconds while its workers are busy with pages
that take seconds each, or while it waits on a server that never answers."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.crawl import QUICK_DISCOVERY, ROOT, run_crawl
from tests.many_sites import ManySites
from tests.slow_page import slow_page

CONTACT = "mailto:corpus@example.org"
#: The broad crawl: sites, and the open-file limit of its process. Twisted would keep one
#: idle connection per site (more than the limit holds) for four minutes.
SITES = 150
OPEN_FILES = 150


@pytest.mark.slow  # 150 sites at Crawl-delay 0.5 (about 15 s)
def test_a_broad_crawl_under_a_low_open_file_limit_drops_nothing(tmp_path: Path) -> None:
    with ManySites(SITES) as sites:
        domains = sites.write_domains(tmp_path / "sites.txt")
        result = run_crawl(
            "sitemap",
            tmp_path,
            {"domains_file": str(domains)},
            {"CRAWLER_CONTACT": CONTACT},
            timeout=180,
            open_files=OPEN_FILES,
        )
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == sites.expected
    stats = result.stats
    assert not [key for key in stats if key.startswith("extract/dropped/")]
    assert stats.get("extract/pool_replaced", 0) == 0
    assert "log_count/ERROR" not in stats
    assert 0 < stats["files/open_max"] < OPEN_FILES
    assert f"Open files: limit {OPEN_FILES}," in result.log


def test_idle_connections_are_bounded_across_sites(tmp_path: Path) -> None:
    # Twisted alone would keep each site's connection open for minutes: 20 at the end.
    settings = {**QUICK_DISCOVERY, "CONCURRENT_REQUESTS": "2", "KEEPALIVE_MAX_IDLE": "3"}
    with ManySites(20, pages=1, crawl_delay=0) as sites:
        domains = sites.write_domains(tmp_path / "sites.txt")
        result = run_crawl("sitemap", tmp_path, {"domains_file": str(domains)}, settings)
        most = sites.most_connections
    assert result.returncode == 0, result.log[-3000:]
    assert len(result.items) == sites.expected
    # 3 idle, 2 in flight, and two the server has not seen closed yet (unbounded: 20).
    assert most <= 3 + 2 + 2


def test_the_soft_open_file_limit_is_raised_to_the_hard_one() -> None:
    code = "from scrapy_maintext.open_files import raise_soft_limit; print(raise_soft_limit())"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (100, 200)),
    )
    assert done.stdout.strip() == "(200, 200)"


def test_an_open_file_limit_too_low_for_the_crawl_is_one_line(tmp_path: Path) -> None:
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": "http://127.0.0.1:9/"},
        {"CONCURRENT_REQUESTS": "64"},
        timeout=60,
        open_files=120,
    )
    assert result.returncode == 2
    lines = [line for line in result.log.splitlines() if line.strip()]
    assert lines[-1].startswith("scrapy crawl: error: the open-file limit is 120 (ulimit -n)")
    assert "CONCURRENT_REQUESTS=64" in lines[-1] and "Traceback" not in result.log


class SlowPages(ManySites):
    """One site whose pages each take the extraction seconds."""

    def answer(self, index: int, path: str) -> tuple[int, bytes, str]:
        if path.startswith("/story-"):
            return 200, self.page, "text/html; charset=utf-8"
        return super().answer(index, path)

    @property
    def page(self) -> bytes:
        return slow_page().encode()


#: Pages of about 3 s of extraction each, for one worker: 20 s of work and more.
SLOW_PAGES = 8


@pytest.mark.slow  # a crawl process, its worker busy for seconds
def test_one_sigterm_stops_a_crawl_whose_workers_are_busy(tmp_path: Path) -> None:
    with SlowPages(1, pages=SLOW_PAGES, crawl_delay=0) as site:
        settings = {
            "CRAWLER_CONTACT": CONTACT,
            "EXTRACT_WORKERS": "1",
            "EXTRACT_TIMEOUT": "120",
            "DOWNLOAD_DELAY": "0",
            "AUTOTHROTTLE_ENABLED": "False",
            "JOBDIR": str(tmp_path / "job"),
        }
        argv = [sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a"]
        argv += [f"domain={site.bases[0]}", "-O", str(tmp_path / "items.jsonl")]
        for key, value in settings.items():
            argv += ["-s", f"{key}={value}"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        log = tmp_path / "crawl.log"
        with log.open("w") as stderr:
            proc = subprocess.Popen(argv, cwd=ROOT, env=env, stderr=stderr, start_new_session=True)
            try:
                deadline = time.monotonic() + 120
                # robots.txt, the sitemap and every page: all of them wait for the worker.
                while site.requests < 2 + SLOW_PAGES:
                    assert proc.poll() is None, log.read_text()[-3000:]
                    assert time.monotonic() < deadline, "the crawl did not fetch its pages"
                    time.sleep(0.05)
                time.sleep(1)  # the worker is on the first page
                signalled = time.monotonic()
                proc.send_signal(signal.SIGTERM)
                proc.wait(60)
                took = time.monotonic() - signalled
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
    text = log.read_text()
    assert took < 10, text[-3000:]
    output = tmp_path / "items.jsonl"
    exported = output.read_text().count("\n") if output.exists() else 0
    left = SLOW_PAGES - exported
    # The page the worker is on may still finish in the 2 s it is given, after the line.
    said = re.search(r"Stopping: (\d+) pages not extracted are left", text)
    assert exported < 2 and said is not None and int(said.group(1)) in (left, left + 1), text
    # Not done: a resumed crawl (the same command) fetches and extracts them.
    assert f"Stopped early: {left} planned pages not done yet are kept in JOBDIR" in text
    journal = tmp_path / "job" / "pages-done.tsv"
    done = journal.read_text().count("/story-") if journal.exists() else 0
    assert done == exported
    assert "Traceback" not in text


@pytest.mark.slow  # a crawl process
def test_one_sigterm_stops_a_crawl_waiting_on_a_server_that_never_answers() -> None:
    held: list[socket.socket] = []
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]

        def accept() -> None:
            with contextlib.suppress(OSError):
                while True:
                    held.append(silent.accept()[0])

        threading.Thread(target=accept, daemon=True).start()
        argv = [sys.executable, "-m", "scrapy", "crawl", "sitemap"]
        argv += ["-a", f"domain=http://127.0.0.1:{port}", "-s", f"CRAWLER_CONTACT={CONTACT}"]
        argv += ["-s", "DOWNLOAD_TIMEOUT=120", "-s", "SHUTDOWN_TIMEOUT=2"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 120
            while not held:  # robots.txt requested, never to be answered
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            signalled = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            _, log = proc.communicate(timeout=60)
            took = time.monotonic() - signalled
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            for connection in held:
                connection.close()
    assert took < 2 + 4, log[-3000:]
    assert "Still stopping 2 s after the signal (SHUTDOWN_TIMEOUT)" in log
