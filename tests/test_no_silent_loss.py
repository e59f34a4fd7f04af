"""No silent loss (issue 29): a document counts as exported only once every output took it.

An output that fails (a feed storage whose writes fail after N items, a full disk on a small
tmpfs) stops the crawl with exit status 1 and one line; the crawl state and the page journal
keep the pages it did not write as not exported, and the next run exports exactly those.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy_maintext.demo.site import SiteOptions
from scrapy_maintext.state.crawl_state import CrawlState

from tests import failing_storage
from tests.crawl import NO_WAITS, CrawlResult, run_crawl
from tests.recrawl_site import ChangingSite
from tests.sites import TestSiteServer
from tests.tmpfs import Tmpfs

SETTINGS = {**NO_WAITS, "DOWNLOAD_TIMEOUT": "5"}
FAILING = {"FEED_STORAGES": json.dumps({failing_storage.SCHEME: failing_storage.PATH})}
ARTICLES = 20
#: Bytes left free on the state's disk: room to open it, not to record 20 pages.
LEAVE = 40_000


@pytest.fixture
def news() -> Iterator[ChangingSite]:
    with TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.4") as server:
        yield ChangingSite(server, count=ARTICLES)


def crawl(news: ChangingSite, out: Path, **settings: str) -> CrawlResult:
    news.server.reset()
    extra = settings.pop("extra_output", "")
    return run_crawl(
        "sitemap",
        out,
        {"domain": news.base},
        {**SETTINGS, **settings},
        extra_outputs=(extra,) if extra else (),
    )


def exported_in_state(state: Path, news: ChangingSite) -> set[str]:
    with CrawlState(state) as opened:
        records = opened.get_many(news.base + news.path(slug) for slug in news.stories)
    return {url for url, record in records.items() if record.revision > 0}


def urls(result: CrawlResult) -> set[str]:
    return {item["url"] for item in result.items}


def lines_of(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), "the output ends in half a record"
    return [json.loads(line) for line in data.decode().splitlines()]


@pytest.mark.parametrize("memory", ["CRAWL_STATE", "JOBDIR"])
def test_a_feed_that_fails_after_n_items(news: ChangingSite, tmp_path: Path, memory: str) -> None:
    kept = tmp_path / ("state.sqlite" if memory == "CRAWL_STATE" else "job")
    failing = tmp_path / "failing.jsonl"
    first = crawl(
        news,
        tmp_path / "run1",
        **{memory: str(kept)},
        **FAILING,
        TEST_FAIL_AFTER="3",
        extra_output=f"{failing_storage.SCHEME}://{failing}:jsonl",
    )
    assert first.returncode == 1, first.log[-3000:]
    assert "Traceback" not in first.log
    assert f"Output {failing_storage.SCHEME}://{failing}" in first.log
    assert "No space left on device; the crawl stops" in first.log
    assert "Lost: " in first.log and "documents not exported" in first.log
    assert "Stored jsonl feed" not in first.log.split(str(failing))[-1]
    written = {str(record["url"]) for record in lines_of(failing)}
    assert len(written) == 3
    if memory == "CRAWL_STATE":
        assert exported_in_state(kept, news) == written
    # The next run, with outputs that work, exports exactly what the first did not write.
    second = crawl(news, tmp_path / "run2", **{memory: str(kept)})
    assert second.returncode == 0, second.log[-3000:]
    assert "Lost" not in second.log
    if memory == "CRAWL_STATE":
        assert urls(second) == {news.base + news.path(s) for s in news.stories} - written
        assert exported_in_state(kept, news) == urls(first) | urls(second) | written
    else:
        assert written <= urls(first)
        assert urls(second) & written == set()
        assert len(urls(second) | written) == ARTICLES


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Tmpfs]:
    with Tmpfs.mounted(tmp_path / "small", "512k") as mounted:
        yield mounted


def test_a_full_disk_under_the_output(news: ChangingSite, tmp_path: Path, tmpfs: Tmpfs) -> None:
    state = tmp_path / "state.sqlite"
    output = f"{tmpfs.path}/out.jsonl"
    tmpfs.fill(leave=16_000)
    first = crawl(news, tmp_path / "run1", CRAWL_STATE=str(state), extra_output=output)
    assert first.returncode == 1, first.log[-3000:]
    assert "No space left on device" in first.log and "Traceback" not in first.log
    written = {str(record["url"]) for record in lines_of(tmpfs.path / "out.jsonl")}
    assert 0 < len(written) < ARTICLES
    assert exported_in_state(state, news) == written
    second = crawl(news, tmp_path / "run2", CRAWL_STATE=str(state))
    assert second.returncode == 0, second.log[-3000:]
    assert urls(second) == {news.base + news.path(s) for s in news.stories} - written


def test_a_full_disk_under_the_state(news: ChangingSite, tmp_path: Path, tmpfs: Tmpfs) -> None:
    state = tmpfs.path / "state.sqlite"
    tmpfs.fill(leave=24_000)
    # Too small to create the state: one line before the crawl.
    refused = crawl(news, tmp_path / "run0", CRAWL_STATE=str(state))
    assert refused.returncode == 2 and not state.exists()
    (tmpfs.path / ".filler").unlink()
    CrawlState(state).close()
    tmpfs.fill(leave=LEAVE)
    first = crawl(news, tmp_path / "run1", CRAWL_STATE=str(state))
    assert first.returncode == 1, first.log[-3000:]
    assert f"Crawl state {state} failed: database or disk is full" in first.log
    assert "Traceback" not in first.log
    assert "page outcomes not recorded in the crawl state" in first.log
    # What the state claims was exported was exported.
    assert exported_in_state(state, news) <= urls(first)


def test_a_full_disk_under_the_warc_folder(
    news: ChangingSite, tmp_path: Path, tmpfs: Tmpfs
) -> None:
    from tests.warc_checks import read_warc, sha1_digest

    folder = tmpfs.path / "warc"
    tmpfs.fill(leave=12_000)
    result = crawl(news, tmp_path / "run", WARC_OUTPUT=str(folder))
    assert result.returncode == 1, result.log[-3000:]
    assert "responses not archived in the WARC output" in result.log
    assert "Traceback" not in result.log
    files = sorted(folder.iterdir())
    assert files and all(f.stat().st_size > 0 for f in files)
    # Every file reads whole (no record cut short), every digest holds.
    records = {(r.file, r.offset): r for f in files for r in read_warc(f)}
    with_record = [item for item in result.items if item.get("warc_file")]
    assert 0 < len(with_record) < len(result.items) == ARTICLES
    for item in with_record:
        record = records[(item["warc_file"], item["warc_offset"])]
        assert record.url == item["url"]
        assert sha1_digest(record.raw_payload) == record.headers["WARC-Payload-Digest"]


def _bad_outputs(tmp_path: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Outputs that cannot be written, by the phrase that says why: (-O paths, settings)."""
    (tmp_path / "afile").write_text("a file, not a folder")
    (tmp_path / "adir.jsonl").mkdir()
    return {
        "afile is not a folder": ([f"{tmp_path}/afile/out.jsonl"], {}),
        "adir.jsonl is a folder": ([f"{tmp_path}/adir.jsonl"], {}),
        "DOCDIR_PATH": ([], {"DOCDIR_PATH": f"{tmp_path}/afile/docs"}),
    }


@pytest.mark.parametrize("case", ["afile is not a folder", "adir.jsonl is a folder", "DOCDIR_PATH"])
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.4") as server:
        outputs, settings = _bad_outputs(tmp_path)[case]
        result = run_crawl(
            "sitemap",
            tmp_path / "out",
            {"domain": server.base_url},
            {**SETTINGS, **settings},
            extra_outputs=tuple(outputs),
        )
        assert result.returncode == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith("scrapy crawl: error: ") and case in error, error
        assert "\n" not in error
        assert not server.paths(), "nothing is fetched"


PROJECT_SETTINGS = f"""
ADDONS = {{"scrapy_maintext.Addon": 500}}
EXTRACT_ENABLED = False
FEED_STORAGES = {{"{failing_storage.SCHEME}": "{failing_storage.PATH}"}}
TEST_FAIL_AFTER = 2
SPIDER_MODULES = ["project.spiders"]
"""
PROJECT_SPIDER = """
import scrapy


class Items(scrapy.Spider):
    name = "items"

    async def start(self):
        for i in range(5):
            yield scrapy.Request(f"data:text/plain,document {i}", dont_filter=True)

    def parse(self, response):
        yield {"url": f"https://example.org/{response.text}", "text": response.text}
"""


def test_the_addon_in_a_project_of_ones_own_exits_1_when_an_output_fails(tmp_path: Path) -> None:
    """A stock ``scrapy crawl`` (not ours) with the add-on: the exit status says it too."""
    import subprocess
    import sys

    from tests.crawl import ROOT

    (tmp_path / "project" / "spiders").mkdir(parents=True)
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = project.settings\n")
    (tmp_path / "project" / "__init__.py").write_text("")
    (tmp_path / "project" / "settings.py").write_text(PROJECT_SETTINGS)
    (tmp_path / "project" / "spiders" / "__init__.py").write_text(PROJECT_SPIDER)
    failing = tmp_path / "items.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "items", "-O",
         f"{failing_storage.SCHEME}://{failing}:jsonl"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Lost: 3 documents not exported" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(lines_of(failing)) == 2


def test_maintext_crawl_checks_its_outputs_before_scrapy_starts(tmp_path: Path) -> None:
    from scrapy_maintext.cli import check_settings

    for case, (outputs, settings) in _bad_outputs(tmp_path).items():
        args = [arg for path in outputs for arg in ("-O", path)]
        args += [arg for key, value in settings.items() for arg in ("-s", f"{key}={value}")]
        error = check_settings(args)
        assert error is not None and error.startswith("maintext crawl: error: ") and case in error
    assert check_settings(["-O", f"{tmp_path}/corpus.xml:tei", "-O", f"{tmp_path}/a.md"]) is None


def test_a_feed_that_holds_documents_back_is_refused_with_a_crawl_state(tmp_path: Path) -> None:
    from scrapy_maintext.cli import check_settings

    state = ["-s", f"CRAWL_STATE={tmp_path}/s.sqlite"]
    uploaded = json.dumps({"s3://bucket/items.jsonl": {"format": "jsonl"}})
    gzipped = json.dumps(
        {
            f"{tmp_path}/items.jsonl.gz": {
                "format": "jsonl",
                "postprocessing": ["scrapy.extensions.postprocessing.GzipPlugin"],
            }
        }
    )
    for feeds, phrase in ((uploaded, "uploaded only when"), (gzipped, "post-processed")):
        error = check_settings([*state, "-s", f"FEEDS={feeds}"])
        assert error is not None and phrase in error and "\n" not in error, error
        assert check_settings(["-s", f"FEEDS={feeds}"]) is None  # no state: as Scrapy does
    assert check_settings([*state, "-O", f"{tmp_path}/items.jsonl", "-O", "-:jsonl"]) is None


def test_a_tei_corpus_keeps_its_closing_tag_when_a_write_fails(tmp_path: Path) -> None:
    from scrapy_maintext.exporters.tei import CORPUS_END, TeiItemExporter

    path = tmp_path / "corpus.xml"
    # A new corpus (its header and one document), then the same corpus continued (one more
    # document): the next write meets a full disk.
    for mode, writes in (("w", 2), ("a+", 1)):
        file = failing_storage.FailingFile(path, mode)
        file.after, file.refusals = writes, 1
        exporter = TeiItemExporter(file)
        exporter.start_exporting()
        exporter.export_item({"url": "https://example.org/1", "text": "One.", "title": "1"})
        with pytest.raises(OSError):
            exporter.export_item({"url": "https://example.org/2", "text": "Two.", "title": "2"})
        file.close()
        data = path.read_bytes()
        assert data.endswith(CORPUS_END) and data.count(b"<?xml") == 1, mode
        assert b"example.org/1" in data and b"example.org/2" not in data
