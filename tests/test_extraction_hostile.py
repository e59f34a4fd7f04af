"""Hostile pages that used to lose good text or take the whole page timeout."""

from __future__ import annotations

import random
import time
from typing import Any

import lxml.html
import pytest
from scrapy_maintext import ExtractOptions, extract
from scrapy_maintext.demo.content import make_articles
from scrapy_maintext.demo.site import page_html
from scrapy_maintext.extraction.body import MAX_NESTING

PARAGRAPH = "<p>" + "A perfectly normal paragraph of article text that goes on. " * 8 + "</p>"
URL = "https://hostile.example/a.html"
ENGINES = ["trafilatura", "auto"]
#: Far above what these pages take now (well under a second), far below what they took
#: before (20 s to minutes): a loose bound, not a benchmark.
SLOW = 10.0


def _page(head: str = "", body: str = "") -> str:
    return (
        f"<html><head><meta charset='utf-8'>{head}</head><body><article>"
        f"{body}{PARAGRAPH * 4}</article></body></html>"
    )


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("char", ["\f", "\v"])
def test_form_feed_and_vertical_tab_are_white_space(engine: str, char: str) -> None:
    headline = f"<h1>Hello{char}World</h1><h2>Harbour{char}news</h2>"
    raw = _page(f"<title>Hello{char}World</title>", headline)
    doc = extract(raw, URL, ExtractOptions(engine=engine))
    assert doc.reason is None
    # The headline is the title (the text convention); the in-body heading is text.
    assert doc.text.startswith("Harbour news\n")
    assert doc.title == "Hello World" and "Hello" not in doc.text


@pytest.mark.parametrize("engine", ENGINES)
def test_content_nested_beyond_the_parser_default_limit_is_recovered(engine: str) -> None:
    depth = 600  # libxml2 drops everything below 256 levels by default
    raw = (
        "<html><body>"
        + "<div>" * depth
        + "<h1>Deep title</h1>"
        + PARAGRAPH * 3
        + "</div>" * depth
        + "</body></html>"
    )
    doc = extract(raw, URL, ExtractOptions(engine=engine))
    assert doc.reason is None
    assert doc.title == "Deep title" and "perfectly normal paragraph" in doc.text
    # The headline is the title, not a line of text (trafilatura glues it to the paragraph
    # in the flattened tree: "Deep titleA perfectly ...", as it did before the convention).
    assert "Deep title" not in doc.text.splitlines()
    assert doc.notes == ["nesting-flattened"]


def test_nesting_beyond_the_hard_limit_is_reported() -> None:
    depth = 5000  # beyond libxml2's 2048 levels even with its "huge" option
    raw = "<html><body><article><p>Intro text.</p>" + "<div>" * depth + PARAGRAPH
    doc = extract(raw, URL, ExtractOptions(engine="trafilatura"))
    assert "nesting-cut" in doc.notes


def test_flattened_tree_is_no_deeper_than_the_limit() -> None:
    from scrapy_maintext.extraction.body import max_depth, parse_page

    raw = "<html><body>" + "<div><p>x</p>" * 1000 + "</div>" * 1000 + "</body></html>"
    page = parse_page(raw, ExtractOptions())
    assert page.tree is not None and max_depth(page.tree) <= MAX_NESTING


@pytest.mark.parametrize("engine", ENGINES)
def test_element_with_100k_attributes(engine: str) -> None:
    crowded = "<div " + " ".join(f'a{i}="v"' for i in range(100_000)) + ">x</div>"
    started = time.monotonic()
    doc = extract(_page(body=crowded), URL, ExtractOptions(engine=engine))
    assert time.monotonic() - started < SLOW
    assert "perfectly normal paragraph" in doc.text
    assert doc.notes == ["attributes-cut"]


def test_normal_pages_are_left_alone() -> None:
    body = '<h1 class="x" id="y">Title</h1><h2 class="x" id="z">Section</h2>'
    doc = extract(_page("<title>T</title>", body), URL)
    assert doc.notes == [] and doc.title == "Title" and doc.text.startswith("Section\n")


def test_malformed_json_ld_is_bounded_and_still_read() -> None:
    # 160 KB of JSON-LD that is not JSON: trafilatura's fallback regexes took 20 s on it.
    block = '{"author": {"name": "Jane Roe"}, ' + '"author": "a", ' * 10_000
    raw = _page(f'<script type="application/ld+json">{block}</script>')
    started = time.monotonic()
    doc = extract(raw, URL, ExtractOptions(engine="trafilatura"))
    assert time.monotonic() - started < SLOW
    assert doc.author == "Jane Roe"


@pytest.mark.parametrize("engine", [*ENGINES, "neural"])
def test_demo_article_ends_with_its_text_not_the_comment_heading(engine: str) -> None:
    article, *others = make_articles(3)
    doc = extract(page_html(article, others), URL, ExtractOptions(engine=engine))
    assert doc.text.endswith(article.paragraphs[-1])
    assert "comments" not in doc.text


def test_footer_copyright_year_is_not_a_date() -> None:
    article, *others = make_articles(3)
    html = page_html(article, others)
    assert article.date == "2026-01-01"  # the page's markup gives a first of January
    assert extract(html, URL).date == "2026-01-01"
    undated = html.replace(f'<time datetime="{article.date}">{article.date}</time>', "")
    assert "&copy; 2026" in undated
    assert extract(undated, URL).date is None


@pytest.mark.slow  # seconds of parsing
def test_huge_pages_get_only_the_markup_date_search() -> None:
    from scrapy_maintext.fields.metadata import MAX_DATE_SEARCH_ELEMENTS, date_config

    paragraphs = "<p>Opened on 12 March 2019 by the mayor.</p>" * (MAX_DATE_SEARCH_ELEMENTS + 10)
    meta = '<meta property="article:published_time" content="2024-02-03">'
    page = f"<html><head><title>Big</title>{meta}</head><body>{paragraphs}</body></html>"
    tree = lxml.html.fromstring(page)
    assert date_config(tree)["extensive_search"] is False
    assert extract(page, "https://big.example/a").date == "2024-02-03"  # markup still read
    small = lxml.html.fromstring(f"<html><body>{paragraphs[:2000]}</body></html>")
    assert date_config(small)["extensive_search"] is True


def _bytes_cases() -> list[Any]:
    """Text pages with NUL bytes, as bytes with the encoding a crawl would give (or none)."""
    page = _page("<title>T</title>", "<h1>Headline</h1><h2>Heading</h2>")
    utf8 = page.encode()
    stray = utf8.replace(b"<h2>", b"<h2>\x00", 1).replace(b"<p>", b"<p>\x00\x00", 1)
    cases = {
        "leading-nul": (b"\x00" + utf8, None),
        "leading-nul-declared": (b"\x00" + utf8, "utf-8"),
        "stray-nuls": (stray, None),
        "stray-nuls-declared": (stray, "cp1252"),
        "utf16le": (page.encode("utf-16-le"), None),
        "utf16le-as-utf8": (page.encode("utf-16-le"), "utf-8"),
        "utf16le-as-utf16": (page.encode("utf-16-le"), "utf-16"),
        "utf16be-as-utf8": (page.encode("utf-16-be"), "utf-8"),
        "utf16-bom-as-utf8": (page.encode("utf-16"), "utf-8"),
    }
    return [pytest.param(raw, encoding, id=name) for name, (raw, encoding) in cases.items()]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("raw", "encoding"), _bytes_cases())
def test_nul_bytes_of_text_pages_lose_no_text(
    engine: str, raw: bytes, encoding: str | None
) -> None:
    from scrapy_maintext.extraction.core import extract_page

    doc = extract_page(raw, URL, ExtractOptions(engine=engine), encoding=encoding).doc
    assert doc.reason is None
    assert "perfectly normal paragraph" in doc.text and "Heading" in doc.text
    assert doc.title == "Headline" and "Headline" not in doc.text  # the text convention
    assert "\x00" not in doc.text


@pytest.mark.parametrize(
    "raw",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8,
        b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj <</Type /Catalog>> endobj\n" * 20,
        random.Random(5).randbytes(8192),
        b"<html>" + b"\x00" * 64 + _page().encode(),
        (b"<p>" + b"\x01\x02\x03\x00\x04\x05" * 10) * 20,
    ],
    ids=["png", "pdf", "random", "many-nuls", "control-bytes"],
)
def test_binary_bodies_are_still_refused(raw: bytes) -> None:
    from scrapy_maintext.extraction.body import looks_binary, parse_page

    assert looks_binary(raw)
    assert parse_page(raw, ExtractOptions()).reason == "binary"
