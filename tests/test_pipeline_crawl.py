"""A real crawl: the add-on in a foreign Scrapy project, pages from a local HTTP server."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from scrapy_maintext.exporters.txt import DOCUMENT_SEPARATOR

from tests import inprocess
from tests.crawl import ALL_IN_PROCESSES
from tests.model_folders import STACKED_MODEL, damaged_model
from tests.schema import tei_errors
from tests.slow_page import slow_page

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "tests" / "fixtures" / "extraction" / "site"
PROJECT = ROOT / "tests" / "fixtures" / "foreign_project"
CONTACT = "mailto:corpus@example.org"
CRAWL_TIMEOUT = 120


@dataclass
class Server:
    base: str
    requests: list[tuple[str, str]] = field(default_factory=list)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    yield from _serve(SITE)


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The site plus a page whose extraction takes seconds, linked from its index."""
    site = shutil.copytree(SITE, tmp_path_factory.mktemp("slow") / "site")
    (site / "slow.html").write_text(slow_page(), encoding="utf-8")
    index = site / "index.html"
    link = '<a href="slow.html">slow</a></body>'
    index.write_text(index.read_text("utf-8").replace("</body>", link), encoding="utf-8")
    yield from _serve(site)


def _serve(directory: Path) -> Iterator[Server]:
    record = Server(base="")

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            record.requests.append((self.path, self.headers.get("User-Agent", "")))
            super().do_GET()

        def log_message(self, format: str, *args: Any) -> None:
            return

    handler = functools.partial(Handler, directory=str(directory))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    record.base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    yield record
    httpd.shutdown()
    httpd.server_close()


def crawl(server: Server, out: Path, *settings: str) -> dict[str, Any]:
    """Run ``scrapy crawl pages`` in the foreign project; return its final stats."""
    return crawl_logged(server, out, *settings).stats


@dataclass
class Crawled:
    stats: dict[str, Any]
    log: str


def crawl_logged(server: Server, out: Path, *settings: str) -> Crawled:
    """:func:`crawl`, with the crawl's log too. ``scrapy crawl`` runs in the test process
    (``tests/inprocess.py``), in the foreign project, unless MAINTEXT_TEST_CRAWLS=process."""
    stats_path = out / "stats.json"
    command = ["crawl", "pages", "-a", f"base={server.base}"]
    command += ["-s", f"STATS_OUTPUT={stats_path}", "-s", f"CRAWLER_CONTACT={CONTACT}"]
    for setting in settings:
        command += ["-s", setting]
    # `-O corpus.xml:tei` is checked against the project's FEED_EXPORTERS before add-ons
    # run, so feeds in add-on formats are given through FEEDS, which is read after them.
    feeds = {
        f"{out}/items.jsonl": {"format": "jsonlines", "overwrite": True},
        f"{out}/corpus.xml": {"format": "tei", "overwrite": True},
        f"{out}/corpus.txt": {"format": "txt", "overwrite": True},
    }
    command += ["-s", f"FEEDS={json.dumps(feeds)}"]
    if ALL_IN_PROCESSES:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        result = subprocess.run(
            [sys.executable, "-m", "scrapy", *command],
            cwd=PROJECT,
            env=env,
            capture_output=True,
            text=True,
            timeout=CRAWL_TIMEOUT,
        )
        returncode, log = result.returncode, result.stderr
    else:
        log_file = out / "crawl.log"
        returncode = inprocess.run_command(command, log_file, CRAWL_TIMEOUT, project=PROJECT)
        log = log_file.read_text("utf-8", errors="replace")
    assert returncode == 0, log[-3000:]
    return Crawled(json.loads(stats_path.read_text("utf-8")), log)


@pytest.fixture(scope="module")
def crawled(server: Server, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("crawl")
    stats = crawl(server, out, f"DOCDIR_PATH={out}/docs", "DOCDIR_FORMAT=tei")
    return out, stats


def items_of(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "items.jsonl").read_text("utf-8").splitlines()
    return {item["extra"]["name"]: item for item in map(json.loads, lines)}


def test_items_get_text_and_keep_their_fields(crawled: tuple[Path, dict]) -> None:
    items = items_of(crawled[0])
    kept = set(items) - {"nodate.html"}
    assert "nodate.html" in items and kept in ({"article.html"}, {"syndicated.html"})
    for name, item in items.items():
        assert item["extra"]["name"] == name
        assert "html" not in item
        assert item["text"] and item["fingerprint"] and item["body"]
        assert item["url"].endswith(name)
    (article,) = (items[name] for name in kept)
    assert "tidal lagoon" in article["text"]
    assert article["date"] == "2024-03-05T08:30:00+00:00"  # the page gives the time
    assert {"kind": "head", "text": "What the lagoon involves", "level": 2} in article["body"]
    # The page states no date: the item's feed date fills in.
    assert items["nodate.html"]["date"] == "2023-05-06"
    assert items["nodate.html"]["language"] == "de"
    # Every document has a language from its text, and the detector's confidence in it.
    for item in items.values():
        assert item["language"] in ("en", "de")
        assert 0.5 < item["language_confidence"] <= 1
    assert (out_text := (crawled[0] / "corpus.txt").read_text("utf-8")).count("Language: ") == 2
    assert out_text.count("Language-Confidence: ") == 2


def test_stats_count_extractions_and_drops(crawled: tuple[Path, dict]) -> None:
    stats = crawled[1]
    assert stats["extract/items"] == 4
    assert stats.get("extract/trafilatura", 0) + stats.get("extract/neural", 0) == 4
    assert stats["extract/dropped/no_text"] == 1
    assert stats["extract/dropped/duplicate"] == 1
    assert stats["item_scraped_count"] == 2
    assert stats["extract/docdir/written"] == 2


def test_languages_setting_keeps_only_the_documents_in_those_languages(
    server: Server, tmp_path: Path
) -> None:
    crawled = crawl_logged(server, tmp_path, "EXTRACT_LANGUAGES=de,fr")
    assert set(items_of(tmp_path)) == {"nodate.html"}
    stats = crawled.stats
    # Both English pages: a page in another language never reaches the duplicate check.
    assert stats["extract/dropped/language"] == 2
    assert stats["extract/language/de"] == 1
    assert stats["extract/language/en"] == 2
    # The crawl report gives the reason by name.
    assert "dropped language 2, no_text 1" in crawled.log


def test_addon_politeness_reaches_the_server(server: Server, crawled: tuple[Path, dict]) -> None:
    paths = [path for path, _ in server.requests]
    assert "/robots.txt" in paths
    agents = {agent for _, agent in server.requests}
    assert agents == {f"scrapy-maintext/0.1.0 (+{CONTACT})"}


def test_feeds_and_docdir_are_valid(crawled: tuple[Path, dict]) -> None:
    out = crawled[0]
    corpus = etree.parse(str(out / "corpus.xml")).getroot()
    assert len(corpus) == 3  # corpus header + two documents
    assert tei_errors(corpus) == ""
    text = (out / "corpus.txt").read_text("utf-8")
    assert text.count(DOCUMENT_SEPARATOR + "\n") == 2
    files = sorted((out / "docs").iterdir())
    assert len(files) == 2 and all(f.suffix == ".xml" and len(f.stem) == 32 for f in files)
    for path in files:
        assert tei_errors(etree.parse(str(path)).getroot()) == ""


def test_timeout_kills_the_worker_and_drops_the_page(slow_server: Server, tmp_path: Path) -> None:
    stats = crawl(slow_server, tmp_path, "EXTRACT_TIMEOUT=1.5", "EXTRACT_WORKERS=1")
    assert stats["extract/timeout"] == 1
    # The worker that was killed is replaced: the other pages go on as without the slow one.
    assert (stats["extract/items"], stats["item_scraped_count"]) == (5, 2)
    assert "slow.html" not in items_of(tmp_path)


def test_thread_mode_without_worker_processes(server: Server, tmp_path: Path) -> None:
    stats = crawl(server, tmp_path, "EXTRACT_WORKERS=0", "EXTRACT_ENGINE=trafilatura")
    assert stats["extract/trafilatura"] == 4
    assert stats["item_scraped_count"] == 2
    assert len(items_of(tmp_path)) == 2


def test_a_model_of_ones_own_extracts_the_crawl(server: Server, tmp_path: Path) -> None:
    # A model folder as `models.train --out` writes it, outside the package.
    model = shutil.copytree(STACKED_MODEL, tmp_path / "my-model")
    stats = crawl(server, tmp_path, f"EXTRACT_MODEL={model}", "EXTRACT_ENGINE=neural")
    assert stats["extract/neural"] == 4
    assert {item["model_version"] for item in items_of(tmp_path).values()} == {"v2"}


@pytest.mark.parametrize("workers", [0, 2])
def test_a_model_that_cannot_load_is_logged_once_and_trafilatura_takes_over(
    server: Server, tmp_path: Path, workers: int
) -> None:
    model = damaged_model(tmp_path)
    settings = (f"EXTRACT_MODEL={model}", f"EXTRACT_WORKERS={workers}")
    crawled = crawl_logged(server, tmp_path, *settings)
    assert crawled.log.count("Neural extractor unavailable") == 1
    assert crawled.stats["extract/trafilatura"] == 4
    assert "extract/neural" not in crawled.stats


def test_recurring_crawl_through_the_addon(server: Server, tmp_path: Path) -> None:
    """A project's own spider with CRAWL_STATE: the pages it exported are asked for
    conditionally next time (this server answers If-Modified-Since) and nothing is exported
    again."""
    state = f"CRAWL_STATE={tmp_path / 'state.sqlite'}"
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = crawl(server, tmp_path / "first", state)
    exported = first["item_scraped_count"]
    assert exported >= 2 and first["recrawl/new"] == exported
    second = crawl(server, tmp_path / "second", state)
    assert second.get("item_scraped_count", 0) == 0
    # Every page the first run decided (exported or dropped for a reason) answers 304.
    assert second["recrawl/not_modified"] == exported + first.get("item_dropped_count", 0)
    assert (tmp_path / "second" / "items.jsonl").read_text("utf-8") == ""
