"""``maintext explain``: every page block's verdict, the same text as ``extract()``, one
standalone HTML page, a file or a URL, clear errors."""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import html as lxml_html
from scrapy_maintext.cli import main as maintext_main
from scrapy_maintext.demo.site import build_site
from scrapy_maintext.explain.html import render
from scrapy_maintext.explain.trace import Fallback, Trace, Verdict, explain
from scrapy_maintext.extraction import extract
from scrapy_maintext.extraction.convention import Convention
from scrapy_maintext.extraction.options import SHIPPED_MODELS, ExtractOptions

from tests.model_folders import decoded_model
from tests.sites import Route, SiteOptions, TestSiteServer, make_hostile
from tests.test_cli import maintext

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_PAGES = sorted(
    [
        *(ROOT / "tests" / "fixtures" / "extraction" / "site").glob("*.html"),
        *(ROOT / "tests" / "fixtures" / "neural").glob("*.html"),
    ]
)
_DEMO = build_site("http://demo.example")
DEMO_PAGES = {
    path: route.body
    for path, route in _DEMO.routes.items()
    if route.content_type.startswith("text/html")
}
URL = "https://site.example/page.html"

_PARAGRAPH = (
    "The council voted on Tuesday to rebuild the harbour wall after the winter storms left "
    "long cracks along its length, and engineers expect the work to take two full years."
)
#: A page whose text ends with a heading (dropped as a trailing heading).
TRAILING = f"""<html><head><title>Harbour wall</title></head><body><nav><a href=/>Home</a></nav>
<article><h1>Harbour wall</h1><p>{_PARAGRAPH}</p><p>Residents said they had waited a decade
for the repairs and welcomed the plan, though some worried about the noise of the piling
machines through the summer.</p><p>{_PARAGRAPH} Again.</p>
<h2>What comes next for the harbour</h2></article><footer>Copyright</footer></body></html>"""
_COPY = "".join(f"<p>{_PARAGRAPH} Part {i}.</p>" for i in range(3))
#: A description shipped twice (wide screens, phones): the second copy is a repeated run.
REPEATED = f"<html><body><article><h1>Shop item</h1><div class=wide>{_COPY}</div>"
REPEATED += f"<div class=mobile>{_COPY}</div></article></body></html>"
#: Page text that is markup when not escaped, and references that would be requests.
HOSTILE = f"""<html><head><title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>
<link rel=stylesheet href="http://evil.example/x.css"></head><body>
<img src="http://evil.example/pixel.png"><article><p>{_PARAGRAPH}</p>
<p>&lt;img src=http://evil.example/a.png onerror=alert(1)&gt; and &lt;/td&gt;&lt;/tr&gt; are
words here, as is &lt;style&gt;body{{background:url(http://evil.example/b.png)}}&lt;/style&gt;
in a paragraph long enough to be kept by the model as the text of the page.</p>
<p>{_PARAGRAPH}</p></article></body></html>"""


def _check_same_text(trace: Trace, html: str | bytes, options: ExtractOptions) -> None:
    doc = extract(html, URL, options)
    assert trace.kept_text == doc.text
    assert trace.doc.text == doc.text
    if trace.engine_rows is None and not doc.reason:
        # The page blocks the verdicts keep are the document's body, block for block.
        assert [row.block for row in trace.rows if row.verdict.kept] == doc.body


@pytest.mark.parametrize("page", FIXTURE_PAGES, ids=lambda p: f"{p.parent.name}/{p.stem}")
@pytest.mark.parametrize("engine", ["auto", "neural", "trafilatura"])
def test_the_trace_keeps_the_text_extract_gives(page: Path, engine: str) -> None:
    html = page.read_bytes()
    options = ExtractOptions(engine=engine)
    trace = explain(html, URL, options)
    _check_same_text(trace, html, options)
    assert trace.rows, "every page here has blocks"


@pytest.mark.parametrize("path", sorted(DEMO_PAGES))
def test_the_trace_of_a_demo_page_keeps_the_text_extract_gives(path: str) -> None:
    options = ExtractOptions()
    trace = explain(DEMO_PAGES[path], URL, options)
    _check_same_text(trace, DEMO_PAGES[path], options)


@pytest.mark.parametrize("model", ["v4.1", "stacked"])
def test_the_trace_keeps_the_text_with_other_models(model: str) -> None:
    from tests.model_folders import STACKED_MODEL

    folders = {"v4.1": SHIPPED_MODELS / "v4.1", "stacked": STACKED_MODEL}
    options = ExtractOptions(model=str(folders[model]))
    for page in FIXTURE_PAGES:
        html = page.read_bytes()
        _check_same_text(explain(html, URL, options), html, options)


def _verdicts(trace: Trace) -> list[tuple[Verdict, Convention | None]]:
    return [(row.verdict, row.convention) for row in trace.rows]


def test_each_drop_names_its_reason(tmp_path: Path) -> None:
    # The default model itself drops the headline and the byline (its labels follow the
    # convention): a low threshold makes the engine keep them, for the convention to drop.
    keeping = ExtractOptions(model=str(decoded_model(tmp_path, threshold=0.02)))
    article = explain((ROOT / "tests/fixtures/neural/article.html").read_bytes(), URL, keeping)
    verdicts = _verdicts(article)
    assert (Verdict.CONVENTION, Convention.TITLE) in verdicts
    assert (Verdict.CONVENTION, Convention.BYLINE) in verdicts
    assert {Verdict.KEPT, Verdict.BELOW_THRESHOLD} <= {v for v, _ in verdicts}
    for row in article.rows:
        assert row.probability is not None and article.threshold is not None
        below = row.probability < article.threshold
        assert (row.verdict is Verdict.BELOW_THRESHOLD) == (below and not row.verdict.kept)
    assert article.fallback is None and article.doc.extractor == "neural"

    trailing = explain(TRAILING, URL)
    assert _verdicts(trailing)[-2:] == [
        (Verdict.TRAILING_HEADING, None),
        (Verdict.BELOW_THRESHOLD, None),
    ]
    _check_same_text(trailing, TRAILING, ExtractOptions())

    repeated = explain(REPEATED, URL)
    assert [v for v, _ in _verdicts(repeated)][1:] == [Verdict.KEPT] * 3 + [
        Verdict.REPEATED_RUN
    ] * 3
    _check_same_text(repeated, REPEATED, ExtractOptions())

    groups = ExtractOptions(model=str(SHIPPED_MODELS / "v4.1"))
    docs = explain((ROOT / "tests/fixtures/neural/docs.html").read_bytes(), URL, groups)
    assert Verdict.KEPT_WITH_GROUP in {v for v, _ in _verdicts(docs)}


@pytest.mark.parametrize(
    ("page", "engine", "fallback"),
    [
        ("extraction/site/index.html", "auto", Fallback.LOW_CONFIDENCE),
        ("extraction/site/boilerplate.html", "auto", Fallback.NOTHING_KEPT),
        ("neural/article.html", "trafilatura", Fallback.ENGINE_OPTION),
    ],
)
def test_a_page_trafilatura_decided_says_why_and_what_its_text_covers(
    page: str, engine: str, fallback: Fallback, tmp_path: Path
) -> None:
    html = (ROOT / "tests/fixtures" / page).read_bytes()
    model = None
    if fallback is Fallback.LOW_CONFIDENCE:
        # The default model never falls back for its confidence (its floor is 0).
        model = str(decoded_model(tmp_path, min_confidence=0.99))
    trace = explain(html, URL, ExtractOptions(engine=engine, model=model))
    assert trace.fallback is fallback and trace.doc.extractor == "trafilatura"
    assert trace.engine_rows is not None
    kept = [row.block.text for row in trace.rows if row.verdict.kept]
    for text in kept:  # a page block marked kept is in trafilatura's text
        assert text.split()[0] in trace.kept_text
    allowed = {Verdict.KEPT_BY_TRAFILATURA, Verdict.NOT_IN_TRAFILATURA, Verdict.CONVENTION}
    assert {row.verdict for row in trace.rows} <= allowed | {Verdict.TRAILING_HEADING}
    # The model's probabilities are shown even where it did not decide (not with
    # --engine trafilatura: the model did not run).
    has_probs = all(row.probability is not None for row in trace.rows)
    assert has_probs == (engine == "auto")


#: Elements and attributes that make a browser fetch something.
_FETCHING = "//script | //link | //img | //iframe | //object | //embed | //video | //audio"


def _no_external_references(page: str) -> None:
    tree = lxml_html.fromstring(page)
    assert tree.xpath(_FETCHING) == []
    assert tree.xpath("//*[@src or @srcset or @background or @poster]") == []
    assert all(href.startswith("#") for href in tree.xpath("//@href"))
    styles = " ".join(tree.xpath("//style/text() | //@style"))
    assert "url(" not in styles and "@import" not in styles


def test_the_page_escapes_the_page_text_and_references_nothing() -> None:
    trace = explain(HOSTILE, URL)
    page = render(trace)
    _no_external_references(page)
    tree = lxml_html.fromstring(page)
    assert "</title><script>alert(1)</script>" in tree.findtext(".//title")
    texts = tree.xpath('//table[@class="blocks"]//td[@class="text"]')
    assert any("<img src=http://evil.example/a.png" in td.text_content() for td in texts)
    rows = tree.xpath('//table[@class="blocks"]/tbody/tr')
    assert len(rows) == len(trace.rows)
    shown = Counter(row.get("data-verdict") for row in rows)
    assert shown == Counter(row.verdict.value for row in trace.rows)


@pytest.fixture(scope="module")
def server() -> Iterator[TestSiteServer]:
    with TestSiteServer(SiteOptions(articles=3, crawl_delay=None)) as site:
        make_hostile(site)
        assert site.site is not None
        site.site.routes["/hostile.html"] = Route(HOSTILE.encode("utf-8"))
        site.site.routes["/latin1.html"] = Route(
            "<html><body><p>Caf\u00e9 cr\u00e8me. ".encode("latin-1")
            + _PARAGRAPH.encode()
            + b"</p></body></html>",
            "text/html; charset=iso-8859-1",
        )
        yield site


def test_maintext_explain_on_a_file_and_on_a_url(server: TestSiteServer, tmp_path: Path) -> None:
    page = ROOT / "tests/fixtures/neural/article.html"
    out = tmp_path / "file.html"
    proc = maintext("explain", str(page), "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    written = out.read_text("utf-8")
    _no_external_references(written)
    trace = explain(page.read_bytes(), page.resolve().as_uri())
    assert written == render(trace)
    assert "Explained" in proc.stderr.decode()

    url = f"{server.base_url}/articles/{_DEMO.articles[0].slug}.html"
    server.reset()
    out = tmp_path / "sub" / "url.html"
    proc = maintext("explain", url, "-o", str(out), "--engine", "neural", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert [hit.path for hit in server.hits] == [url.removeprefix(server.base_url)]
    assert server.hits[0].user_agent.startswith("scrapy-maintext/")
    tree = lxml_html.fromstring(out.read_text("utf-8"))
    assert tree.findtext('.//p[@class="url"]') == url
    assert tree.xpath('//tr[@data-verdict="kept"]')


def test_a_url_keeps_its_declared_encoding(server: TestSiteServer, tmp_path: Path) -> None:
    out = tmp_path / "latin1.html"
    assert maintext_main(["explain", f"{server.base_url}/latin1.html", "-o", str(out)]) == 0
    assert "Café crème." in out.read_text("utf-8")


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("missing.html", "missing.html: No such file or directory"),
        (".", ".: a folder, not a page"),
        ("binary.bin", "binary.bin: not an HTML page (binary)"),
        ("ftp://127.0.0.1/page.html", "only http:// and https:// URLs"),
        ("{base}/gone.html", "/gone.html: HTTP 404"),
        ("{base}/error.html", "/error.html: HTTP 500"),
        ("{base}/binary.html", "/binary.html: not an HTML page (image/png)"),
        ("{base}/files/report.pdf", "not an HTML page (application/pdf)"),
        ("{base}/loop-a.html", "/loop-a.html: HTTP 30"),
        ("{closed}/page.html", "cannot be fetched"),
    ],
)
def test_a_page_that_cannot_be_read_is_one_line_and_exit_2(
    source: str,
    says: str,
    server: TestSiteServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "binary.bin").write_bytes(bytes(range(256)) * 64)
    source = source.format(base=server.base_url, closed=_closed_port_url())
    assert maintext_main(["explain", source, "-o", "out.html"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("maintext explain: error: "), err
    assert says in err
    assert not (tmp_path / "out.html").exists()


def test_a_url_that_does_not_answer_in_time_is_one_line_and_exit_2(
    server: TestSiteServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "out.html")
    source = f"{server.base_url}/slow.html"
    assert maintext_main(["explain", source, "-o", out, "--timeout", "0.3"]) == 2
    assert capsys.readouterr().err.strip().endswith("no answer in 0.3 s")


def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    page = str(ROOT / "tests/fixtures/neural/article.html")
    assert maintext_main(["explain", page, "-o", str(tmp_path / "file" / "out.html")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    proc = maintext("explain", page, "-o", "out.txt", cwd=tmp_path)
    assert proc.returncode == 2 and b"name a .html file" in proc.stderr


def _closed_port_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.mark.slow
def test_the_page_in_headless_chromium(tmp_path: Path) -> None:
    from scrapy_maintext.report.screenshot import find_chromium, rendered_dom, screenshot

    if find_chromium() is None:
        pytest.skip("no chromium on PATH: apt-get install chromium (Debian's package)")
    page = tmp_path / "explain.html"
    trace = explain((ROOT / "tests/fixtures/neural/article.html").read_bytes(), URL)
    page.write_text(render(trace), encoding="utf-8")
    png = screenshot(page, tmp_path / "explain.png", window=(1280, 900))
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (1280, 900)
    # A blank or unstyled page compresses to a few KB; the table with its chips does not.
    assert png.stat().st_size > 50_000
    dom = lxml_html.fromstring(rendered_dom(page))
    assert len(dom.xpath('//table[@class="blocks"]/tbody/tr')) == len(trace.rows)
    _no_external_references(rendered_dom(page))


def test_a_model_that_cannot_be_loaded_is_named_on_the_page(tmp_path: Path) -> None:
    from tests.model_folders import damaged_model

    options = ExtractOptions(model=str(damaged_model(tmp_path)))
    html = (ROOT / "tests/fixtures/neural/article.html").read_bytes()
    trace = explain(html, URL, options)
    assert trace.fallback is Fallback.MODEL_UNAVAILABLE and trace.detail
    assert all(row.probability is None for row in trace.rows)
    _check_same_text(trace, html, options)
    assert "the model could not be loaded (" in render(trace, options)


def test_every_package_folder_is_in_the_wheel() -> None:
    # A package folder left out of pyproject's list is missing from the installed wheel
    # (the editable install of the tests finds it all the same).
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        "scrapy_maintext." + ".".join(init.parent.relative_to(ROOT / "crawler").parts)
        for init in (ROOT / "crawler").glob("*/**/__init__.py")
    }
    assert "scrapy_maintext.explain" in folders
    assert folders <= listed
