"""A site whose pages need JavaScript, of every kind issue 46 names, served on 127.0.0.1.

Beside a server-rendered article: an inline script that writes its article, a script that
fetches its article as JSON, a Next.js page whose text is only in ``__NEXT_DATA__`` (its
bundle renders nothing), a Nuxt page with its payload, a React-style shell (a bundle builds
the article element by element into ``<div id="root">``), an Angular-style shell
(``<app-root>``, a module that fetches the article and marks ``ng-version``), a page that
writes its text 1.5 s after load, a script that never ends, and a page whose script also
calls another host (a second server, :attr:`JsSite.other`), a robots.txt-Disallowed path,
loads a picture and a font, opens a window and a WebSocket and navigates away.
``benchmarks/render_cost.py`` serves it too.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from scrapy_maintext.demo.content import Article, make_articles

from tests.sites import Route, SiteOptions, TestSiteServer

#: The Chromium the render tests run (Debian's; ``.ci/run`` installs it).
BROWSER = "/usr/bin/chromium"
needs_browser = pytest.mark.skipif(not os.access(BROWSER, os.X_OK), reason="no Chromium")
ARTICLES = make_articles(10, seed=46)
#: Path -> the article whose text the page shows (with JavaScript, or in its data).
PAGES = {
    "/server.html": ARTICLES[0],
    "/inline.html": ARTICLES[1],
    "/fetched.html": ARTICLES[2],
    "/next.html": ARTICLES[3],
    "/late.html": ARTICLES[4],
    "/calls.html": ARTICLES[5],
    "/nuxt.html": ARTICLES[6],
    "/react.html": ARTICLES[8],
    "/angular.html": ARTICLES[9],
}
#: Pages with no text to be had: their script never ends.
NO_TEXT = ("/forever.html", "/spin.html")
#: Pages that only a browser can write (not the server-rendered one, not the data ones).
RENDERED = (
    "/inline.html",
    "/fetched.html",
    "/late.html",
    "/calls.html",
    "/react.html",
    "/angular.html",
)
EMBEDDED = {"/next.html": "embedded:next-data", "/nuxt.html": "embedded:nuxt-data"}
DISALLOWED = "/private/secret.json"


def article_html(article: Article) -> str:
    """The article as markup a script writes (heading, paragraphs, a subheading)."""
    half = len(article.paragraphs) // 2
    paras = [f"<p>{html.escape(p)}</p>" for p in article.paragraphs]
    return (
        f"<article><h1>{html.escape(article.title)}</h1>{''.join(paras[:half])}"
        f"<h2>{html.escape(article.subheading)}</h2>{''.join(paras[half:])}</article>"
    )


def shell(title: str, body: str, head: str = "") -> bytes:
    """A page shell: a title, a header, whatever ``body`` mounts and scripts."""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)} | Script Times</title>{head}</head><body>"
        "<header><a href='/'>Script Times</a></header>"
        f"{body}<footer>Script Times, all rights reserved</footer></body></html>"
    ).encode()


def _writes(article: Article, delay_ms: int = 0) -> str:
    code = f"document.getElementById('root').innerHTML = {json.dumps(article_html(article))};"
    if delay_ms:
        code = f"window.addEventListener('load', () => setTimeout(() => {{ {code} }}, {delay_ms}));"
    return f"<div id='root'></div><script>{code}</script>"


def _routes(base: str, other: str) -> dict[str, Route]:
    a = PAGES
    next_data = {
        "props": {
            "pageProps": {
                "post": {"title": a["/next.html"].title, "content": article_html(a["/next.html"])}
            }
        },
        "page": "/next",
    }
    nuxt = [
        ["ShallowReactive", 1],
        {"data": 2},
        {"title": 3, "body": 4},
        a["/nuxt.html"].title,
        article_html(a["/nuxt.html"]),
    ]
    calls = (
        "<div id='root'></div><img src='/img/cover.png'>"
        "<script>"
        f"fetch('{other}/track?from=calls').catch(() => 0);"
        f"fetch('{DISALLOWED}').catch(() => 0);"
        f"new Image().src = '{other}/pixel.gif';"
        f"window.open('{other}/popup.html');"
        f"try {{ new WebSocket('{other.replace('http', 'ws', 1)}/socket'); }} catch (e) {{}}"
        f"document.getElementById('root').innerHTML = {json.dumps(article_html(a['/calls.html']))};"
        "setTimeout(() => { location.href = '/elsewhere.html'; }, 100);"
        "</script>"
    )
    fetched = (
        "<div id='app'><noscript>Please enable JavaScript to read this article.</noscript>"
        "</div><script src='/static/app.js'></script>"
    )
    app_js = (
        "fetch('/api/article.json').then(r => r.json())"
        ".then(d => { document.getElementById('app').innerHTML = d.html; });"
    )
    font = "<link rel='preload' href='/fonts/serif.woff2' as='font' crossorigin>"
    routes = {
        "/robots.txt": Route(
            f"User-agent: *\nDisallow: /private/\nSitemap: {base}/sitemap.xml\n".encode(),
            "text/plain",
        ),
        "/server.html": Route(shell(a["/server.html"].title, article_html(a["/server.html"]))),
        "/inline.html": Route(shell(a["/inline.html"].title, _writes(a["/inline.html"]))),
        "/late.html": Route(shell(a["/late.html"].title, _writes(a["/late.html"], 1500))),
        "/fetched.html": Route(shell(a["/fetched.html"].title, fetched, font)),
        "/static/app.js": Route(app_js.encode(), "application/javascript"),
        "/api/article.json": Route(
            json.dumps({"html": article_html(a["/fetched.html"])}).encode(), "application/json"
        ),
        "/next.html": Route(
            shell(
                a["/next.html"].title,
                (
                    "<div id='__next'></div><script id='__NEXT_DATA__' type='application/json'>"
                    f"{json.dumps(next_data)}</script>"
                    "<script src='/_next/static/bundle.js'></script>"
                ),
            )
        ),
        "/_next/static/bundle.js": Route(b"/* renders nothing */", "application/javascript"),
        "/nuxt.html": Route(
            shell(
                a["/nuxt.html"].title,
                (
                    "<div id='__nuxt'></div><script type='application/json' id='__NUXT_DATA__'>"
                    f"{json.dumps(nuxt)}</script>"
                ),
            )
        ),
        "/forever.html": Route(
            shell("Forever", "<div id='root'></div><script>for (;;) {}</script>")
        ),
        "/calls.html": Route(shell(a["/calls.html"].title, calls)),
        # Writes its text, then spins after load: the page can no longer be read.
        "/spin.html": Route(
            shell(
                "Spin",
                _writes(ARTICLES[7]).replace(
                    "</script>", "setTimeout(() => { for (;;) {} }, 50);</script>"
                ),
            )
        ),
        **_framework_routes(a["/react.html"], a["/angular.html"]),
        DISALLOWED: Route(b'{"secret": true}', "application/json"),
        "/img/cover.png": Route(b"\x89PNG fake", "image/png"),
        "/fonts/serif.woff2": Route(b"wOF2 fake", "font/woff2"),
        "/elsewhere.html": Route(shell("Elsewhere", "<p>Navigated away.</p>")),
    }
    listed = [*PAGES, *NO_TEXT]
    urls = "".join(f"<url><loc>{base}{path}</loc></url>" for path in listed)
    routes["/sitemap.xml"] = Route(
        f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/'
        f'sitemap/0.9">{urls}</urlset>'.encode(),
        "application/xml",
    )
    return routes


def _framework_routes(react: Article, angular: Article) -> dict[str, Route]:
    """A React-style shell whose bundle holds the article and builds it node by node (as
    ``React.createElement`` does), and an Angular-style one whose module fetches it."""
    half = len(react.paragraphs) // 2
    nodes = [
        ["h1", react.title],
        *(["p", p] for p in react.paragraphs[:half]),
        ["h2", react.subheading],
        *(["p", p] for p in react.paragraphs[half:]),
    ]
    bundle = (
        f"const nodes = {json.dumps(nodes)};"
        "const root = document.getElementById('root');"
        "const article = document.createElement('article');"
        "for (const [tag, text] of nodes) {"
        " const el = document.createElement(tag); el.textContent = text; article.appendChild(el); }"
        "root.setAttribute('data-reactroot', ''); root.appendChild(article);"
    )
    module = (
        "const root = document.querySelector('app-root');"
        "root.setAttribute('ng-version', '17.3.0');"
        "fetch('/api/angular.json').then(r => r.json())"
        ".then(d => { root.innerHTML = d.html; });"
    )
    angular_body = (
        "<app-root></app-root><script src='/static/runtime.js' type='module'></script>"
        "<script src='/static/main.js' type='module'></script>"
    )
    react_body = (
        "<noscript>You need to enable JavaScript to run this app.</noscript>"
        "<div id='root'></div><script defer src='/static/js/main.chunk.js'></script>"
    )
    return {
        "/react.html": Route(shell(react.title, react_body)),
        "/static/js/main.chunk.js": Route(bundle.encode(), "application/javascript"),
        "/angular.html": Route(shell(angular.title, angular_body)),
        "/static/runtime.js": Route(b"/* the runtime */", "application/javascript"),
        "/static/main.js": Route(module.encode(), "application/javascript"),
        "/api/angular.json": Route(
            json.dumps({"html": article_html(angular)}).encode(), "application/json"
        ),
    }


@dataclass
class JsSite:
    site: TestSiteServer
    #: Another host (127.0.0.2) the pages' scripts call: it must see no request.
    other: TestSiteServer

    @property
    def base_url(self) -> str:
        return self.site.base_url


@contextmanager
def serve_js_site() -> Iterator[JsSite]:
    options = SiteOptions(articles=1, feeds=False, crawl_delay=None)
    with TestSiteServer(options, host="127.0.0.2") as other, TestSiteServer(options) as server:
        assert server.site is not None
        server.site.routes = _routes(server.base_url, other.base_url)
        yield JsSite(server, other)


#: Kinds of page on the benchmark's mixed site (``benchmarks/render_cost.py``).
MIXED_KINDS = ("server", "inline", "fetched", "next")


def mixed_routes(base: str, copies: int, seed: int) -> dict[str, Route]:
    """``copies`` pages of each of :data:`MIXED_KINDS`, each its own article, a sitemap."""
    articles = iter(make_articles(copies * len(MIXED_KINDS), seed=seed))
    routes: dict[str, Route] = {
        "/robots.txt": Route(f"User-agent: *\nSitemap: {base}/sitemap.xml\n".encode(), "text/plain")
    }
    for n in range(copies):
        server, inline, fetched, nextjs = (next(articles) for _ in MIXED_KINDS)
        routes[f"/server-{n}.html"] = Route(shell(server.title, article_html(server)))
        routes[f"/inline-{n}.html"] = Route(shell(inline.title, _writes(inline)))
        api = f"/api/{n}.json"
        routes[api] = Route(
            json.dumps({"html": article_html(fetched)}).encode(), "application/json"
        )
        script = (
            f"<div id='app'></div><script>fetch('{api}').then(r => r.json()).then(d => "
            "{ document.getElementById('app').innerHTML = d.html; });</script>"
        )
        routes[f"/fetched-{n}.html"] = Route(shell(fetched.title, script))
        data = {"props": {"pageProps": {"post": {"content": article_html(nextjs)}}}}
        shipped = (
            "<div id='__next'></div><script id='__NEXT_DATA__' type='application/json'>"
            f"{json.dumps(data)}</script>"
        )
        routes[f"/next-{n}.html"] = Route(shell(nextjs.title, shipped))
    pages = [path for path in routes if path.endswith(".html")]
    urls = "".join(f"<url><loc>{base}{path}</loc></url>" for path in pages)
    routes["/sitemap.xml"] = Route(
        '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/'
        f'sitemap/0.9">{urls}</urlset>'.encode(),
        "application/xml",
    )
    return routes
