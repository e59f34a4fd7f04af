"""Hostile pages and servers in a real crawl: nothing good is lost, nothing hangs."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse
from scrapy_maintext.demo.content import Article, make_articles

from tests.crawl import NO_WAITS, run_crawl
from tests.redis_server import RedisServer
from tests.sites import Route, SiteOptions, TestSiteServer, page_html
from tests.state_backends import redis_client, redis_server_fixture  # noqa: F401 (fixture)

#: Articles of their own (the site's would be near-duplicates of these pages).
UTF16_ARTICLES = make_articles(3, seed=16)
SETTINGS = {"DOWNLOAD_DELAY": "0.05", "EXTRACT_WORKERS": "1", "DOWNLOAD_TIMEOUT": "5"}
#: Without waits between requests, where the order of the pages is not the subject.
QUICK = {**SETTINGS, **NO_WAITS}


def _list_in_sitemap(server: TestSiteServer, *paths: str) -> None:
    assert server.site is not None
    listed = server.site.routes["/sitemaps/pages.txt"].body.decode()
    listed += "".join(f"{server.base_url}{path}\n" for path in paths)
    server.site.routes["/sitemaps/pages.txt"] = Route(listed.encode(), "text/plain")


@pytest.fixture(scope="module")
def utf16_site() -> Iterator[TestSiteServer]:
    """Two articles served as UTF-16: with a BOM, and by declared charset only."""
    with TestSiteServer(SiteOptions(articles=3, feeds=False, crawl_delay=None)) as server:
        site = server.site
        assert site is not None
        first, second, third = UTF16_ARTICLES
        with_bom = page_html(first, [second]).replace('<meta charset="utf-8">', "")
        site.routes["/bom.html"] = Route(
            codecs.BOM_UTF16_LE + with_bom.encode("utf-16-le"), "text/html; charset=utf-16"
        )
        declared = page_html(second, [third]).replace('<meta charset="utf-8">', "")
        site.routes["/declared.html"] = Route(
            declared.encode("utf-16-le"), "text/html; charset=utf-16le"
        )
        _list_in_sitemap(server, "/bom.html", "/declared.html")
        yield server


def test_utf16_pages_are_extracted(utf16_site: TestSiteServer, tmp_path: Path) -> None:
    result = run_crawl("sitemap", tmp_path, {"domain": utf16_site.base_url}, QUICK)
    assert result.returncode == 0, result.log[-3000:]
    by_path = {item["url"].removeprefix(utf16_site.base_url): item for item in result.items}
    assert UTF16_ARTICLES[0].paragraphs[0] in by_path["/bom.html"]["text"]
    assert UTF16_ARTICLES[1].paragraphs[0] in by_path["/declared.html"]["text"]
    assert not result.stats.get("discovery/skipped/non_html")


#: Articles of the encodings site.
CODED_ARTICLES = make_articles(6, seed=1252)
#: Words Windows-1252 and ISO-8859-1 write in bytes that are not UTF-8.
ACCENTED = "Caf\u00e9 cr\u00e8me, na\u00efve fa\u00e7ade, \u00e0 la carte, 5\u20ac."


def _accented(article: Article) -> str:
    html = page_html(article, []).replace('<meta charset="utf-8">', "")
    return html.replace("</h1>", f"</h1><p>{ACCENTED}</p>", 1)


@pytest.fixture(scope="module")
def encodings_site() -> Iterator[TestSiteServer]:
    """Pages decoded by header charset, by <meta> charset and by guess; a meta refresh;
    pages that declare codecs which decode no text (base64, hex)."""
    with TestSiteServer(SiteOptions(articles=3, feeds=False, crawl_delay=None)) as server:
        site = server.site
        assert site is not None
        header, meta, guessed, target, base64, hexed = CODED_ARTICLES
        site.routes["/header.html"] = Route(
            _accented(header).encode("cp1252"), "text/html; charset=windows-1252"
        )
        with_meta = _accented(meta).replace("<head>", '<head><meta charset="iso-8859-15">')
        site.routes["/meta.html"] = Route(with_meta.encode("iso-8859-15"), "text/html")
        site.routes["/guessed.html"] = Route(_accented(guessed).encode("cp1252"), "text/html")
        site.routes["/target.html"] = Route(page_html(target, []).encode())
        refresh = '<meta http-equiv="Refresh" content="0; url=/target.html">'
        site.routes["/refresh.html"] = Route(
            f"<html><head>{refresh}</head><body><p>Moved.</p></body></html>".encode()
        )
        site.routes["/base64.html"] = Route(_accented(base64).encode(), "text/html; charset=base64")
        with_hex = _accented(hexed).replace("<head>", '<head><meta charset="hex">')
        site.routes["/hex.html"] = Route(with_hex.encode("cp1252"), "text/html")
        pages = ("/header.html", "/meta.html", "/guessed.html", "/refresh.html")
        _list_in_sitemap(server, *pages, "/base64.html", "/hex.html")
        yield server


def test_bodies_are_decoded_as_scrapy_decodes_them(
    encodings_site: TestSiteServer, tmp_path: Path
) -> None:
    # Items carry the body as bytes with Scrapy's response.encoding; the extraction worker
    # decodes it, and the text is what response.text would have given.
    result = run_crawl("sitemap", tmp_path, {"domain": encodings_site.base_url}, QUICK)
    assert result.returncode == 0, result.log[-3000:]
    by_path = {item["url"].removeprefix(encodings_site.base_url): item for item in result.items}
    assert by_path["/header.html"]["encoding"] == "cp1252"
    assert by_path["/meta.html"]["encoding"] == "iso8859-15"
    for path in ("/header.html", "/meta.html"):
        assert ACCENTED in by_path[path]["text"], (path, by_path[path]["encoding"])
        assert "html" not in by_path[path]
    # Undeclared: Scrapy guesses (charset_normalizer may take it for another code page);
    # the text is decoded with its guess, as response.text is.
    guessed = by_path["/guessed.html"]
    body = encodings_site.site.routes["/guessed.html"].body  # type: ignore[union-attr]
    response = HtmlResponse(guessed["url"], body=body, headers={"Content-Type": "text/html"})
    assert guessed["encoding"] == response.encoding
    assert ACCENTED.encode("cp1252").decode(response.encoding) in guessed["text"]
    # The meta refresh is followed (HeadMetaRefreshMiddleware hands it to Scrapy's code).
    moved = by_path["/refresh.html"]
    assert moved["final_url"] == encodings_site.base_url + "/target.html"
    assert CODED_ARTICLES[3].paragraphs[0] in moved["text"]
    assert "/target.html" not in by_path
    # A codec that decodes no text is replaced by the body's sniffed encoding, not fatal.
    assert by_path["/base64.html"]["encoding"] == "utf-8"
    assert by_path["/hex.html"]["encoding"] == "cp1252"
    for path in ("/base64.html", "/hex.html"):
        assert ACCENTED in by_path[path]["text"], path
    assert result.stats.get("discovery/charset_repaired") == 2
    assert "discovery/page_errors/LookupError" not in result.stats


@pytest.fixture
def huge_robots_site() -> Iterator[TestSiteServer]:
    """robots.txt of 5 MB: the usual rules, padding, then a rule beyond 500 KiB."""
    with TestSiteServer(SiteOptions(articles=3, feeds=False, crawl_delay=None)) as server:
        site = server.site
        assert site is not None
        padding = b"# " + b"x" * 98 + b"\n"
        body = site.routes["/robots.txt"].body + padding * 50_000 + b"Disallow: /articles/\n"
        site.routes["/robots.txt"] = Route(body, "text/plain")
        yield server


def test_robots_txt_is_read_up_to_500_kib(huge_robots_site: TestSiteServer, tmp_path: Path) -> None:
    site = huge_robots_site.site
    assert site is not None
    settings = {**QUICK, "EXTRACT_ENABLED": "False"}
    result = run_crawl("sitemap", tmp_path, {"domain": huge_robots_site.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats.get("politeness/robots_truncated") == 1
    # The rule past the cap is ignored; those before it (and its Sitemap line) hold.
    assert set(result.paths(huge_robots_site.base_url)) == site.expected_pages
    assert "/private/drafts.html" not in huge_robots_site.paths()


@pytest.fixture
def redirecting_site() -> Iterator[TestSiteServer]:
    """A redirect loop, and a listed page redirecting to another listed page."""
    with TestSiteServer(SiteOptions(articles=3, feeds=False, crawl_delay=None)) as server:
        site = server.site
        assert site is not None
        site.routes["/loop-a.html"] = Route(b"", status=302, headers={"Location": "/loop-b.html"})
        site.routes["/loop-b.html"] = Route(b"", status=302, headers={"Location": "/loop-a.html"})
        first = f"/articles/{site.articles[0].slug}.html"
        site.routes["/moved.html"] = Route(b"", status=301, headers={"Location": first})
        # Listed after the article, so the article is requested first.
        _list_in_sitemap(server, "/loop-a.html", "/moved.html")
        yield server


def test_redirects_to_seen_urls_are_counted(
    redirecting_site: TestSiteServer, tmp_path: Path
) -> None:
    settings = {**QUICK, "EXTRACT_ENABLED": "False"}
    result = run_crawl("sitemap", tmp_path, {"domain": redirecting_site.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats.get("discovery/page_errors/redirect_loop") == 1
    assert result.stats.get("discovery/page_errors/redirect_to_seen") == 1
    assert "/loop-a.html not fetched: redirect_loop" in result.log


def test_redirects_to_seen_urls_are_counted_in_a_shared_crawl(
    redirecting_site: TestSiteServer, tmp_path: Path, redis_server: RedisServer
) -> None:
    """With ``REDIS_URL`` the shared queue's duplicate filter refuses the redirect to a page
    already requested (the queue's pushes of one engine tick go together): dropped as Scrapy
    drops a request its scheduler refuses, and counted the same."""
    redis_client(redis_server).flushall()
    settings = {**QUICK, "EXTRACT_ENABLED": "False", "REDIS_URL": redis_server.url}
    result = run_crawl("sitemap", tmp_path, {"domain": redirecting_site.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    assert result.stats.get("discovery/page_errors/redirect_loop") == 1
    assert result.stats.get("discovery/page_errors/redirect_to_seen") == 1


#: Pages of the stalling site that never answer in time, and how long they hold back.
STALLING_PAGES = 6
STALL_DELAY = 3.0


@pytest.fixture
def stalling_site() -> Iterator[TestSiteServer]:
    """Three articles, then six pages that answer only after the download timeout."""
    with TestSiteServer(SiteOptions(articles=3, feeds=False, crawl_delay=None)) as server:
        assert server.site is not None
        paths = [f"/stall-{i}.html" for i in range(STALLING_PAGES)]
        for path in paths:
            server.site.routes[path] = Route(b"<p>late</p>", delay=STALL_DELAY)
        _list_in_sitemap(server, *paths)
        yield server
        server.reset(idle_timeout=STALL_DELAY + 1)


@pytest.mark.slow
def test_stalled_site_is_given_up_after_its_budget(
    stalling_site: TestSiteServer, tmp_path: Path
) -> None:
    site = stalling_site.site
    assert site is not None
    # Each timeout costs 1 s: the budget is spent by the third.
    settings = {**SETTINGS, "EXTRACT_ENABLED": "False", "DOWNLOAD_TIMEOUT": "1"}
    result = run_crawl(
        "sitemap", tmp_path, {"domain": stalling_site.base_url}, {**settings, "STALL_BUDGET": "3"}
    )
    assert result.returncode == 0, result.log[-3000:]
    # The articles came first (newest first) and were fetched.
    assert {f"/articles/{a.slug}.html" for a in site.articles} <= set(
        result.paths(stalling_site.base_url)
    )
    # Without the budget: 6 pages x 3 attempts of 1 s. With it: three timeouts (the first
    # page and its two retries), then no retries, and the waiting pages end quickly.
    assert result.stats.get("retry/count") == 2
    assert result.stats.get("politeness/stalled") == 3
    assert result.stats.get("politeness/stalled_sites") == 1
    errors = result.stats.get("discovery/page_errors/timeout", 0)
    assert errors + result.stats.get("discovery/page_errors/site_stalled", 0) == STALLING_PAGES
    assert result.log.count("STALL_BUDGET") == 1


def test_kept_html_is_exported_as_text(encodings_site: TestSiteServer, tmp_path: Path) -> None:
    settings = {**QUICK, "EXTRACT_KEEP_HTML": "True"}
    result = run_crawl("sitemap", tmp_path, {"domain": encodings_site.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    by_path = {item["url"].removeprefix(encodings_site.base_url): item for item in result.items}
    kept = by_path["/header.html"]["html"]
    assert isinstance(kept, str) and ACCENTED in kept
