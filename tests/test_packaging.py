"""The installed wheel is one import package that coexists with any user project.

A fresh virtual environment gets the built wheel (dependencies come from the test
environment through a path entry, not from the checkout); a user's flat project named
``crawler``, with its own ``middlewares.py`` and ``spiders/`` package, runs with the add-on.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
import sysconfig
import threading
import venv
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

#: Builds the wheel and a virtual environment, and crawls in a fresh process.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "tests" / "fixtures" / "extraction" / "site"
PROJECT = ROOT / "tests" / "fixtures" / "user_project_crawler"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(SITE)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def fresh_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with only the wheel installed; dependencies visible through a .pth line."""
    env_dir = tmp_path_factory.mktemp("fresh-env")
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Only the dependencies' directory: a path line does not run the editable install's
    # import hook, so scrapy_maintext can only come from the wheel.
    Path(purelib, "test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q"]
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True, timeout=300)
    return python


def _run(python: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), *args], cwd=cwd, capture_output=True, text=True, timeout=180
    )


def test_package_comes_from_the_wheel(fresh_python: Path, tmp_path: Path) -> None:
    code = "import scrapy_maintext, importlib.util as u; print(scrapy_maintext.__file__)"
    proc = _run(fresh_python, tmp_path, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert "site-packages/scrapy_maintext/__init__.py" in proc.stdout
    for generic in ("crawler", "spiders", "middlewares", "models"):
        probe = _run(fresh_python, tmp_path, "-c", f"import {generic}")
        assert probe.returncode != 0, f"the wheel installed a top-level {generic!r}"


def test_user_project_named_crawler_runs_with_the_addon(
    fresh_python: Path, site_url: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    listed = _run(fresh_python, project, "-m", "scrapy", "list")
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert listed.stdout.split() == ["pages"]  # the user's spiders, not the plugin's
    out = tmp_path / "items.jsonl"
    proc = _run(
        fresh_python,
        project,
        "-m",
        "scrapy",
        "crawl",
        "pages",
        "-a",
        f"url={site_url}article.html",
        "-O",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Overridden settings" in proc.stderr and "'BOT_NAME': 'crawler'" in proc.stderr
    (item,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert item["marked_by"] == "user-middleware"  # the user's middlewares.py ran
    assert item["title"] == "Tidal power plans approved for the estuary"  # the add-on ran
    assert item["extractor"] in ("neural", "trafilatura") and "tidal lagoon" in item["text"]
    assert "html" not in item


def test_console_script_runs_outside_any_checkout(fresh_python: Path, tmp_path: Path) -> None:
    maintext = fresh_python.parent / "maintext"
    proc = subprocess.run([str(maintext), "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "crawl" in proc.stdout and "extract" in proc.stdout
