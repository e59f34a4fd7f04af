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
