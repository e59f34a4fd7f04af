"""A ``CRAWL_REPORT`` that cannot be written: one line and exit 2 before the crawl starts, or,
when its write fails at the end, an ERROR line, exit 1 and no partial file left."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from scrapy_maintext.cli import main as maintext

from tests.crawl import QUICK_DISCOVERY, ROOT
from tests.sites import SiteOptions, TestSiteServer

DEAD_SITE = "http://127.0.0.1:9"


def _bad_paths(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Report paths that cannot be written, with the line that says why."""
    folder = tmp_path / "folder"
    folder.mkdir()
    file = tmp_path / "file"
    file.write_text("")
    return {
        "folder": (folder, f"CRAWL_REPORT {folder}: is a directory"),
        "under-a-file": (file / "report.json", f"CRAWL_REPORT {file}/report.json: {file} is not"),
    }


@pytest.mark.parametrize("which", ["folder", "under-a-file"])
def test_maintext_crawl_checks_the_report_path_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str
) -> None:
    path, line = _bad_paths(tmp_path)[which]
    out = tmp_path / "x.jsonl"
    args = ["crawl", "sitemap", "-a", f"domain={DEAD_SITE}", "-O", str(out)]
    assert maintext([*args, "-s", f"CRAWL_REPORT={path}"]) == 2
    (error,) = capsys.readouterr().err.splitlines()
    assert error.startswith(f"maintext crawl: error: {line}")
    assert not out.exists()
    assert not list(tmp_path.rglob(".*.partial"))


def test_scrapy_crawl_checks_the_report_path_before_it_starts(tmp_path: Path) -> None:
    path, line = _bad_paths(tmp_path)["folder"]
    out = tmp_path / "x.jsonl"
    command = [sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"domain={DEAD_SITE}"]
    command += ["-O", str(out), "-s", f"CRAWL_REPORT={path}"]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    # Scrapy's usage error: its "Usage" banner, then the one line.
    assert f"error: {line}\n" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_a_project_with_the_addon_stops_before_its_crawl(tmp_path: Path) -> None:
    """Scrapy's own crawl command: the add-on's report refuses to start (exit 1, Scrapy's
    traceback around the line), before any request."""
    project = tmp_path / "project"
    (project / "proj").mkdir(parents=True)
    (project / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (project / "proj" / "__init__.py").write_text("")
    (project / "proj" / "settings.py").write_text(
        'SPIDER_MODULES = ["proj.spiders"]\nADDONS = {"scrapy_maintext.Addon": 500}\n'
        'CRAWLER_CONTACT = "tests@example.com"\n'
    )
    (project / "proj" / "spiders.py").write_text(
        "import scrapy\n\n\nclass One(scrapy.Spider):\n"
        f'    name = "one"\n    start_urls = ["{DEAD_SITE}/"]\n'
    )
    path, line = _bad_paths(tmp_path)["folder"]
    command = [sys.executable, "-m", "scrapy", "crawl", "one", "-s", f"CRAWL_REPORT={path}"]
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    proc = subprocess.run(
        command, cwd=project, capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode != 0
    assert line in proc.stderr
    assert "Spider opened" not in proc.stderr and "downloader/request_count" not in proc.stderr


def _limit_file_size(limit: int) -> Callable[[], None]:
    """A child whose writes to a file stop at ``limit`` bytes (EFBIG, not SIGXFSZ): a full
    disk for the report, which is the only file the crawl writes."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_report_that_cannot_be_written_at_the_end_exits_1_and_leaves_no_partial(
    tmp_path: Path,
) -> None:
    report = tmp_path / "reports" / "report.json"
    with TestSiteServer(SiteOptions(articles=1, crawl_delay=None, feeds=False)) as server:
        command = [sys.executable, "-m", "scrapy_maintext", "crawl", "sitemap"]
        command += ["-a", f"domain={server.base_url}", "-O", "-:jsonl"]
        for key, value in {**QUICK_DISCOVERY, "CRAWL_REPORT": str(report)}.items():
            command += ["-s", f"{key}={value}"]
        proc = subprocess.run(
            command,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=_limit_file_size(200),
        )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert f"Crawl report not written to {report}: [Errno 27] File too large" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(report.parent.iterdir()) == []  # the folder checked at the start, no .partial


def test_maintext_extract_checks_its_report_path_before_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "report.json"
    path.mkdir()
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>text</p></body></html>")
    out = tmp_path / "out.jsonl"
    args = ["extract", str(page), "-o", str(out), "--workers", "0", "--report", str(path)]
    assert maintext(args) == 2
    err = capsys.readouterr().err
    assert err == f"maintext extract: error: --report {path}: is a directory\n"
    assert not out.exists()
