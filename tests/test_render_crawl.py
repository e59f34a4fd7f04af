"""Crawls of a site whose pages need JavaScript (issue 46), with the real Chromium through
scrapy-playwright: every page with text exported with its text, only the pages that need it
rendered, nothing reaching another host or a robots.txt-Disallowed path, the crawl's
User-Agent on the browser's requests; without rendering, the rest counted and said."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.crawl import NO_WAITS, CrawlResult, run_crawl
from tests.js_site import (
    DISALLOWED,
    EMBEDDED,
    NO_TEXT,
    PAGES,
    RENDERED,
    JsSite,
    needs_browser,
    serve_js_site,
    shell,
)
from tests.sites import Route


@pytest.fixture
def js_site() -> Iterator[JsSite]:
    with serve_js_site() as site:
        yield site


def by_path(result: CrawlResult, base: str) -> dict[str, dict]:
    return {item["url"].removeprefix(base): item for item in result.items}


def assert_text(item: dict, path: str) -> None:
    article = PAGES[path]
    for paragraph in article.paragraphs:
        assert paragraph in item["text"], path
    assert article.subheading in item["text"], path


@pytest.mark.slow
@needs_browser
def test_default_crawl_renders_only_what_needs_it_politely(js_site: JsSite, tmp_path: Path) -> None:
    base = js_site.base_url
    warc = tmp_path / "warc"
    # Default settings: an output is all the crawl is given.
    settings = {"WARC_OUTPUT": str(warc)}
    result = run_crawl("sitemap", tmp_path, {"domain": base}, settings)
    assert result.returncode == 0, result.log[-3000:]
    items = by_path(result, base)
    assert set(items) == set(PAGES), sorted(items)
    for path in PAGES:
        assert_text(items[path], path)
    assert items["/server.html"]["text_source"] == "html"
    for path, source in EMBEDDED.items():
        assert items[path]["text_source"] == source
    for path in RENDERED:
        assert items[path]["text_source"] == "rendered", path
    stats = result.stats
    # Rendered: those that need a browser; the never-ending scripts (one before its page
    # loaded, one spinning after it wrote its text) kept their pages from answering, which
    # were closed then (RENDER_UNRESPONSIVE), not at the deadline.
    assert stats["render/pages"] == len(RENDERED)
    assert stats["render/failed/unresponsive"] == len(NO_TEXT)
    assert "render/failed/timeout" not in stats
    for path in NO_TEXT:
        assert f"(the render failed: unresponsive): {base}{path}" in result.log
    assert "politeness/stalled" not in stats  # a script's fault, not the site's
    # The browser's requests kept the site's pace: the crawl's delay (1 s) between any two.
    starts = sorted(hit.time for hit in js_site.site.hits)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    # Timed where the server reads each request: a loaded machine delays a reading by a
    # tenth of a second or more, so one gap may look short by that much; a request that
    # skipped the pace would be far shorter, and the typical gap is the delay itself.
    assert min(gaps) >= 0.75, gaps
    assert sorted(gaps)[len(gaps) // 2] >= 0.95, gaps
    assert stats["extract/dropped/needs_javascript"] == len(NO_TEXT)
    # The browser was asked nothing off the site, nothing robots.txt forbids, no picture.
    assert js_site.other.hits == []
    paths = js_site.site.paths()
    assert DISALLOWED not in paths
    assert not {"/img/cover.png", "/fonts/serif.woff2", "/elsewhere.html"} & set(paths)
    assert stats["render/blocked/other_host"] >= 2 and stats["render/blocked/robots"] == 1
    # The window and the WebSocket /calls.html opens: refused and counted.
    assert stats["render/blocked/popup"] == 1 and stats["render/blocked/websocket"] == 1
    # Each page fetched once: the browser got the body the crawl had.
    for path in (*PAGES, *NO_TEXT):
        assert paths.count(path) == 1, path
    # The browser's own requests (the script, the JSON) carry the crawl's User-Agent.
    agents = {hit.path: hit.user_agent for hit in js_site.site.hits}
    assert agents["/api/article.json"] == agents["/static/app.js"] == agents["/server.html"]
    assert agents["/api/article.json"].startswith("scrapy-maintext/")
    assert f"rendered {len(RENDERED)} in" in result.log
    # WARC: each rendered page a conversion record of the response it was rendered from.
    records = warc_records(warc)
    responses = {r["id"]: r["url"] for r in records if r["type"] == "response"}
    conversions = [r for r in records if r["type"] == "conversion"]
    assert sorted(r["url"].removeprefix(base) for r in conversions) == sorted(RENDERED)
    for record in conversions:
        assert responses[record["refers_to"]] == record["url"]
    calls = next(r for r in conversions if r["url"].endswith("/calls.html"))
    assert PAGES["/calls.html"].paragraphs[0] in calls["text"]


def warc_records(folder: Path) -> list[dict]:
    records = []
    for path in sorted(folder.glob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                headers = record.rec_headers
                records.append(
                    {
                        "type": record.rec_type,
                        "url": headers.get_header("WARC-Target-URI"),
                        "id": headers.get_header("WARC-Record-ID"),
                        "refers_to": headers.get_header("WARC-Refers-To"),
                        "text": record.content_stream().read().decode("utf-8", "replace"),
                    }
                )
    return records


#: A ``sitecustomize`` that makes the crawl process (and its extraction workers) one without
#: the render extra: neither scrapy-playwright nor Playwright can be found or imported.
WITHOUT_EXTRA = """
import sys


class NoRenderExtra:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in ("scrapy_playwright", "playwright"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoRenderExtra)
"""


@pytest.mark.parametrize("off", ["no extra", "switched off"])
def test_without_rendering_the_crawl_exports_what_it_can_and_says_the_rest(
    js_site: JsSite, tmp_path: Path, off: str
) -> None:
    base = js_site.base_url
    settings, path, why = dict(NO_WAITS), (), "RENDER_AVAILABLE=unavailable"
    if off == "no extra":
        (tmp_path / "site").mkdir()
        (tmp_path / "site" / "sitecustomize.py").write_text(WITHOUT_EXTRA)
        path, why = (tmp_path / "site",), "the render extra is not installed"
    else:
        settings["RENDER_AVAILABLE"] = "unavailable"
    result = run_crawl("sitemap", tmp_path, {"domain": base}, settings, pythonpath=path)
    assert result.returncode == 0, result.log[-3000:]
    items = by_path(result, base)
    assert set(items) == {"/server.html", *EMBEDDED}
    for path in items:
        assert_text(items[path], path)
    unrendered = len(RENDERED) + len(NO_TEXT)
    assert result.stats["extract/dropped/needs_javascript"] == unrendered
    assert result.stats["render/unavailable"] == unrendered
    assert "render/pages" not in result.stats
    assert not result.stats.get("extract/dropped/no_text")
    assert f"{unrendered} pages need JavaScript" in result.log
    assert why in result.log
    assert f"dropped needs_javascript {unrendered}" in result.log
    # Nothing started a browser.
    assert not any("playwright" in key for key in result.stats)


@pytest.mark.slow
@needs_browser
def test_a_killed_browser_is_started_again_and_no_page_is_lost(
    js_site: JsSite, tmp_path: Path
) -> None:
    killed: list[int] = []
    done = threading.Event()

    def kill_first_browser() -> None:
        # The browser of this test's crawl (a child of this process), once it renders a page
        # (it has a renderer process).
        me = psutil.Process()
        while not done.is_set() and not killed:
            browsers, rendering = [], False
            for child in me.children(recursive=True):
                try:
                    line = " ".join(child.cmdline())
                except psutil.Error:
                    continue
                if "chromium" in line and "--type=" not in line:
                    browsers.append(child)
                rendering = rendering or ("chromium" in line and "--type=renderer" in line)
            if browsers and rendering:
                browsers[0].kill()
                killed.append(browsers[0].pid)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_first_browser, daemon=True)
    killer.start()
    # No thin wait: the page written 1.5 s after load is waited for by its pending timer.
    settings = {**NO_WAITS, "RENDER_THIN_WAIT": "0"}
    try:
        result = run_crawl("sitemap", tmp_path, {"domain": js_site.base_url}, settings)
    finally:
        done.set()
        killer.join(5)
    assert killed, "no browser was seen"
    assert result.returncode == 0, result.log[-3000:]
    items = by_path(result, js_site.base_url)
    assert set(items) == set(PAGES), sorted(items)
    for path in PAGES:
        assert_text(items[path], path)
    assert result.stats["playwright/browser_count"] >= 2
    # Every page that needs the browser rendered once in the end: the one under way at the
    # kill failed at once (not at its deadline) and was rendered again by the new browser.
    assert result.stats["render/pages"] == len(RENDERED)
    assert result.stats.get("render/failed/crashed", 0) <= 1
    assert "render/failed/timeout" not in result.stats


@needs_browser
@pytest.mark.parametrize(
    ("mode", "wanted"),
    [("auto", {"needs"}), ("always", {"needs", "plain"}), ("never", {"needs"})],
)
def test_which_pages_each_mode_renders(mode: str, wanted: set[str]) -> None:
    from scrapy.utils.test import get_crawler
    from scrapy_maintext.document import Document
    from scrapy_maintext.render.renderer import Renderer

    # The handler a crawl gets from the add-on when it may render.
    handlers = {"http": "scrapy_maintext.render.handler.RenderDownloadHandler"}
    settings = {"RENDER_JS": mode, "DOWNLOAD_HANDLERS": handlers}
    renderer = Renderer.from_crawler(get_crawler(settings_dict=settings))
    docs = {
        "needs": Document(url="http://a/1", needs_javascript=True),
        "plain": Document(url="http://a/2", text="Served."),
        "data": Document(url="http://a/3", text_source="embedded:next-data"),
        "binary": Document(url="http://a/4", reason="binary", needs_javascript=True),
    }
    assert {name for name, doc in docs.items() if renderer.wants(doc)} == wanted
    # never: a page that needs JavaScript is counted and said, not rendered.
    assert renderer.can_render == (mode != "never")
    renderer.count_unrendered()
    line = renderer.last_words()
    assert (line is not None) == (mode == "never")
    if line is not None:
        assert "1 page needs JavaScript" in line and "RENDER_JS=auto" in line


@pytest.mark.slow
@needs_browser
def test_a_page_that_floods_memory_is_stopped_and_counted(js_site: JsSite, tmp_path: Path) -> None:
    base = js_site.base_url
    routes = js_site.site.site.routes  # type: ignore[union-attr]
    flood = "<div id='root'></div><script>let a = []; for (;;) a.push(new Array(1e6).fill(1.5));"
    routes["/flood.html"] = Route(shell("Flood", flood + "</script>"))
    listed = "".join(
        f"<url><loc>{base}{path}</loc></url>" for path in ("/flood.html", "/inline.html")
    )
    routes["/sitemap.xml"] = Route(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{listed}</urlset>'.encode(),
        "application/xml",
    )
    settings = {**NO_WAITS, "RENDER_MEMORY_MB": "128"}
    result = run_crawl("sitemap", tmp_path, {"domain": base}, settings)
    assert result.returncode == 0, result.log[-3000:]
    assert set(by_path(result, base)) == {"/inline.html"}
    assert result.stats["render/failed/page_crashed"] == 1
    assert result.stats["extract/dropped/needs_javascript"] == 1
    assert result.stats["playwright/browser_count"] == 1  # the browser itself lived on


@pytest.mark.slow
@needs_browser
def test_explain_renders_a_page_that_needs_it(js_site: JsSite, tmp_path: Path) -> None:
    from tests.test_cli import maintext

    url = js_site.base_url + "/fetched.html"
    out = tmp_path / "explain.html"
    plain = maintext("explain", url, "-o", str(out), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr.decode()[-2000:]
    assert PAGES["/fetched.html"].paragraphs[0] not in out.read_text()
    rendered = maintext("explain", url, "-o", str(out), "--render", cwd=tmp_path)
    assert rendered.returncode == 0, rendered.stderr.decode()[-2000:]
    assert "(rendered)" in rendered.stderr.decode()
    assert PAGES["/fetched.html"].paragraphs[0] in out.read_text()
    assert js_site.other.hits == []
    assert "/api/article.json" in js_site.site.paths() and "/robots.txt" in js_site.site.paths()
