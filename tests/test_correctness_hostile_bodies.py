"""Bodies an outside hostile-server suite found lost: UTF-16 without a BOM or declared as
UTF-8, a stray NUL byte before ``<html>``; a child sitemap inside a ``<urlset>``; bad bytes
before a JSON Feed's URL. Checked on the crawl's own page test and in real crawls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.http import Headers, Response
from scrapy.responsetypes import responsetypes
from scrapy_maintext.demo.content import Article, make_articles
from scrapy_maintext.spiders.pages import is_html_response

from tests.crawl import NO_WAITS, CrawlResult, run_crawl
from tests.sites import Route, SiteOptions, TestSiteServer, page_html

#: Articles of their own (the site's would be near-duplicates of these pages).
ARTICLES = make_articles(8, seed=1616)
QUICK = {"EXTRACT_WORKERS": "1", "DOWNLOAD_TIMEOUT": "5", **NO_WAITS}
ARTICLE = page_html(ARTICLES[0], [])
ASCII_ARTICLE = "<html><head><title>T</title></head><body><p>Plain words.</p></body></html>"


def _response(content_type: str, body: bytes, url: str = "http://a.test/page") -> Response:
    """The response Scrapy's download handler builds (its class by headers, URL and body)."""
    headers = Headers({"Content-Type": content_type})
    cls = responsetypes.from_args(headers=headers, url=url, body=body)
    return cls(url, headers=headers, body=body)


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html; charset=utf-16", ARTICLE.encode("utf-16-le")),
        ("text/html; charset=utf-8", ARTICLE.encode("utf-16-le")),
        ("text/html; charset=utf-8", ARTICLE.encode("utf-16-be")),
        ("text/html; charset=utf-8", ARTICLE.encode("utf-16")),
        ("text/html", ASCII_ARTICLE.encode("utf-16-le")),
        ("text/html; charset=utf-8", b"\x00" + ARTICLE.encode()),
        ("text/html", b"\x00" + ARTICLE.encode()),
        ("text/html", ARTICLE.encode().replace(b"<p>", b"<p>\x00", 3)),
    ],
    ids=[
        "utf16le-declared-utf16",
        "utf16le-as-utf8",
        "utf16be-as-utf8",
        "utf16-bom-as-utf8",
        "utf16le-undeclared",
        "leading-nul",
        "leading-nul-undeclared",
        "stray-nuls",
    ],
)
def test_text_pages_with_nul_bytes_are_html(content_type: str, body: bytes) -> None:
    assert is_html_response(_response(content_type, body))


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/html", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8),
        ("text/html", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + ARTICLE.encode()),
        ("text/html", b"<html>" + b"\x00" * 64 + ARTICLE.encode()),
        ("text/html; charset=utf-8", bytes(range(256)) * 16),
        ("image/png", ARTICLE.encode()),
    ],
    ids=["png", "pdf", "many-nuls", "all-bytes", "image-type"],
)
def test_binary_bodies_are_no_html(content_type: str, body: bytes) -> None:
    assert not is_html_response(_response(content_type, body))


def _without_meta(article: Article) -> str:
    return page_html(article, []).replace('<meta charset="utf-8">', "")


#: Hostile bodies of the fixture site: path -> (article index, content type, body maker).
HOSTILE_BODIES = {
    "/utf16-declared.html": (0, "text/html; charset=utf-16", "utf-16-le"),
    "/utf16-as-utf8.html": (1, "text/html; charset=utf-8", "utf-16-le"),
    "/utf16be-as-utf8.html": (2, "text/html; charset=utf-8", "utf-16-be"),
    "/utf16-bom-as-utf8.html": (3, "text/html; charset=utf-8", "utf-16"),
    "/leading-nul.html": (4, "text/html; charset=utf-8", "nul"),
    "/leading-nul-undeclared.html": (5, "text/html", "nul"),
}


def _body(article: Article, how: str) -> bytes:
    if how == "nul":
        return b"\x00" + page_html(article, []).encode()
    return _without_meta(article).encode(how)


@pytest.fixture(scope="module")
def hostile_bodies_site() -> Iterator[TestSiteServer]:
    """Pages in UTF-16 without a BOM or declared as UTF-8, pages with a leading NUL byte and
    a binary one, listed in a text sitemap; a child sitemap referenced from a ``<urlset>``."""
    with TestSiteServer(SiteOptions(articles=3, feeds=False, crawl_delay=None)) as server:
        site, base = server.site, server.base_url
        assert site is not None
        for path, (index, content_type, how) in HOSTILE_BODIES.items():
            site.routes[path] = Route(_body(ARTICLES[index], how), content_type)
        site.routes["/binary.html"] = Route(b"<html>" + b"\x00" * 512, "text/html")
        listed = site.routes["/sitemaps/pages.txt"].body.decode()
        listed += "".join(f"{base}{path}\n" for path in [*HOSTILE_BODIES, "/binary.html"])
        site.routes["/sitemaps/pages.txt"] = Route(listed.encode(), "text/plain")
        # The news sitemap (a <urlset>) also names a child sitemap, which lists one page.
        news = site.routes["/sitemaps/news.xml"]
        child = f"<sitemap><loc>{base}/sitemaps/child.xml</loc></sitemap></urlset>"
        news.body = news.body.replace(b"</urlset>", child.encode())
        site.routes["/sitemaps/child.xml"] = Route(
            b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>'
            + f"{base}/from-child.html".encode()
            + b"</loc></url></urlset>",
            "application/xml",
        )
        site.routes["/from-child.html"] = Route(page_html(ARTICLES[6], []).encode())
        yield server


@pytest.fixture(scope="module")
def hostile_bodies_crawl(
    hostile_bodies_site: TestSiteServer, tmp_path_factory: pytest.TempPathFactory
) -> CrawlResult:
    out = tmp_path_factory.mktemp("hostile-bodies")
    result = run_crawl("sitemap", out, {"domain": hostile_bodies_site.base_url}, QUICK)
    assert result.returncode == 0, result.log[-3000:]
    return result


def test_utf16_and_nul_byte_pages_are_extracted(
    hostile_bodies_site: TestSiteServer, hostile_bodies_crawl: CrawlResult
) -> None:
    base = hostile_bodies_site.base_url
    by_path = {item["url"].removeprefix(base): item for item in hostile_bodies_crawl.items}
    for path, (index, _, _) in HOSTILE_BODIES.items():
        assert path in by_path, (path, sorted(by_path))
        text = by_path[path]["text"]
        assert ARTICLES[index].paragraphs[0] in text, (path, text[:200])
        assert "\x00" not in text
    # UTF-16 without a BOM is read in the byte order it is written in, whatever it declares.
    assert by_path["/utf16-declared.html"]["encoding"] == "utf-16-le"
    assert by_path["/utf16-as-utf8.html"]["encoding"] == "utf-16-le"
    assert by_path["/utf16be-as-utf8.html"]["encoding"] == "utf-16-be"
    stats = hostile_bodies_crawl.stats
    assert stats.get("discovery/charset_repaired") == 3
    # The binary page is still skipped, and it alone.
    assert "/binary.html" not in by_path
    assert stats.get("discovery/skipped/non_html") == 1


def test_a_child_sitemap_inside_a_urlset_is_followed(
    hostile_bodies_site: TestSiteServer, hostile_bodies_crawl: CrawlResult
) -> None:
    assert "/sitemaps/child.xml" in hostile_bodies_site.paths()
    base = hostile_bodies_site.base_url
    by_path = {item["url"].removeprefix(base): item for item in hostile_bodies_crawl.items}
    assert ARTICLES[6].paragraphs[0] in by_path["/from-child.html"]["text"]
    assert by_path["/from-child.html"]["source_url"] == f"{base}/sitemaps/child.xml"


@pytest.fixture
def junk_feed_site() -> Iterator[TestSiteServer]:
    """A JSON Feed whose URLs have bad bytes before them, or inside them."""
    with TestSiteServer(SiteOptions(articles=3, feeds=False, crawl_delay=None)) as server:
        site, base = server.site, server.base_url
        assert site is not None
        for i in (0, 1):
            site.routes[f"/news/{i}.html"] = Route(page_html(ARTICLES[i], []).encode())
        items = [
            b'{"title": "junk before", "url": "\xff\xfe' + f'{base}/news/0.html"}}'.encode(),
            b'{"title": "caf\xc3", "url": "' + f'{base}/news/1.html"}}'.encode(),
            b'{"title": "junk inside", "url": "' + f'{base}/news/\xff2.html"}}'.encode("latin-1"),
        ]
        header = json.dumps({"version": "https://jsonfeed.org/version/1.1", "title": "T"})
        body = header[:-1].encode() + b', "items": [' + b",".join(items) + b"]}"
        site.routes["/feeds/feed.json"] = Route(body, "application/feed+json")
        yield server


def test_junk_before_a_json_feed_url_makes_no_wrong_url(
    junk_feed_site: TestSiteServer, tmp_path: Path
) -> None:
    base = junk_feed_site.base_url
    settings = {**QUICK, "EXTRACT_ENABLED": "False"}
    result = run_crawl("feed", tmp_path, {"url": f"{base}/feeds/feed.json"}, settings)
    assert result.returncode == 0, result.log[-3000:]
    assert sorted(result.paths(base)) == ["/news/0.html", "/news/1.html"]
    fetched = junk_feed_site.paths()
    # Neither resolved against the feed's URL ("/feeds/%EF%BF%BDhttp...") nor fetched with
    # the replacement character in it.
    assert not [p for p in fetched if "http" in p or "%EF%BF%BD" in p.upper()], fetched
