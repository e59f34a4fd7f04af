"""Markdown output: golden files from a page with every structure, escaping, the exporters.

Regenerate the golden files with ``UPDATE_GOLDEN=1 pytest tests/test_markdown.py``.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import pytest
from scrapy_maintext.cli import main as maintext
from scrapy_maintext.document import Block, Document
from scrapy_maintext.exporters.markdown import markdown_body, markdown_document, section_starts
from scrapy_maintext.exporters.records import images_of
from scrapy_maintext.extraction import ExtractOptions, extract

from tests.crawl import NO_WAITS, run_crawl
from tests.sites import TestSiteServer

FIXTURE = Path(__file__).parent / "fixtures" / "markdown" / "structure.html"
GOLDEN = Path(__file__).parent / "golden" / "markdown"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
URL = "https://backyard.example/garden/rain-garden.html"


def check_golden(name: str, output: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(output, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1"
    assert output == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


@pytest.mark.parametrize("engine", ["neural", "trafilatura"])
def test_page_with_every_structure_matches_golden(engine: str) -> None:
    doc = extract(FIXTURE.read_bytes(), URL, ExtractOptions(engine=engine))
    assert doc.extractor == engine
    markdown = markdown_document(doc)
    check_golden(f"structure.{engine}.md", markdown)
    lines = markdown.splitlines()
    # One section, titled by the page, its headings below it.
    assert lines[0] == "# Building a rain garden in a small backyard"
    assert [line for line in lines if line.startswith("#")] == [
        "# Building a rain garden in a small backyard",
        "## Choosing the spot",
        "## Plants that cope with wet and dry spells",
        "### Sizing the hollow",
    ]
    assert "  - dig a hole thirty centimetres deep" in lines
    assert "| Plant | Zone | Height |" in lines and "| --- | --- | --- |" in lines
    assert "```" in lines and "garden_area = roof_area * 0.2" in lines
    assert any(line.startswith("> The first autumn storm") for line in lines)
    assert "Date: 2025-04-12\\" in lines


def test_markup_in_text_is_escaped_so_it_renders_as_text() -> None:
    blocks = [
        Block("p", "# not a heading"),
        Block("p", "2024. A year of change"),
        Block("p", "- not an item, and *inline* stays"),
        Block("p", "-5 degrees is cold"),
        Block("row", "a | b", cells=("a|b", "c")),
        Block("row", "d", cells=("d",)),
        Block("code", "x = 1\n```\ny = 2"),
    ]
    assert markdown_body(blocks) == (
        "\\# not a heading\n\n"
        "2024\\. A year of change\n\n"
        "\\- not an item, and \\*inline\\* stays\n\n"
        "\\-5 degrees is cold\n\n"
        "| a\\|b | c |\n| --- | --- |\n| d |  |\n\n"
        "````\nx = 1\n```\ny = 2\n````"
    )


def test_a_list_never_jumps_more_than_one_level() -> None:
    items = [Block("item", "deep", level=2), Block("item", "top"), Block("item", "sub", level=1)]
    assert markdown_body(items) == "- deep\n- top\n  - sub"


def test_document_without_title_or_body_blocks() -> None:
    doc = Document(url="https://a.example/x", text="first line\nsecond line", language="fr")
    assert markdown_document(doc) == (
        "# https://a.example/x\n\nURL: <https://a.example/x>\\\nLanguage: fr\n\n"
        "first line\n\nsecond line\n\n"
    )


def test_sections_start_only_at_document_titles() -> None:
    text = markdown_document(extract(FIXTURE.read_bytes(), URL))
    assert len(re.findall(r"^# ", text, re.M)) == 1


def _sections(text: str) -> list[str]:
    data = text.encode("utf-8")
    starts = [*section_starts(data), len(data)]
    return [data[a:b].decode("utf-8") for a, b in itertools.pairwise(starts)]


def test_crawl_markdown_has_one_section_per_document_with_its_headings(
    hostile_site: TestSiteServer, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.md"
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": hostile_site.base_url},
        {**NO_WAITS, "DOWNLOAD_TIMEOUT": "1", "EXTRACT_MARKDOWN": "True"},
        extra_outputs=(f"{corpus}:markdown",),
    )
    assert result.returncode == 0, result.log[-3000:]
    sections = _sections(corpus.read_text(encoding="utf-8"))
    assert len(sections) == len(result.items) > 5
    by_url = {re.search(r"^URL: <(.*)>", s, re.M).group(1): s for s in sections}  # type: ignore[union-attr]
    for item in result.items:
        section = by_url[item["url"]]
        headings = [b["text"] for b in item["body"] if b["kind"] == "head"]
        title_lines = [line for line in section.splitlines() if line.startswith("#")]
        assert title_lines[0] == f"# {item['title']}"
        for heading in headings:
            if heading != item["title"]:
                assert any(line.endswith(f" {heading}") for line in title_lines[1:]), heading
        blocks = [Block.from_dict(b) for b in item["body"]]
        images = images_of(item.get("images"))
        assert item["markdown"] == markdown_body(blocks, images=images)


def test_extract_writes_markdown_corpus_directory_and_resumes(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "rain.html").write_bytes(FIXTURE.read_bytes())
    (pages / "copy.html").write_bytes(FIXTURE.read_bytes().replace(b"rain garden", b"bog garden"))
    corpus, folder = tmp_path / "out.md", tmp_path / "docs"
    base = ["extract", str(pages), "--base-url", "https://backyard.example", "--workers", "0"]
    assert maintext([*base, "-o", str(corpus), "--no-progress"]) == 0
    text = corpus.read_text(encoding="utf-8")
    assert len(_sections(text)) == 2
    assert maintext([*base, "-o", f"{folder}/:md", "--no-progress"]) == 0
    files = sorted(folder.glob("*.md"))
    assert len(files) == 2
    assert sorted(f.read_text(encoding="utf-8") for f in files) == sorted(_sections(text))
    # A kill in the middle of the second document: --resume writes it again, once.
    corpus.write_bytes(text.encode("utf-8")[: len(text.encode("utf-8")) - 200])
    assert maintext([*base, "-o", str(corpus), "--resume", "--no-progress"]) == 0
    assert corpus.read_text(encoding="utf-8") == text
