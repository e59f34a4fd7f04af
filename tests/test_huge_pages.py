"""Huge pages: the picture step is one linear walk that finds what the document-order XPath
it replaced found, and pages of 60,000 paragraphs or 100,000 elements extract within the
default timeout, in a crawl and with ``maintext extract``, with the text they have without
the picture step. (Their time against earlier commits: ``benchmarks/huge_pages.py``.)"""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import lxml.etree
import lxml.html
import pytest
from scrapy_maintext.cli import main as maintext
from scrapy_maintext.document import Block
from scrapy_maintext.extraction import ExtractOptions, extract
from scrapy_maintext.fields import author
from scrapy_maintext.neural.segment import MAX_BLOCKS
from scrapy_maintext.pictures.images import (
    MAX_LOOKBACKS,
    MAX_WALK_ELEMENTS,
    PageText,
    block_offsets,
    walk,
)

from benchmarks.huge_pages import SENTENCE, SHAPES
from tests.crawl import NO_WAITS, run_crawl
from tests.sites import TestSiteServer, serve_with_page

ARTICLES = Path(__file__).parent / "fixtures" / "articles"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: The walk as one XPath over the whole document, as it was before it became linear: the
#: oracle of what the walk must find (quadratic in libxml2, so only on small pages here).
ORACLE = lxml.etree.XPath(
    "//text()[normalize-space()]"
    "[not(parent::script or parent::style or parent::template or parent::noscript)]"
    " | //img | //amp-img | //h1 | //*[@itemtype]",
    smart_strings=False,
)


def oracle_walk(tree: lxml.html.HtmlElement) -> tuple[str, list[tuple[str, int]], list[int]]:
    """The squashed text, (tag, offset) of each picture-like node and ``<h1>`` offsets."""
    text, marks, headings = "", [], []
    for node in ORACLE(tree):
        if isinstance(node, str):
            text += "".join(node.split())
        elif node.tag == "h1":
            headings.append(len(text))
        elif node.tag in ("img", "amp-img") or "ImageObject" in (node.get("itemtype") or ""):
            if node.tag not in ("img", "amp-img") and any(True for _ in node.iter("img")):
                continue
            marks.append((node.tag, len(text)))
    return text, marks, headings


def summary(page: PageText) -> tuple[str, list[tuple[str, int]], list[int]]:
    return (
        page.text,
        [(el.tag, offset) for el, offset in page.pictures],
        [offset for _, offset in page.headings],
    )


TRICKY = """<!DOCTYPE html><html><head><title>t</title><style>p {x: 1}</style>
<script>var a = "<p>no</p>";</script></head><body><!-- a comment -->after comment
<h1>Head <b>line</b></h1><template><p>tmpl <i>child</i></p></template>tail
<noscript><img src="/lazy.jpg"> noscript text</noscript><?pi x?>after pi
<div itemscope itemtype="https://schema.org/ImageObject"><meta itemprop="url"
content="/m.jpg"></div><figure itemscope itemtype="https://schema.org/ImageObject">
<img src="/f.jpg"><figcaption>cap</figcaption></figure><p>one <amp-img src="/a.jpg">
</amp-img> two</p></body></html><html><body><p>second root text</p><img src="/s.jpg">
</body></html><!-- trailing -->"""


def test_walk_finds_what_the_document_order_xpath_found() -> None:
    pages = [TRICKY, *(SHAPES[shape](300) for shape in SHAPES)]
    pages += [path.read_text("utf-8") for path in sorted(ARTICLES.glob("*.html"))]
    for html in pages:
        tree = lxml.html.document_fromstring(html)
        assert summary(walk(tree)) == oracle_walk(tree)


@pytest.mark.skipif(not (DATA / "wcxb-dev.jsonl.gz").exists(), reason="no ../shared/data")
def test_walk_finds_what_the_xpath_found_on_real_pages() -> None:
    with gzip.open(DATA / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as lines:
        for number, line in zip(range(150), lines, strict=False):
            tree = lxml.html.document_fromstring(json.loads(line)["html"])
            assert summary(walk(tree)) == oracle_walk(tree), number


def test_walk_stops_at_its_element_cap() -> None:
    tree = lxml.html.document_fromstring(SHAPES["figures"](MAX_WALK_ELEMENTS // 2))
    page = walk(tree)
    assert 0 < len(page.pictures) <= MAX_WALK_ELEMENTS // 4
    assert page.text.count("Caption") <= MAX_WALK_ELEMENTS // 4


def _attribute_parents(nodes: lxml.etree.XPath, tree: lxml.html.HtmlElement) -> list[object]:
    found = (a.getparent() for a in nodes(tree) if author._SUPERSET_VALUE.search(a))
    return list(dict.fromkeys(found))


def test_the_author_search_finds_the_same_elements_on_huge_pages() -> None:
    """Above ``UNION_MAX_ELEMENTS`` the author candidates come from the attributes holding
    a superset word only (the union of every attribute grows quadratically): the same."""
    pages = [path.read_text("utf-8") for path in sorted(ARTICLES.glob("*.html"))]
    pages.append(SHAPES["divs"](300).replace("class='c3'", "class='c3 post-author'"))
    if (DATA / "fundus-dev.jsonl.gz").exists():
        with gzip.open(DATA / "fundus-dev.jsonl.gz", "rt", encoding="utf-8") as lines:
            pages += [json.loads(line)["html"] for line in itertools.islice(lines, 100)]
    for html in pages:
        tree = lxml.html.document_fromstring(html)
        expected = _attribute_parents(author._ATTRIBUTE_NODES, tree)
        assert _attribute_parents(author._SUPERSET_NODES, tree) == expected


@pytest.mark.slow
def test_a_page_of_100k_elements_extracts_in_time_with_its_text(tmp_path: Path) -> None:
    """``maintext extract`` with its default 30 s timeout: the page is written, with the
    text it has without the picture step, and pictures from the walk's first elements."""
    page = tmp_path / "figures.html"
    page.write_text(SHAPES["figures"](25_000), encoding="utf-8")
    assert sum(1 for _ in lxml.html.parse(str(page)).getroot().iter()) > 100_000
    out = tmp_path / "out.jsonl"
    base = ["extract", str(page), "--base-url", "https://huge.example/", "--no-progress"]
    assert maintext([*base, "-o", str(out), "--workers", "1"]) == 0
    (doc,) = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    without = extract(page.read_bytes(), "https://huge.example/", ExtractOptions(images=False))

    # The same paragraphs; caption lines are the convention's to keep or take out.
    def paragraphs(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("Caption ")]

    assert paragraphs(doc["text"]) == paragraphs(without.text)
    assert doc["text"].count(SENTENCE) > 0 and 0 < len(doc["images"]) <= 60


@pytest.mark.slow
def test_a_page_of_120k_classed_elements_finds_its_author_in_time(tmp_path: Path) -> None:
    """Every element with a class and an id: the author search stays linear."""
    html = SHAPES["divs"](60_000).replace(
        "<h1>A huge page</h1>", "<h1>A huge page</h1><div class='post-author'>Ana Ruiz</div>"
    )
    page = tmp_path / "divs.html"
    page.write_text(html, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    base = ["extract", str(page), "--base-url", "https://huge.example/", "--no-progress"]
    assert maintext([*base, "-o", str(out), "--workers", "1"]) == 0
    (doc,) = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert doc["author"] == "Ana Ruiz"


@pytest.fixture(scope="module")
def huge_site() -> Iterator[TestSiteServer]:
    with serve_with_page("/huge.html", SHAPES["marked"](60_000).encode()) as server:
        yield server


@pytest.mark.slow
def test_a_60000_paragraph_page_is_exported_by_a_crawl(
    huge_site: TestSiteServer, tmp_path: Path
) -> None:
    """About 2 MB of paragraphs with a word in bold each, the default extraction timeout
    (30 s; 1ea8e03 took minutes): exported, with the paragraphs up to the segmenter's block
    limit."""
    settings = {**NO_WAITS, "EXTRACT_WORKERS": "1", "DOWNLOAD_MAXSIZE": str(8 << 20)}
    result = run_crawl("sitemap", tmp_path, {"domain": huge_site.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    (item,) = [i for i in result.items if i["url"].endswith("/huge.html")]
    assert item["text"].count(SENTENCE) == MAX_BLOCKS - 1  # the headline is the title
    assert not result.stats.get("item_dropped_count"), result.stats


def test_block_offsets_look_back_a_bounded_number_of_times() -> None:
    """A block out of order is found from the page's start; once ``MAX_LOOKBACKS`` blocks
    were looked for again, one more that is not after the cursor is not found."""
    text = "alphabetagammadelta"
    blocks = [Block("p", "gamma"), Block("p", "alpha"), Block("p", "delta")]
    assert block_offsets(text, blocks) == [9, 0, 14]
    missing = [Block("p", f"missing {i}") for i in range(MAX_LOOKBACKS)]
    found = block_offsets(text, [Block("p", "gamma"), *missing, Block("p", "alpha")])
    assert found == [9, *[None] * MAX_LOOKBACKS, None]
