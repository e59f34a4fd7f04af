"""A rendered page's caps in a crawl, with the real Chromium: a response that would pass the
page's byte allowance is stopped as it arrives (at its Content-Length, or without one as its
bytes come), and the page's requests past RENDER_MAX_REQUESTS go nowhere; each counted, and
the page keeps the text it got."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.crawl import NO_WAITS, run_crawl
from tests.js_site import ARTICLES, article_html, needs_browser, serve_js_site, shell
from tests.sites import Route, StreamedRoute

#: The page's byte allowance in this test (RENDER_MAX_BYTES).
ALLOWED = 1024 * 1024
#: A response streamed without a Content-Length, far past the allowance.
STREAMED = 64 * 1024 * 1024
#: Requests the page fires, and those it may make (RENDER_MAX_REQUESTS).
FIRED, MAY_MAKE = 30, 5


def _limits_routes(base: str) -> dict[str, Route]:
    big, many = ARTICLES[0], ARTICLES[1]
    # After two responses too big to take, the article itself (small) still comes.
    fetches = (
        "const root = document.getElementById('root');"
        "fetch('/huge.bin').catch(() => 0)"
        ".finally(() => fetch('/declared.bin').catch(() => 0))"
        ".finally(() => fetch('/api/big.json').then(r => r.json())"
        ".then(d => { root.innerHTML = d.html; }));"
    )
    burst = (
        f"for (let i = 0; i < {FIRED}; i++) fetch('/api/item-' + i + '.json').catch(() => 0);"
        f"document.getElementById('root').innerHTML = {json.dumps(article_html(many))};"
    )
    routes: dict[str, Route] = {
        "/robots.txt": Route(
            f"User-agent: *\nSitemap: {base}/sitemap.xml\n".encode(), "text/plain"
        ),
        "/big.html": Route(shell(big.title, f"<div id='root'></div><script>{fetches}</script>")),
        "/huge.bin": StreamedRoute(b"x" * 65536, "application/octet-stream", size=STREAMED),
        "/declared.bin": Route(b"x" * (3 * ALLOWED), "application/octet-stream"),
        "/api/big.json": Route(
            json.dumps({"html": article_html(big)}).encode(), "application/json"
        ),
        "/many.html": Route(shell(many.title, f"<div id='root'></div><script>{burst}</script>")),
    }
    listed = "".join(f"<url><loc>{base}{path}</loc></url>" for path in ("/big.html", "/many.html"))
    routes["/sitemap.xml"] = Route(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{listed}</urlset>'.encode(),
        "application/xml",
    )
    return routes


@pytest.mark.slow
@needs_browser
def test_bytes_and_requests_past_a_pages_caps_are_stopped_and_counted(tmp_path: Path) -> None:
    with serve_js_site() as js_site:
        server = js_site.site
        assert server.site is not None
        base = server.base_url
        server.site.routes = _limits_routes(base)
        settings = {
            **NO_WAITS,
            "RENDER_MAX_BYTES": str(ALLOWED),
            "RENDER_MAX_REQUESTS": str(MAY_MAKE),
        }
        result = run_crawl("sitemap", tmp_path, {"domain": base}, settings)
        paths = server.paths()
        streamed = dict(server.streamed)
    assert result.returncode == 0, result.log[-3000:]
    items = {item["url"].removeprefix(base): item for item in result.items}
    assert set(items) == {"/big.html", "/many.html"}
    for path, article in (("/big.html", ARTICLES[0]), ("/many.html", ARTICLES[1])):
        assert items[path]["text_source"] == "rendered"
        assert article.paragraphs[-1] in items[path]["text"], path
    stats = result.stats
    # Both big responses stopped: one at its Content-Length, before its body; the other,
    # which had none, once its bytes passed the allowance, far short of its size.
    assert stats["render/blocked/too_many_bytes"] == 2
    assert f"Expected to receive {3 * ALLOWED} bytes" in result.log
    assert "Received" in result.log and "/huge.bin" in result.log
    assert 0 < streamed["/huge.bin"] < STREAMED / 4, streamed
    # The burst: the first MAY_MAKE went out, the rest were refused.
    assert sum(1 for p in paths if p.startswith("/api/item-")) == MAY_MAKE
    assert stats["render/blocked/too_many_requests"] == FIRED - MAY_MAKE
