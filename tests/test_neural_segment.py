"""Segmentation: block boundaries, kinds, dropped markup, and the tree left untouched."""

from __future__ import annotations

import lxml.html
from lxml import etree
from scrapy_maintext.neural.segment import segment

PAGE = """<html><head><title>T</title><style>p {}</style></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/a">About</a></li></ul></nav>
<article><h2>Title <span>here</span></h2><p>Some <b>bold</b> text<script>x()</script> tail.</p>
<div>inline run<br>second line<div>nested</div>after nested</div>
<table><tr><th>a</th><td>b</td></tr><tr><td><p>layout cell</p></td></tr></table>
<pre>code
  indented</pre><blockquote><p>quoted</p></blockquote><!-- note -->after comment
<p hidden>secret</p><p style="display:none">hidden too</p></article></body></html>"""


def _blocks() -> list[tuple[str, str]]:
    return [(b.kind, b.text) for b in segment(lxml.html.fromstring(PAGE))]


def test_blocks_and_kinds() -> None:
    assert _blocks() == [
        ("item", "Home"),
        ("item", "About"),
        ("head", "Title here"),
        ("p", "Some bold text tail."),
        ("p", "inline run"),
        ("p", "second line"),
        ("p", "nested"),
        ("p", "after nested"),
        ("row", "a | b"),
        ("p", "layout cell"),
        ("code", "code\n  indented"),
        ("quote", "quoted"),
        ("p", "after comment"),
    ]


def test_row_cells_heading_level_and_links() -> None:
    blocks = segment(lxml.html.fromstring(PAGE))
    row = next(b for b in blocks if b.kind == "row")
    assert row.to_block().cells == ("a", "b")
    head = next(b for b in blocks if b.kind == "head")
    assert head.to_block().level == 2
    assert blocks[0].link_chars == len("Home")


def test_tree_not_modified() -> None:
    tree = lxml.html.fromstring(PAGE)
    before = etree.tostring(tree)
    segment(tree)
    assert etree.tostring(tree) == before


def test_fragment_root_and_empty() -> None:
    assert [b.text for b in segment(lxml.html.fromstring("<span>x <i>y</i></span>"))] == ["x y"]
    assert segment(lxml.html.fromstring("<div><script>1</script></div>")) == []


def test_extractor_leaves_the_tree_alone() -> None:
    # crawler.extraction hands the same tree to trafilatura after a neural fallback.
    from scrapy_maintext.neural import default_extractor

    tree = lxml.html.fromstring(PAGE)
    before = etree.tostring(tree)
    default_extractor().extract(tree, "https://example.org/")
    assert etree.tostring(tree) == before


def test_pop_ups_are_dropped() -> None:
    # Cookie banners and privacy or newsletter modals: <dialog> and its ARIA equivalents.
    page = """<html><body><p>Body text.</p>
    <div role="dialog"><p>Accept cookies</p></div>
    <div role=" AlertDialog "><p>Are you sure?</p></div>
    <div aria-modal="true" class="modal"><p>Privacy policy in full</p></div>
    <dialog><p>Sign up</p></dialog>
    <div aria-modal="false"><p>Not a modal</p></div><div role="main"><p>Main role</p></div>
    </body></html>"""
    texts = [b.text for b in segment(lxml.html.fromstring(page))]
    assert texts == ["Body text.", "Not a modal", "Main role"]
