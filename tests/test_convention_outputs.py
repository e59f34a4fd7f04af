"""The text convention end to end: a news page through both engines, every exporter, a real
crawl and ``maintext extract``; ``text`` holds the body, the title and author their fields."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from scrapy.exporters import JsonLinesItemExporter
from scrapy_maintext.cli import main as maintext
from scrapy_maintext.document import Document
from scrapy_maintext.exporters import TeiItemExporter, TxtItemExporter
from scrapy_maintext.exporters.docdir import render
from scrapy_maintext.exporters.markdown import MarkdownItemExporter
from scrapy_maintext.exporters.tei import TEI_NS
from scrapy_maintext.exporters.txt import DOCUMENT_SEPARATOR, HEADER_RULE
from scrapy_maintext.extraction import ExtractOptions, extract

from tests.crawl import NO_WAITS, run_crawl
from tests.model_folders import decoded_model
from tests.sites import TestSiteServer, serve_with_page

PAGE = Path(__file__).parent / "fixtures" / "convention" / "news.html"
URL = "https://courier.example/news/ferry.html"
TITLE = "Harbour ferry returns after winter repairs"
AUTHOR = "Jane Doe"
#: The page states the time of day and its zone: ``date`` keeps them.
DATE = "2025-03-12T14:52:00+00:00"
#: The body: paragraphs, the in-body h2, list items, a table row.
BODY = (
    "The small ferry that links the two banks of the harbour",
    "What changed on board",
    "Wider ramps for bicycles and prams",
    "First crossing | 06:30 | 08:00",
    "spare parts for the steering gear had to be made to order abroad",
)
#: What the page shows beside the body: none of it is text.
NOT_TEXT = {
    "headline": TITLE,
    "byline": AUTHOR,
    "dateline": "Updated: 12 March 2025",
    "caption": "The repaired ferry leaves the quay",
    "photo credit": "Photo: Tom Reed",
    "share bar": "Share on",
    "teaser": "Read more",
    "newsletter": "newsletter",
    "newsletter box": "in your inbox every morning",
}
#: The page's picture: its caption and credit go to ``images``.
CAPTION = "The repaired ferry leaves the quay on its first crossing of the season."
CREDIT = "Tom Reed"
ENGINES = {"auto": "neural", "trafilatura": "trafilatura"}
TEI = f"{{{TEI_NS}}}"


def check_text(text: str, where: str) -> None:
    for line in BODY:
        assert line in text, (where, line)
    for what, words in NOT_TEXT.items():
        assert words not in text, (where, what)


@pytest.fixture(scope="module", params=list(ENGINES))
def doc(request: pytest.FixtureRequest) -> Document:
    engine = request.param
    doc = extract(PAGE.read_bytes(), URL, ExtractOptions(engine=engine))
    assert doc.extractor == ENGINES[engine]
    return doc


def test_both_engines_give_the_body_as_text_and_the_rest_to_fields(doc: Document) -> None:
    check_text(doc.text, doc.extractor or "")
    assert (doc.title, doc.author, doc.date) == (TITLE, AUTHOR, DATE)
    kinds = {b.kind for b in doc.body}
    assert {"p", "head", "item", "row"} <= kinds
    assert [(b.text, b.level) for b in doc.body if b.kind == "head"] == [
        ("What changed on board", 2)
    ]


def _export(exporter_class: Any, doc: Document) -> str:
    buffer = io.BytesIO()
    exporter = exporter_class(buffer)
    exporter.start_exporting()
    exporter.export_item(doc.to_dict())
    exporter.finish_exporting()
    return buffer.getvalue().decode("utf-8")


def check_json(record: dict[str, Any], where: str) -> None:
    assert (record["title"], record["author"], record["date"]) == (TITLE, AUTHOR, DATE)
    check_text(record["text"], where)
    check_text("\n".join(block["text"] for block in record["body"]), where)


def check_tei(tei: Any, where: str) -> None:
    """A ``<TEI>`` element: the title and author in the header, the body without them."""
    assert tei.findtext(f".//{TEI}titleStmt/{TEI}title") == TITLE, where
    assert tei.findtext(f".//{TEI}titleStmt/{TEI}author") == AUTHOR, where
    body = tei.find(f".//{TEI}text/{TEI}body")
    figures = body.findall(f".//{TEI}figure")
    # The caption and credit go with their picture, in a <figure>, never into the text.
    assert [f.findtext(f"{TEI}head") for f in figures] == [CAPTION], where
    assert [f.findtext(f"{TEI}note[@type='credit']") for f in figures] == [CREDIT], where
    for figure in figures:
        figure.getparent().remove(figure)
    lines = [
        " | ".join("".join(c.itertext()) for c in e) if e.tag == f"{TEI}row" else e.text or ""
        for e in body.iter(f"{TEI}p", f"{TEI}head", f"{TEI}item", f"{TEI}row", f"{TEI}quote")
    ]
    check_text("\n".join(lines), where)
    check_text("\n".join(lines) + "".join(body.itertext()), where)


def check_txt(document: str, where: str) -> None:
    """One document of the txt format: the header holds the fields, the text the body."""
    header, _, text = document.partition("\n" + HEADER_RULE + "\n")
    assert f"\nTitle: {TITLE}\n" in header and f"\nAuthor: {AUTHOR}\n" in header, where
    assert "\nDate: 2025-03-12" in header, where
    check_text(text, where)


def check_markdown(section: str, where: str) -> None:
    """One Markdown section: ``# title``, metadata lines, the body (``##`` headings)."""
    lines = section.strip("\n").splitlines()
    assert lines[0] == f"# {TITLE}", where
    assert f"Author: {AUTHOR}\\" in lines
    # The picture in place: ``![alt](url "caption")``, its credit on the next line.
    (image,) = [i for i, line in enumerate(lines) if line.startswith("![")]
    assert f'"{CAPTION}")' in lines[image] and lines[image + 1] == f"*{CREDIT}*", where
    del lines[image : image + 2]
    body = "\n".join(line for line in lines[1:] if not line.startswith(("URL:", "Author:")))
    assert "## What changed on board" in body
    check_text(body.replace("## ", "").replace("- ", ""), where)


def test_json_lines(doc: Document) -> None:
    check_json(json.loads(_export(JsonLinesItemExporter, doc)), "jsonl")


def test_tei_keeps_the_title_in_its_header(doc: Document) -> None:
    corpus = etree.fromstring(_export(TeiItemExporter, doc).encode())
    (tei,) = corpus.findall(f"{TEI}TEI")
    check_tei(tei, "tei")


def test_txt_has_the_metadata_header(doc: Document) -> None:
    text = _export(TxtItemExporter, doc)
    assert text.startswith(DOCUMENT_SEPARATOR + "\n")
    check_txt(text, "txt")


def test_markdown_opens_with_the_title(doc: Document) -> None:
    check_markdown(_export(MarkdownItemExporter, doc), "markdown")


def test_one_file_per_document_in_every_format(doc: Document) -> None:
    check_tei(etree.fromstring(render(doc.to_dict(), "tei")), "docdir tei")
    check_txt(render(doc.to_dict(), "txt").decode(), "docdir txt")
    check_markdown(render(doc.to_dict(), "md").decode(), "docdir md")
    check_json(json.loads(render(doc.to_dict(), "json")), "docdir json")


@pytest.fixture(scope="module")
def news_site() -> Iterator[TestSiteServer]:
    """The demo site with the news page beside its articles, listed in its sitemap."""
    with serve_with_page("/news/ferry.html", PAGE.read_bytes()) as server:
        yield server


def test_a_crawl_writes_the_convention_to_every_output(
    news_site: TestSiteServer, tmp_path: Path
) -> None:
    tei, txt, md, docs = (tmp_path / name for name in ("c.xml", "c.txt", "c.md", "docs"))
    settings = {**NO_WAITS, "EXTRACT_WORKERS": "1", "DOCDIR_PATH": str(docs)}
    outputs = (f"{tei}:tei", f"{txt}:txt", f"{md}:markdown")
    args = {"domain": news_site.base_url}
    result = run_crawl("sitemap", tmp_path, args, settings, extra_outputs=outputs)
    assert result.returncode == 0, result.log[-3000:]
    url = f"{news_site.base_url}/news/ferry.html"
    (item,) = [i for i in result.items if i["url"] == url]
    check_json(item, "crawl jsonl")
    corpus = etree.parse(str(tei)).getroot()
    by_url = {t.findtext(f".//{TEI}idno[@type='URL']"): t for t in corpus.iter(f"{TEI}TEI")}
    check_tei(by_url[url], "crawl tei")
    (text,) = [d for d in txt.read_text("utf-8").split(DOCUMENT_SEPARATOR) if f"URL: {url}" in d]
    check_txt(text, "crawl txt")
    sections = md.read_text("utf-8").split("\n# ")
    (section,) = [s for s in sections if f"<{url}>" in s]
    check_markdown("# " + section.removeprefix("# "), "crawl md")
    files = [etree.parse(str(f)).getroot() for f in docs.glob("*.xml")]
    (document,) = [f for f in files if f.findtext(f".//{TEI}idno[@type='URL']") == url]
    check_tei(document, "crawl docdir")


@pytest.mark.parametrize("engine", list(ENGINES))
def test_captions_come_back_with_the_option(engine: str, tmp_path: Path) -> None:
    model = None
    if engine == "auto":
        # The default model drops captions itself (its labels follow the convention): a low
        # threshold makes the engine keep the <figcaption>, for the option to give it back.
        model = str(decoded_model(tmp_path, threshold=0.02))
    options = ExtractOptions(engine=engine, include_captions=True, model=model)
    doc = extract(PAGE.read_bytes(), URL, options)
    if engine == "auto":
        assert "The repaired ferry leaves the quay" in doc.text
        assert "Photo: Tom Reed" in doc.text
    # trafilatura drops <figure> captions itself: there is nothing to give back. The
    # rest of the convention holds either way.
    without_caption = {k: v for k, v in NOT_TEXT.items() if k not in ("caption", "photo credit")}
    for what, words in without_caption.items():
        assert words not in doc.text, what
    assert doc.title == TITLE and BODY[0] in doc.text


def test_maintext_extract_captions(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "ferry.html").write_bytes(PAGE.read_bytes())
    keeping = decoded_model(tmp_path, threshold=0.02)  # the engine keeps the <figcaption>
    base = ["extract", str(pages), "--base-url", "https://courier.example", "--workers", "0"]
    base += ["--model", str(keeping)]
    plain, captioned = tmp_path / "plain.jsonl", tmp_path / "captions.jsonl"
    assert maintext([*base, "-o", str(plain), "--no-progress"]) == 0
    assert maintext([*base, "--captions", "-o", str(captioned), "--no-progress"]) == 0
    (record,) = [json.loads(line) for line in plain.read_text("utf-8").splitlines()]
    check_json(record, "maintext extract")
    (record,) = [json.loads(line) for line in captioned.read_text("utf-8").splitlines()]
    assert "The repaired ferry leaves the quay" in record["text"]
    assert TITLE not in record["text"]
