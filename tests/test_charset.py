"""CharsetRepairMiddleware and the encoding sniffing it shares with the extraction workers."""

from __future__ import annotations

import codecs

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse, Response, XmlResponse
from scrapy.utils.test import get_crawler
from scrapy_maintext.extraction.body import decode_bytes, is_text_encoding, sniffed_encoding
from scrapy_maintext.middlewares.charset import REPAIRED_STAT, CharsetRepairMiddleware

ACCENTED = "<html><body><p>Caf\u00e9 cr\u00e8me \u20ac</p></body></html>"


@pytest.fixture
def middleware() -> CharsetRepairMiddleware:
    crawler = get_crawler()
    crawler.stats.open_spider()  # type: ignore[union-attr]
    return CharsetRepairMiddleware.from_crawler(crawler)


def _answer(mw: CharsetRepairMiddleware, response: Response) -> Response:
    return mw.process_response(Request(response.url), response)


@pytest.mark.parametrize(
    ("content_type", "body", "encoding"),
    [
        ("text/html; charset=base64", ACCENTED.encode(), "utf-8"),
        ("text/html; charset=zlib", ACCENTED.encode("cp1252"), "cp1252"),
        ("text/html; charset=idna", ACCENTED.encode("cp1252"), "cp1252"),
        ("text/html; charset=punycode", ACCENTED.encode(), "utf-8"),
        (
            "text/html",
            ACCENTED.replace("<html>", '<html><head><meta charset="hex"></head>').encode(),
            "utf-8",
        ),
    ],
)
def test_a_codec_that_decodes_no_text_is_replaced(
    middleware: CharsetRepairMiddleware, content_type: str, body: bytes, encoding: str
) -> None:
    response = HtmlResponse("http://a.test/", body=body, headers={"Content-Type": content_type})
    with pytest.raises((LookupError, UnicodeError)):
        _ = response.text
    repaired = _answer(middleware, response)
    assert isinstance(repaired, HtmlResponse)
    assert repaired.encoding == encoding
    assert "Caf\u00e9 cr\u00e8me \u20ac" in repaired.text
    assert repaired.headers == response.headers and repaired.body == response.body
    assert middleware.crawler.stats.get_value(REPAIRED_STAT) == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "response",
    [
        HtmlResponse("http://a.test/", body=b"<p>x</p>", headers={"Content-Type": "text/html"}),
        HtmlResponse("http://a.test/", body=b"<p>x</p>", headers={"Content-Type": "charset=nope"}),
        HtmlResponse(
            "http://a.test/", body=b"\xe9", headers={"Content-Type": "text/html; charset=cp1252"}
        ),
        # A BOM wins over the declared codec, in Scrapy as here.
        HtmlResponse(
            "http://a.test/",
            body=codecs.BOM_UTF16_LE + ACCENTED.encode("utf-16-le"),
            headers={"Content-Type": "text/html; charset=rot13"},
        ),
        XmlResponse("http://a.test/s.xml", body=b'<?xml version="1.0" encoding="utf-8"?><u/>'),
        Response("http://a.test/x.bin", body=b"\x00\x01", headers={"Content-Type": "x/base64"}),
    ],
)
def test_other_responses_pass_untouched(
    middleware: CharsetRepairMiddleware, response: Response
) -> None:
    assert _answer(middleware, response) is response
    assert middleware.crawler.stats.get_value(REPAIRED_STAT) is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("body", "encoding", "text"),
    [
        (codecs.BOM_UTF8 + "\u00e9".encode(), "utf-8-sig", "\u00e9"),
        (codecs.BOM_UTF16_BE + "\u00e9".encode("utf-16-be"), "utf-16", "\u00e9"),
        ("\u00e9\u20ac".encode(), "utf-8", "\u00e9\u20ac"),
        (b'<meta charset="koi8-r">\xd6', "koi8-r", '<meta charset="koi8-r">\u0436'),
        (b'<meta charset="base64">\xe9', "cp1252", '<meta charset="base64">\u00e9'),
        (b'<meta charset="idna">\xe9\x81', "cp1252", '<meta charset="idna">\u00e9\ufffd'),
        (b"\xe9\x80", "cp1252", "\u00e9\u20ac"),
    ],
)
def test_sniffed_encoding(body: bytes, encoding: str, text: str) -> None:
    assert sniffed_encoding(body) == encoding
    assert decode_bytes(body) == text


def test_an_explicit_encoding_wins(middleware: CharsetRepairMiddleware) -> None:
    # Scrapy puts an encoding given to the response first (its private ``_encoding``, read
    # by the middleware: this pins it).
    headers = {"Content-Type": "text/html; charset=base64"}
    body = "\u0436".encode("cp1251")
    response = HtmlResponse("http://a.test/", body=body, headers=headers, encoding="cp1251")
    assert response.text == "\u0436"
    assert _answer(middleware, response) is response


def test_is_text_encoding() -> None:
    assert is_text_encoding("cp1252") and is_text_encoding("utf-16")
    assert not any(map(is_text_encoding, ("base64", "hex", "zlib", "rot13", "no-such")))
    assert not is_text_encoding("idna") and not is_text_encoding("punycode")


UTF16_PAGE = (
    "<html><head><title>T</title></head><body><p>Caf\u00e9 cr\u00e8me \u20ac</p></body></html>"
)
ASCII_UTF16_PAGE = "<html><head><title>T</title></head><body><p>Plain words.</p></body></html>"


@pytest.mark.parametrize(
    ("content_type", "body", "encoding"),
    [
        # Little-endian without a BOM declared as "utf-16", which w3lib reads big-endian.
        ("text/html; charset=utf-16", UTF16_PAGE.encode("utf-16-le"), "utf-16-le"),
        # UTF-16 declared as UTF-8 (by the header or a <meta>), or not declared at all.
        ("text/html; charset=utf-8", UTF16_PAGE.encode("utf-16-le"), "utf-16-le"),
        ("text/html; charset=utf-8", UTF16_PAGE.encode("utf-16-be"), "utf-16-be"),
        # Undeclared: Scrapy's guess takes UTF-16 whose every byte is ASCII (English or
        # Cyrillic text) for ASCII, NUL bytes and all. (A <meta> in UTF-16 goes unread.)
        (
            "text/html",
            ASCII_UTF16_PAGE.replace("<head>", '<head><meta charset="utf-8">').encode("utf-16-le"),
            "utf-16-le",
        ),
        ("text/html", ASCII_UTF16_PAGE.encode("utf-16-be"), "utf-16-be"),
        (
            "text/html",
            ASCII_UTF16_PAGE.replace("Plain", "\u0416\u0443\u0440").encode("utf-16-le"),
            "utf-16-le",
        ),
    ],
)
def test_utf16_without_a_bom_is_read_in_its_byte_order(
    middleware: CharsetRepairMiddleware, content_type: str, body: bytes, encoding: str
) -> None:
    from scrapy_maintext.spiders.pages import is_html_response

    response = HtmlResponse("http://a.test/", body=body, headers={"Content-Type": content_type})
    text = body.decode(encoding)
    assert response.text != text
    repaired = _answer(middleware, response)
    assert isinstance(repaired, HtmlResponse)
    assert repaired.encoding == encoding
    assert repaired.text == text
    assert is_html_response(repaired) and is_html_response(response)
    assert middleware.crawler.stats.get_value(REPAIRED_STAT) == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html; charset=utf-16le", UTF16_PAGE.encode("utf-16-le")),
        ("text/html; charset=UTF-16BE", UTF16_PAGE.encode("utf-16-be")),
        # Without a BOM, "utf-16" is big-endian (RFC 2781), as w3lib decodes it.
        ("text/html; charset=utf-16", UTF16_PAGE.encode("utf-16-be")),
        # With a BOM Scrapy reads it right, whatever the charset says.
        ("text/html; charset=utf-8", UTF16_PAGE.encode("utf-16")),
    ],
)
def test_utf16_read_right_already_passes_untouched(
    middleware: CharsetRepairMiddleware, content_type: str, body: bytes
) -> None:
    response = HtmlResponse("http://a.test/", body=body, headers={"Content-Type": content_type})
    assert response.text == UTF16_PAGE
    assert _answer(middleware, response) is response
    assert middleware.crawler.stats.get_value(REPAIRED_STAT) is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("body", "encoding"),
    [
        (UTF16_PAGE.encode("utf-16-le"), "utf-16-le"),
        (UTF16_PAGE.encode("utf-16-be"), "utf-16-be"),
        # Markup is ASCII even where the text is not.
        (UTF16_PAGE.replace("Caf", "\u0416\u0443\u0440" * 10).encode("utf-16-le"), "utf-16-le"),
    ],
)
def test_utf16_without_a_bom_sniffs_by_its_nul_bytes(body: bytes, encoding: str) -> None:
    assert sniffed_encoding(body) == encoding
    assert decode_bytes(body) == body.decode(encoding)


@pytest.mark.parametrize(
    "body",
    [
        b"\x00" + UTF16_PAGE.encode(),
        "\u0416\u0443\u0440\u043d\u0430\u043b".encode("utf-16-le") * 50,  # no ASCII at all
        b"\x00\x01\x00\x02\x00\x03" * 100,  # 16-bit numbers, not text
        "<\x00".encode("utf-32-le") * 20,
    ],
)
def test_other_bodies_with_nul_bytes_are_no_utf16(body: bytes) -> None:
    from scrapy_maintext.extraction.body import utf16_by_nuls

    assert utf16_by_nuls(body) is None
