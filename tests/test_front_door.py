"""The short front door: ``maintext crawl`` says little by default and fails in one line.

A crawl prints progress lines, warnings, errors and the end report (at every log level);
``-v`` gives Scrapy's whole log. ``REDIS_URL`` without scrapy-redis is one line naming the
install command. A crawl of a real site without ``CRAWLER_CONTACT`` warns once. A project's
own spider gets a report whose planned, fetched and extracted pages make one funnel.
"""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings
from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions
from scrapy_maintext.distributed.components import INSTALL_EXTRA
from scrapy_maintext.logformatter import PROGRESS, REPORT, ConsoleFilter, console_filter
from scrapy_maintext.politeness.contact import ContactSettings, is_loopback
from scrapy_maintext.report.extension import ReportSettings
from scrapy_maintext.report.files import load_report
from scrapy_maintext.vocabulary.settings import SETTINGS

from tests import inprocess

ROOT = Path(__file__).resolve().parent.parent
#: The demo site with 22 articles: 24 pages to crawl (the articles, two about pages).
DEMO_ARTICLES = 22
DEMO_PAGES = 24
#: What the issue allows a default crawl of the demo site to print, the report included.
MAX_LINES = 40
#: No waits: the subject is what the crawl prints, not its politeness.
NO_WAITS = ("-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False")
REPORT_TITLE = "Crawl report (1 sites, finished: finished)"
CONTACT_WARNING = "CRAWLER_CONTACT is not set"
#: A host that never resolves (RFC 6761): a real site, as far as the crawl can tell.
UNRESOLVABLE = "http://front-door-test.invalid"


def maintext(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The console script as a user runs it, from ``cwd`` (never the checkout)."""
    base = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    return subprocess.run(
        [sys.executable, "-m", "scrapy_maintext", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        env={**base, **(env or {})},
    )


@pytest.fixture(scope="module")
def demo_site() -> Iterator[SiteServer]:
    with SiteServer(SiteOptions(articles=DEMO_ARTICLES, crawl_delay=None)) as server:
        assert server.site is not None and len(server.site.expected_pages) == DEMO_PAGES
        yield server


def _demo_crawl(server: SiteServer, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    out = tmp_path / "items.jsonl"
    args = ("-a", f"domain={server.base_url}", "-O", str(out), *NO_WAITS, *extra)
    proc = maintext("crawl", "sitemap", *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(out.read_text(encoding="utf-8").splitlines()) == DEMO_PAGES
    return proc


@pytest.mark.slow
def test_default_crawl_of_the_demo_site_is_short(demo_site: SiteServer, tmp_path: Path) -> None:
    proc = _demo_crawl(demo_site, tmp_path)
    lines = proc.stdout.splitlines() + proc.stderr.splitlines()
    assert len(lines) <= MAX_LINES, "\n".join(lines)
    assert REPORT_TITLE in proc.stderr
    report = proc.stderr[proc.stderr.index(REPORT_TITLE) :].splitlines()
    assert report[2].split()[:4] == [demo_site.base_url, "25", "24", "24"]  # planned, fetched
    for noise in ("Overridden settings", "Enabled downloader middlewares", "Dumping Scrapy"):
        assert noise not in proc.stderr
    assert "Traceback" not in proc.stderr
    assert CONTACT_WARNING not in proc.stderr  # a loopback crawl: the demo, the tests


@pytest.mark.slow
def test_verbose_shows_scrapys_log(demo_site: SiteServer, tmp_path: Path) -> None:
    proc = _demo_crawl(demo_site, tmp_path, "-v")
    assert "Dumping Scrapy stats" in proc.stderr
    assert "'item_scraped_count': 24" in proc.stderr
    assert "Overridden settings" in proc.stderr and REPORT_TITLE in proc.stderr


@pytest.mark.slow
def test_report_shows_at_warning_level(demo_site: SiteServer, tmp_path: Path) -> None:
    proc = _demo_crawl(demo_site, tmp_path, "-L", "WARNING")
    assert REPORT_TITLE in proc.stderr
    assert "Discovery done" not in proc.stderr  # a progress line: INFO
    assert "Dumping Scrapy stats" not in proc.stderr


def test_console_filter_follows_the_command_line() -> None:
    def shown(verbose: bool = False, **given: Any) -> ConsoleFilter | None:
        settings = Settings({"LOG_LEVEL": "INFO"}, priority="project")
        settings.setdict(given, priority="cmdline")
        return console_filter(settings, verbose)

    default = shown()
    assert default is not None and default.level == logging.WARNING and default.progress
    quiet = shown(LOG_LEVEL="ERROR")
    assert quiet is not None and quiet.level == logging.ERROR and not quiet.progress
    assert shown(verbose=True) is None  # Scrapy's log
    assert shown(LOG_LEVEL="INFO") is None and shown(LOG_LEVEL="DEBUG") is None
    assert shown(LOG_FILE="crawl.log") is None and shown(LOG_ENABLED=False) is None

    def record(level: int, name: str, msg: str, **extra: Any) -> logging.LogRecord:
        made = logging.LogRecord(name, level, __file__, 1, msg, None, None)
        made.__dict__.update(extra)
        return made

    info, warning = logging.INFO, logging.WARNING
    assert not default.filter(record(info, "scrapy.middleware", "Enabled extensions:"))
    assert not default.filter(record(info, "scrapy.statscollectors", "Dumping Scrapy stats"))
    assert not default.filter(record(info, "scrapy_maintext.spiders.base", "Page %s not fetched"))
    assert default.filter(record(warning, "scrapy.core.scraper", "anything"))
    assert default.filter(record(info, "scrapy_maintext.report.extension", "Progress", **PROGRESS))
    # Marked where it is logged, as the spider's line is.
    done = record(info, "scrapy_maintext.spiders.base", "Discovery done: %d", **PROGRESS)
    assert default.filter(done)
    assert quiet.filter(record(info, "scrapy_maintext.report.extension", "%s", **REPORT))
    assert not quiet.filter(record(warning, "x", "a warning"))
    assert not quiet.filter(record(info, "x", "Progress", **PROGRESS))


# REDIS_URL without the distributed extra ------------------------------------------------


@pytest.fixture(scope="module")
def without_scrapy_redis(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """PYTHONPATH for a Python in which ``import scrapy_redis`` fails, as where the
    distributed extra is not installed: a package of that name first on the path."""
    shim = tmp_path_factory.mktemp("no_scrapy_redis")
    (shim / "scrapy_redis").mkdir()
    (shim / "scrapy_redis" / "__init__.py").write_text(
        'raise ImportError("No module named \'scrapy_redis\'", name="scrapy_redis")\n'
    )
    env = {"PYTHONPATH": os.pathsep.join([str(shim), str(ROOT)])}
    check = subprocess.run(
        [sys.executable, "-c", "import scrapy_redis"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    assert check.returncode != 0 and "ImportError" in check.stderr
    return env


@pytest.mark.parametrize("command", ["maintext", "scrapy"])
def test_redis_url_without_the_extra_is_one_line_exit_2(
    without_scrapy_redis: dict[str, str], tmp_path: Path, command: str
) -> None:
    args = ("crawl", "sitemap", "-a", "domain=example.com", "-s", "REDIS_URL=redis://127.0.0.1:9/0")
    if command == "maintext":
        proc = maintext(*args, cwd=tmp_path, env=without_scrapy_redis)
    else:  # the checkout's own `scrapy crawl` (its scrapy.cfg names the project)
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **without_scrapy_redis},
        )
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{command} crawl: error: REDIS_URL needs scrapy-redis")
    assert lines[0].endswith(INSTALL_EXTRA) and "scrapy_redis" in lines[0]


def test_addon_names_the_extra_when_redis_url_cannot_work(
    without_scrapy_redis: dict[str, str],
) -> None:
    """In any project using the add-on, the error ends with the install command."""
    code = (
        "from scrapy.settings import Settings\n"
        "from scrapy_maintext import Addon\n"
        "Addon().update_settings(Settings({'REDIS_URL': 'redis://127.0.0.1:9/0'}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **without_scrapy_redis},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("scrapy_maintext.distributed.components.DistributedUnavailable")
    assert last.endswith(INSTALL_EXTRA)


# CRAWLER_CONTACT ------------------------------------------------------------------------


def test_loopback_hosts_are_this_machine() -> None:
    for url in (
        "http://127.0.0.1:8080/",
        "http://127.0.0.2/",
        "http://localhost/",
        "http://[::1]:80/",
    ):
        assert is_loopback(url), url
    for url in ("https://example.com/", "http://10.0.0.1/", "http://192.168.1.2:8080/"):
        assert not is_loopback(url), url
    assert is_loopback("http://app.localhost/")


def test_contact_missing_only_with_the_addons_user_agent() -> None:
    from scrapy_maintext.politeness.defaults import user_agent

    assert ContactSettings("", user_agent(None)).missing
    assert not ContactSettings("mailto:me@example.org", user_agent("mailto:me@example.org")).missing
    assert not ContactSettings("", "MyBot/1.0 (+https://example.org/bot)").missing


@pytest.mark.slow
def test_real_site_without_contact_warns_once(tmp_path: Path) -> None:
    args = ("crawl", "sitemap", "-a", f"domain={UNRESOLVABLE}", "-s", "RETRY_ENABLED=False")
    proc = maintext(*args, *NO_WAITS, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]  # the host does not resolve
    warnings = [line for line in proc.stderr.splitlines() if CONTACT_WARNING in line]
    assert len(warnings) == 1, proc.stderr
    assert "] WARNING: " in warnings[0]
    assert "-s CRAWLER_CONTACT=mailto:you@example.org" in warnings[0]
    contact = ("-s", "CRAWLER_CONTACT=mailto:corpus@example.org")
    given = maintext(*args, *NO_WAITS, *contact, cwd=tmp_path)
    assert given.returncode == 1
    assert CONTACT_WARNING not in given.stderr


# The report of a project's own spider (the add-on) ------------------------------------------

FOREIGN_PROJECT = ROOT / "tests" / "fixtures" / "foreign_project"
PAGES_SITE = ROOT / "tests" / "fixtures" / "extraction" / "site"


@pytest.fixture(scope="module")
def pages_site() -> Iterator[str]:
    """The fixture site's files on 127.0.0.1: an index linking to four pages."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

    handler = functools.partial(Quiet, directory=str(PAGES_SITE))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_own_spiders_fetched_pages_are_planned(pages_site: str, tmp_path: Path) -> None:
    # The add-on's report as an HTML page (the JSON report inside it).
    report_path = tmp_path / "report.html"
    command = ["crawl", "pages", "-a", f"base={pages_site}", "-O", str(tmp_path / "items.jsonl")]
    for setting in (f"CRAWL_REPORT={report_path}", "EXTRACT_WORKERS=0", "LOG_LEVEL=INFO"):
        command += ["-s", setting]
    log_file = tmp_path / "crawl.log"
    returncode = inprocess.run_command(command, log_file, timeout=120, project=FOREIGN_PROJECT)
    log = log_file.read_text(encoding="utf-8", errors="replace")
    assert returncode == 0, log[-3000:]
    (site,) = load_report(report_path)["sites"]
    assert 'id="plot-funnel"' in report_path.read_text(encoding="utf-8")
    items = (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()
    # The index and the four pages it links to, each page exported or dropped.
    assert site["fetched"] == 5
    assert site["planned"] == site["fetched"]
    extracted = sum(site["extracted"].values())
    assert extracted == len(items) > 0
    assert extracted + sum(site["dropped"].values()) == 4
    row = next(line for line in log.splitlines() if line.startswith(pages_site.rstrip("/")))
    assert row.split()[1:4] == ["5", "5", str(extracted)]


def test_report_settings_come_from_the_registry() -> None:
    defaults = ReportSettings.from_settings(Settings())
    assert defaults.enabled is SETTINGS["CRAWL_REPORT_ENABLED"].default
    assert defaults.interval == SETTINGS["CRAWL_REPORT_INTERVAL"].default
    assert defaults.path == SETTINGS["CRAWL_REPORT"].default and defaults.jobdir == ""
    given = Settings({"CRAWL_REPORT_INTERVAL": "0.5", "CRAWL_REPORT_ENABLED": "False"})
    config = ReportSettings.from_settings(given)
    assert (config.interval, config.enabled) == (0.5, False)
