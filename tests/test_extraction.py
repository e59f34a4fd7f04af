"""``scrapy_maintext.extract``: main text, structure and metadata of real pages, plus bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse
from scrapy_maintext import Document, ExtractOptions, extract
from scrapy_maintext.extraction import extract_page, neural_available

SITE = Path(__file__).parent / "fixtures" / "extraction" / "site"
URL = "https://gazette.example/news/tidal.html"
TRAFILATURA = ExtractOptions(engine="trafilatura")


def page(name: str) -> bytes:
    return (SITE / name).read_bytes()


@pytest.fixture(scope="module")
def article() -> Document:
    return extract(page("article.html"), URL, TRAFILATURA)


def test_article_main_text_excludes_boilerplate(article: Document) -> None:
    assert article.reason is None
    assert "ending almost a decade of consultation" in article.text
    assert "judicial review" in article.text
    for chrome in ("Weather", "Privacy", "All rights reserved"):
        assert chrome not in article.text


def test_article_structure_keeps_every_block_kind(article: Document) -> None:
    kinds = [b.kind for b in article.body]
    assert {"head", "p", "item", "row", "quote", "code"} <= set(kinds)
    heads = [(b.text, b.level) for b in article.body if b.kind == "head"]
    # The h1 headline is the title, not a body block (the text convention, formats.md).
    assert heads == [("What the lagoon involves", 2), ("Costs at a glance", 2)]
    assert article.body[0].text.startswith("The borough council voted on Tuesday evening")
    rows = [b for b in article.body if b.kind == "row"]
    assert rows[1].cells == ("Breakwater", "£310m")
    code = next(b for b in article.body if b.kind == "code")
    assert code.text.splitlines() == [
        "turbines = 16",
        "rated_power_mw = 20",
        'mode = "bidirectional"',
    ]
    assert article.text.splitlines() == [line for b in article.body for line in b.text.splitlines()]


def test_article_metadata(article: Document) -> None:
    assert article.url == URL
    assert article.title == "Tidal power plans approved for the estuary"
    assert article.author == "Mara Lindqvist"
    assert article.date == "2024-03-05T08:30:00+00:00"  # the page gives the time
    assert article.sitename == "Harbour Gazette"
    assert article.hostname == "gazette.example"
    assert article.description is not None and "tidal lagoon" in article.description
    assert article.categories == ["Energy"]
    assert article.tags == ["tidal power", "estuary", "council"]
    assert article.language == "en"
    assert article.license == "https://creativecommons.org/licenses/by/4.0/"
    assert article.image == "https://gazette.example/img/lagoon.jpg"
    assert article.extractor == "trafilatura"
    assert article.model_version is None
    assert len(article.fingerprint) == 16 and int(article.fingerprint, 16) >= 0


def test_str_and_bytes_give_the_same_document(article: Document) -> None:
    again = extract(page("article.html").decode("utf-8"), URL, TRAFILATURA)
    assert again.to_dict() == article.to_dict()


def test_page_without_date_or_author() -> None:
    doc = extract(page("nodate.html"), "https://faehre.example/", TRAFILATURA)
    assert doc.date is None and doc.author is None
    assert doc.language == "de"
    assert doc.title == "Die Fähre fährt wieder"
    assert doc.text.startswith("Nach drei Monaten")  # the headline is the title only


def test_boilerplate_only_page_has_no_main_text() -> None:
    doc = extract(page("boilerplate.html"), "https://gazette.example/tags", TRAFILATURA)
    assert (doc.text, doc.body, doc.fingerprint, doc.reason) == ("", [], "", "no-main-text")
    assert doc.title == "Tags"


def test_without_metadata_only_url_fields_are_set() -> None:
    options = ExtractOptions(engine="trafilatura", with_metadata=False)
    doc = extract(page("article.html"), URL, options)
    assert doc.title is None and doc.date is None
    assert doc.hostname == "gazette.example"
    assert "tidal lagoon" in doc.text


def test_auto_engine_without_neural_module_degrades_to_trafilatura(article: Document) -> None:
    # A fresh interpreter where ``scrapy_maintext.neural`` cannot be imported, as before its
    # model ships: "auto" must give trafilatura's text and warn exactly once.
    code = (
        "import json, logging, sys\n"
        "sys.modules['scrapy_maintext.neural'] = None\n"
        "logging.basicConfig(level=logging.WARNING)\n"
        "from scrapy_maintext import extract\n"
        f"doc = extract(sys.stdin.buffer.read(), {URL!r})\n"
        "extract('<p>a second page</p>')\n"
        "print(json.dumps([doc.extractor, doc.text]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        input=page("article.html"),
        capture_output=True,
        check=True,
        timeout=60,
    )
    extractor, text = json.loads(result.stdout)
    assert (extractor, text) == ("trafilatura", article.text)
    assert result.stderr.decode().count("Neural extractor unavailable") == 1


def test_neural_engine_when_its_model_is_installed() -> None:
    pytest.importorskip("scrapy_maintext.neural")
    if not neural_available():
        pytest.skip("neural model file not installed")
    doc = extract(page("article.html"), URL, ExtractOptions(engine="neural"))
    assert doc.extractor == "neural"
    assert doc.model_version
    assert doc.confidence is not None and 0.0 <= doc.confidence <= 1.0
    assert "tidal lagoon" in doc.text


def test_options_reject_unknown_engine() -> None:
    with pytest.raises(ValueError, match="engine"):
        ExtractOptions(engine="magic")


def test_importing_extract_does_not_start_scrapy() -> None:
    code = (
        "import sys, scrapy_maintext\n"
        "html = '<html><body><article><p>' + 'word ' * 50 + '</p></article></body></html>'\n"
        "doc = scrapy_maintext.extract(html)\n"
        "assert doc.text.startswith('word'), doc\n"
        "bad = [m for m in ('scrapy', 'twisted') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


WRONG_CHARSET = (
    '<html><head><meta charset="iso-8859-1"></head><body><article><p>'
    + "Le café de la gare a rouvert ses portes après l'été, à la joie des habitués. " * 3
    + "</p></article></body></html>"
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(WRONG_CHARSET.encode("utf-8"), "café", id="utf8-declared-latin1"),
        pytest.param(WRONG_CHARSET.encode("cp1252"), "café", id="latin1-declared"),
        pytest.param(
            WRONG_CHARSET.replace('<meta charset="iso-8859-1">', "").encode("cp1252"),
            "café",
            id="cp1252-undeclared",
        ),
        pytest.param(
            WRONG_CHARSET.encode("utf-8").replace(b"gare", b"g\xffre"),
            "de la g",
            id="broken-utf8",
        ),
        pytest.param(
            '<?xml version="1.0" encoding="utf-8"?>' + WRONG_CHARSET, "café", id="xml-declaration"
        ),
        pytest.param(WRONG_CHARSET.encode("utf-16"), "café", id="utf16-bom"),
        pytest.param(
            '<?xml version="1.0" encoding="utf-8, broken > declaration"?>' + WRONG_CHARSET,
            "café",
            id="malformed-xml-declaration",
        ),
    ],
)
def test_encodings(raw: str | bytes, expected: str) -> None:
    doc = extract(raw, "https://cafe.example/", TRAFILATURA)
    assert doc.reason is None
    assert expected in doc.text


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        pytest.param(b"", "empty-page", id="empty-bytes"),
        pytest.param("  \n\t ", "empty-page", id="blank-str"),
        pytest.param(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "binary", id="pdf"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary", id="png"),
        pytest.param(bytes(range(256)) * 8, "binary", id="random-bytes"),
        pytest.param("\x01\x02\x03\x04" * 200, "binary", id="control-chars-str"),
        pytest.param(b'{"title": "not a page", "items": [1, 2, 3]}', "not-html", id="json"),
        pytest.param("just some plain text without markup", "not-html", id="plain-text"),
        pytest.param("<html><body></body></html>", "no-main-text", id="empty-body"),
    ],
)
def test_bad_input_gives_a_reason_not_an_exception(raw: str | bytes, reason: str) -> None:
    doc = extract(raw, "https://bad.example/x")
    assert (doc.reason, doc.text, doc.body) == (reason, "", [])
    assert doc.url == "https://bad.example/x"


def test_huge_page_is_refused_by_max_bytes() -> None:
    raw = page("article.html")
    doc = extract(raw, URL, ExtractOptions(engine="trafilatura", max_bytes=len(raw) - 1))
    assert doc.reason == "too-large"
    assert extract(raw, URL, ExtractOptions(engine="trafilatura", max_bytes=len(raw))).text


def test_too_many_elements_are_refused() -> None:
    raw = "<html><body>" + "<p>x</p>" * 2000 + "</body></html>"
    doc = extract(raw, None, ExtractOptions(engine="trafilatura", max_elements=1000))
    assert doc.reason == "too-large"


@pytest.mark.parametrize("before", ["", "<article><p>" + "intro text here " * 20 + "</p>"])
def test_deep_nesting_finishes_quickly(before: str) -> None:
    depth = 200_000
    raw = f"<html><body>{before}" + "<div>" * depth + "<p>" + "deep text " * 30 + "</p>"
    started = time.monotonic()
    doc = extract(raw, "https://deep.example/", TRAFILATURA)
    assert time.monotonic() - started < 20
    # The parser stops nesting at its depth limit: text before the deep part survives,
    # text inside it may be cut, and either way the outcome says so.
    if before:
        assert doc.reason is None and doc.text.startswith("intro text here")
    else:
        assert ("deep text" in doc.text) != (doc.reason == "no-main-text")


@pytest.mark.parametrize(
    ("html", "url", "options", "message"),
    [
        (None, None, None, "page as str or bytes, not NoneType"),
        (42, None, None, "page as str or bytes, not int"),
        (["<p>x</p>"], None, None, "page as str or bytes, not list"),
        ("<p>x</p>", 42, None, "url as str or None, not int"),
        ("<p>x</p>", None, {"engine": "auto"}, "options as ExtractOptions or None, not dict"),
    ],
)
def test_wrong_argument_types_raise_type_error(
    html: object, url: object, options: object, message: str
) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        extract(html, url, options)  # type: ignore[arg-type]


def test_bytearray_is_read_like_bytes() -> None:
    html = b"<html><body><article><p>" + b"word " * 50 + b"</p></article></body></html>"
    assert extract(bytearray(html)).text == extract(html).text


def test_extract_page_decodes_bytes_with_a_known_encoding_as_scrapy_does() -> None:
    # The crawl sends the body with Scrapy's response.encoding; the worker's text must be
    # response.text, even where extract()'s own sniffing would guess otherwise.
    words = "Утренний чай в старом городе собирает соседей каждое воскресенье. " * 3
    body = f"<html><body><article><p>{words}</p></article></body></html>".encode("koi8-r")
    response = HtmlResponse(
        "https://cafe.example/", body=body, headers={"Content-Type": "text/html; charset=koi8-r"}
    )
    known = extract_page(body, "https://cafe.example/", TRAFILATURA, encoding=response.encoding)
    assert known.doc.reason is None and "чай" in known.doc.text
    assert extract(response.text, "https://cafe.example/", TRAFILATURA).text == known.doc.text
    sniffed = extract_page(body, "https://cafe.example/", TRAFILATURA)
    assert "чай" not in sniffed.doc.text


def test_extract_page_rejects_an_encoding_that_is_not_a_string() -> None:
    with pytest.raises(TypeError, match="encoding"):
        extract_page(b"<p>x</p>", None, None, True, b"utf-8")  # type: ignore[arg-type]


@pytest.mark.parametrize("encoding", ["base64", "no-such-charset"])
def test_extract_page_sniffs_bytes_whose_encoding_is_no_text_encoding(encoding: str) -> None:
    body = WRONG_CHARSET.encode("cp1252")
    result = extract_page(body, "https://cafe.example/", TRAFILATURA, encoding=encoding)
    assert result.doc.reason is None and "café" in result.doc.text
