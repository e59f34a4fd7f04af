"""HeadMetaRefreshMiddleware redirects exactly as Scrapy's MetaRefreshMiddleware does."""

from __future__ import annotations

import codecs

import pytest
from scrapy import Request
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware
from scrapy.http import HtmlResponse, Response, TextResponse
from scrapy.utils.test import get_crawler
from scrapy_maintext.middlewares.metarefresh import (
    HEAD_BYTES,
    HeadMetaRefreshMiddleware,
    ascii_safe,
    may_refresh,
)

URL = "https://example.org/a.html"
TAG = '<meta http-equiv="refresh" content="0; url=/b.html">'
PADDING = "<p>" + "caf\u00e9 " * 1000 + "</p>"


def _page(head: str = "", body: str = "<p>Text.</p>") -> str:
    return f"<html><head>{head}</head><body>{body}</body></html>"


BODIES = {
    "no tag": _page().encode(),
    "tag": _page(TAG).encode(),
    "tag in upper case": _page(TAG.upper().replace("/B.HTML", "/b.html")).encode(),
    "the word only": _page(body="<p>Press refresh to reload.</p>").encode(),
    "tag in a script": _page(f"<script>'{TAG}'</script>").encode(),
    "tag after 4096 characters": _page(body=PADDING + TAG).encode(),
    "tag in UTF-16": codecs.BOM_UTF16_LE + _page(TAG).encode("utf-16-le"),
    "tag in windows-1252": _page(TAG, PADDING).encode("cp1252"),
    # ISO-2022-JP spends escape sequences on every switch: "refresh" lies beyond 16 KiB.
    "tag in ISO-2022-JP": _page(body="a\u6f22" * 1900 + TAG).encode("iso-2022-jp"),
}
CONTENT_TYPES = {"tag in ISO-2022-JP": "text/html; charset=iso-2022-jp"}


def _outcome(result: Request | Response) -> tuple[str, str]:
    return (type(result).__name__, result.url)


@pytest.mark.parametrize("name", sorted(BODIES))
def test_same_outcome_as_scrapys(name: str) -> None:
    crawler = get_crawler(settings_dict={})
    ours = HeadMetaRefreshMiddleware.from_crawler(crawler)
    scrapys = MetaRefreshMiddleware.from_crawler(crawler)
    request = Request(URL)
    headers = {"Content-Type": CONTENT_TYPES.get(name, "text/html")}
    response = HtmlResponse(URL, body=BODIES[name], headers=headers)
    expected = scrapys.process_response(request, response)
    fresh = HtmlResponse(URL, body=BODIES[name], headers=headers)
    assert _outcome(ours.process_response(request, fresh)) == _outcome(expected)


def test_only_ascii_safe_encodings_take_the_shortcut() -> None:
    assert ascii_safe("utf-8") and ascii_safe("cp1252") and ascii_safe("gb18030")
    assert ascii_safe("shift_jis") and ascii_safe("koi8-r")
    for encoding in ("iso-2022-jp", "utf-7", "utf-16", "utf-32-le", "cp500", "base64", "nope"):
        assert not ascii_safe(encoding), encoding
    iso = BODIES["tag in ISO-2022-JP"]
    assert iso.find(b"refresh") > HEAD_BYTES  # the bytes alone would have missed it


def test_pages_without_the_word_are_passed_untouched() -> None:
    crawler = get_crawler(settings_dict={})
    middleware = HeadMetaRefreshMiddleware.from_crawler(crawler)
    response = HtmlResponse(URL, body=BODIES["no tag"], headers={"Content-Type": "text/html"})
    assert middleware.process_response(Request(URL), response) is response
    assert not may_refresh(BODIES["no tag"])


def test_the_window_holds_scrapys_4096_characters_in_any_utf8_text() -> None:
    # Characters of 4 bytes each (U+1F600 in UTF-8): "refresh" starts within the first
    # 4,096 characters, which Scrapy reads, so the check must see it too.
    text = "\U0001f600" * 4070 + TAG
    assert text.find("refresh") < 4096 <= HEAD_BYTES // 4
    assert may_refresh(text.encode())


def test_non_html_responses_go_to_scrapys_code() -> None:
    crawler = get_crawler(settings_dict={})
    middleware = HeadMetaRefreshMiddleware.from_crawler(crawler)
    response = TextResponse(URL, body=_page(TAG).encode(), headers={"Content-Type": "text/x"})
    # Scrapy follows meta refresh in HtmlResponse only; so do we.
    assert middleware.process_response(Request(URL), response) is response
