"""Pages that need JavaScript told apart from pages without text, and the text they ship as
data read without a browser (issue 46): ``render.marks``, ``render.embedded``,
``render.json_text`` through ``extract()``, hostile JSON, the browser's request policy and
``maintext extract``'s words. The crawls are in tests/test_render_crawl.py."""

from __future__ import annotations

import json
from pathlib import Path

import lxml.html
import pytest
from scrapy_maintext.extraction import extract
from scrapy_maintext.render import embedded as embedded_module
from scrapy_maintext.render.embedded import embedded_text
from scrapy_maintext.render.json_text import MAX_NODES, best_body
from scrapy_maintext.render.marks import THIN_TEXT, script_marks
from scrapy_maintext.render.policy import Blocked, PagePolicy

from tests.js_site import PAGES, _routes, article_html, shell
from tests.test_cli import maintext

URL = "http://127.0.0.1:8000"
ROUTES = _routes(URL, "http://127.0.0.2:9000")


def page(path: str) -> bytes:
    return ROUTES[path].body


def test_script_built_pages_need_javascript_and_a_server_page_does_not() -> None:
    for path in ("/inline.html", "/fetched.html", "/late.html", "/calls.html", "/forever.html"):
        doc = extract(page(path), URL + path)
        # Its shell's words (a header, a footer) at most; the crawl drops them unrendered.
        assert doc.needs_javascript and len(doc.text) < THIN_TEXT, path
        assert doc.reason in (None, "needs-javascript")
    served = extract(page("/server.html"), URL + "/server.html")
    assert not served.needs_javascript and served.text_source == "html"
    assert PAGES["/server.html"].paragraphs[0] in served.text
    # A page with no text and no scripts is a page without text, as before.
    empty = extract(b"<html><body><div id='main'></div></body></html>", URL + "/empty.html")
    assert empty.reason == "no-main-text" and not empty.needs_javascript


def test_marks_of_a_shell() -> None:
    marks = script_marks(lxml.html.fromstring(page("/fetched.html")))
    assert marks.empty_mount and marks.noscript_asks and marks.external_scripts == 1
    # Text inside the mount point: not empty; a noscript that asks nothing: no plea.
    marks = script_marks(
        lxml.html.fromstring(
            "<div id='root'><p>Written on the server.</p></div><noscript>"
            "<img src='/pixel.gif'></noscript>"
        )
    )
    assert not marks.empty_mount and not marks.noscript_asks


@pytest.mark.parametrize(
    ("path", "source"), [("/next.html", "next-data"), ("/nuxt.html", "nuxt-data")]
)
def test_framework_data_gives_the_text_with_its_headings(path: str, source: str) -> None:
    doc = extract(page(path), URL + path)
    article = PAGES[path]
    assert doc.reason is None and doc.text_source == f"embedded:{source}"
    assert doc.extractor == "embedded" and doc.language == "en"
    kinds = [(b.kind, b.text) for b in doc.body]
    assert ("head", article.subheading) in kinds
    assert all(("p", p) in kinds for p in article.paragraphs)
    assert doc.to_dict()["text_source"] == f"embedded:{source}"
    assert doc.fingerprint


def test_hydration_state_rich_text_and_json_ld() -> None:
    words = "The council met on Tuesday to weigh the new harbour plan in full. " * 5
    rich = {
        "article": {
            "body": {
                "nodeType": "document",
                "content": [
                    {
                        "nodeType": "heading-2",
                        "content": [{"nodeType": "text", "value": "What was decided"}],
                    },
                    {"nodeType": "paragraph", "content": [{"nodeType": "text", "value": words}]},
                ],
            }
        }
    }
    html = shell(
        "Harbour",
        f"<div id='app'></div><script>window.__INITIAL_STATE__ = {json.dumps(rich)};</script>",
    )
    doc = extract(html, URL + "/state.html")
    assert doc.text_source == "embedded:hydration-state"
    assert [b.kind for b in doc.body] == ["head", "p"] and doc.body[0].level == 2
    ld = {
        "@context": "https://schema.org",
        "@graph": [{"@type": "NewsArticle", "articleBody": f"{words}\n\n## Next steps\n\n{words}"}],
    }
    html = shell(
        "Harbour",
        f"<div id='root'></div><script type='application/ld+json'>"
        f"{json.dumps(ld)}</script><script src='/app.js'></script>",
    )
    doc = extract(html, URL + "/ld.html")
    assert doc.text_source == "embedded:json-ld"
    assert [b.kind for b in doc.body] == ["p", "head", "p"]


def test_a_server_page_keeps_its_own_text_whatever_data_it_ships() -> None:
    # Data is read only for a thin, script-built page: a page with its text is left alone.
    data = {"props": {"pageProps": {"body": "Other words entirely, " * 40}}}
    html = page("/server.html").replace(
        b"</body>",
        f"<script id='__NEXT_DATA__' type='application/json'>{json.dumps(data)}"
        "</script></body>".encode(),
    )
    doc = extract(html, URL + "/server.html")
    assert doc.text_source == "html" and "Other words" not in doc.text


@pytest.mark.parametrize(
    "payload",
    [
        "[" * 200_000 + "]" * 200_000,  # deeper than json's recursion
        '{"a": ' * 50_000 + "1" + "}" * 50_000,
        "1" * 100_000,  # a number too long for int()
        "{not json",
        json.dumps([["ShallowReactive", 1], {"a": 0}, [0, 1, 2, 3]]),  # devalue pointing back
    ],
)
def test_hostile_data_is_skipped_never_raised(payload: str) -> None:
    html = shell(
        "x",
        f"<div id='__next'></div><script id='__NEXT_DATA__' "
        f"type='application/json'>{payload}</script>",
    )
    doc = extract(html, URL + "/hostile.html")
    assert doc.needs_javascript and doc.text_source == "html"


def test_data_walk_is_bounded() -> None:
    # A million values: the walk stops at MAX_NODES (the body after them is never read).
    wide = {"items": list(range(MAX_NODES * 5)), "body": "words and more words " * 30}
    assert best_body(wide) is None
    assert best_body({"body": "words and more words " * 30}) is not None
    # A script over the size limit is not parsed at all.
    big = json.dumps({"body": "w " * (embedded_module.MAX_SCRIPT_CHARS // 2 + 10)})
    tree = lxml.html.fromstring(f"<script type='application/json'>{big}</script>")
    assert embedded_text(tree) is None


def test_embedded_html_strings_keep_lists_and_quotes() -> None:
    body = article_html(PAGES["/next.html"]) + "<ul><li>First point made here</li></ul>"
    found = best_body({"content": body})
    assert found is not None
    assert ("item", "First point made here") in [(b.kind, b.text) for b in found.blocks]


def test_policy_keeps_the_page_on_its_own_site() -> None:
    policy = PagePolicy("http://127.0.0.1:8000/a.html", max_requests=2, max_bytes=100)
    check = policy.check
    assert check("http://127.0.0.1:8000/api.json", "fetch", False, True) is None
    assert check("http://127.0.0.1:8001/api.json", "fetch", False, True) == Blocked.OTHER_HOST
    assert check("http://169.254.169.254/latest/meta-data", "fetch", False, True) == "other_host"
    assert check("http://localhost:8000/api.json", "fetch", False, True) == Blocked.OTHER_HOST
    assert check("http://10.0.0.1/", "script", False, False) == Blocked.OTHER_HOST
    assert check("file:///etc/passwd", "fetch", False, True) == Blocked.SCHEME
    assert check("http://127.0.0.1:8000/b.html", "document", True, True) == Blocked.NAVIGATION
    assert check("http://127.0.0.1:8000/frame.html", "document", True, False) is None
    for kind in ("image", "media", "font", "stylesheet", "websocket", "other"):
        assert check("http://127.0.0.1:8000/x", kind, False, True) == Blocked.RESOURCE_TYPE
    assert not policy.redirect_allowed("http://127.0.0.2:8000/x")
    assert policy.take() and policy.take() and not policy.take()
    policy.spent(60)
    policy.spent(60)
    assert check("http://127.0.0.1:8000/api.json", "fetch", False, True) == "too_many_requests"
    policy.max_requests = 10
    assert check("http://127.0.0.1:8000/api.json", "fetch", False, True) == "too_many_bytes"


def test_maintext_extract_says_which_pages_need_javascript(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    for path in ("/server.html", "/inline.html", "/next.html"):
        (pages / path.strip("/")).write_bytes(page(path))
    out = tmp_path / "out.jsonl"
    proc = maintext("extract", str(pages), "--base-url", URL, "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    records = {r["url"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert records[f"{URL}/next.html"]["text_source"] == "embedded:next-data"
    assert records[f"{URL}/server.html"]["text_source"] == "html"
    summary = proc.stderr.decode().strip().splitlines()[-1]
    assert "skipped: needs-javascript 1" in summary
    assert "1 pages need JavaScript" in summary and "[render]" in summary


@pytest.mark.parametrize(
    "body",
    [
        "<div id='root'></div><script src='/static/js/main.3f2a.js'></script>",  # React (CRA)
        "<app-root></app-root><script src='main.js' type='module'></script>",  # Angular
        "<div id='app'></div><script type='module' src='/assets/index.js'></script>",  # Vue/Vite
        "<div id='___gatsby'><div id='gatsby-focus-wrapper'></div></div>"
        "<script src='/app-9f.js'></script>",  # Gatsby
        "<div id='svelte'></div><script>import('/_app/start.js')</script>",  # SvelteKit
        "<noscript>You need to enable JavaScript to run this app.</noscript>"
        "<script src='/bundle.js'></script>",
    ],
)
def test_framework_shells_need_javascript(body: str) -> None:
    doc = extract(shell("A shell", body), URL + "/shell.html")
    assert doc.needs_javascript and len(doc.text) < THIN_TEXT


def test_a_short_page_without_script_marks_is_no_shell() -> None:
    # Little text, a script for analytics beside it, no mount point: a short page.
    body = "<main><p>Office closed on Monday.</p></main><script>var _paq = [];</script>"
    doc = extract(shell("Notice", body), URL + "/notice.html")
    assert not doc.needs_javascript
