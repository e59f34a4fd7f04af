"""A page of more than ``MAX_BLOCKS`` blocks: its text is cut there, and the document, the
stats and the report say so (issue 29)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scrapy.utils.test import get_crawler
from scrapy_maintext.neural.segment import MAX_BLOCKS
from scrapy_maintext.report.extension import CrawlReport
from scrapy_maintext.report.files import load_report, write_report
from scrapy_maintext.report.html import embedded_data
from scrapy_maintext.vocabulary.names import Note, Stat

from tests.test_cli import maintext


def _page(paragraphs: int) -> str:
    body = "".join(f"<p>Paragraph {i} of a very long page.</p>" for i in range(paragraphs))
    return f"<html><body><article>{body}</article></body></html>"


def test_the_crawl_report_shows_pages_repaired_or_cut(tmp_path: Path) -> None:
    crawler = get_crawler(settings_dict={"CRAWL_REPORT": str(tmp_path / "report.html")})
    report = CrawlReport.from_crawler(crawler)
    assert crawler.stats is not None
    crawler.stats.set_value(Stat.EXTRACT_REPAIRED + Note.BLOCKS_CUT, 2)
    crawler.stats.set_value(Stat.EXTRACT_REPAIRED + "nesting-cut", 1)
    data = report.report_data("finished")
    assert data["repaired"] == {"blocks-cut": 2, "nesting-cut": 1}
    write_report(data, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text("utf-8")
    assert "pages repaired or cut" in page and "blocks-cut 2" in page
    # An older report without the key reads as none.
    del data["repaired"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    assert load_report(tmp_path / "old.json")["repaired"] == {}


@pytest.mark.slow
def test_maintext_extract_says_a_page_was_cut_at_the_block_limit(tmp_path: Path) -> None:
    # About 10 s: the model runs on 20,000 blocks.
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "long.html").write_text(_page(2 * MAX_BLOCKS), "utf-8")
    (pages / "short.html").write_text(_page(40), "utf-8")
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    command = ["extract", str(pages), "-o", str(out), "--workers", "0", "--engine", "neural"]
    proc = maintext(*command, "--report", str(report), cwd=tmp_path)
    stderr = proc.stderr.decode()
    assert proc.returncode == 0, stderr[-2000:]
    assert "1 pages over the block limit (their text cut there)" in stderr.splitlines()[-2]
    records = {Path(r["source"]).name: r for r in map(json.loads, out.read_text().splitlines())}
    assert len(records["long.html"]["text"].splitlines()) == MAX_BLOCKS
    assert len(records["short.html"]["text"].splitlines()) == 40
    data = embedded_data(report.read_text("utf-8"))
    assert data is not None and data["repaired"] == {"blocks-cut": 1}
