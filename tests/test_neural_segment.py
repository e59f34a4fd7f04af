"""Segmentation: block boundaries, kinds, dropped markup, and the tree left untouched."""

from __future__ import annotations

import lxml.html
import pytest
import scrapy_maintext.neural.segment as segmentation
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


HIDDEN_PAGE = """<html><body><p>Visible text, longer than any one element the page hides.</p>
<div style="display: none"><p>Description revealed by script.</p></div>
<p>Before <span hidden>tab label</span> after.</p>
<div role="dialog" style="display:none"><p>Cookie banner</p></div>
</body></html>"""


def test_hidden_elements_are_dropped_by_default() -> None:
    blocks = segment(lxml.html.fromstring(HIDDEN_PAGE))
    assert [b.text for b in blocks] == [
        "Visible text, longer than any one element the page hides.",
        "Before after.",
    ]
    assert not any(b.hidden for b in blocks)


WRAPPED_PAGE = """<html><body><header><a href="/">Shop</a></header>
<main><div class="lockdown-content" style="display:none"><h1>Dark roast</h1>
<p>Our boldest coffee, roasted dark for a smooth and chocolatey cup.</p>
<p>Ground or whole bean, in bags of 500 g.</p><p hidden>Sold out.</p></div></main>
<footer>(c) Shop</footer></body></html>"""


def test_a_hidden_wrapper_stays_hidden_by_default() -> None:
    texts = [b.text for b in segment(lxml.html.fromstring(WRAPPED_PAGE))]
    assert texts == ["Shop", "(c) Shop"]


def test_reveal_share_reads_a_hidden_wrapper_as_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    # A script reveals the page's content on load (an age gate, a lockdown app); the hidden
    # element inside the wrapper stays hidden.
    monkeypatch.setattr(segmentation, "REVEAL_SHARE", 0.5)
    tree = lxml.html.fromstring(WRAPPED_PAGE)
    before = etree.tostring(tree)
    texts = [b.text for b in segment(tree)]
    assert texts == [
        "Shop",
        "Dark roast",
        "Our boldest coffee, roasted dark for a smooth and chocolatey cup.",
        "Ground or whole bean, in bags of 500 g.",
        "(c) Shop",
    ]
    assert etree.tostring(tree) == before
    # Less text than the visible rest: dropped as before.
    blocks = segment(lxml.html.fromstring(HIDDEN_PAGE))
    assert "Description revealed by script." not in [b.text for b in blocks]


def test_reveal_share_weighs_only_text_the_walk_would_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segmentation, "REVEAL_SHARE", 0.5)
    # Script, noscript and pop-up text inside the wrapper does not count: 5 readable
    # characters against 20 visible ones, so the wrapper stays hidden.
    page = (
        "<html><body><p>Twenty visible chars</p><div style='display:none'><p>short</p>"
        f"<script>{'x' * 500}</script><noscript><p>{'y' * 500}</p></noscript>"
        f"<div role='dialog'>{'z' * 500}</div><p hidden>{'w' * 500}</p></div></body></html>"
    )
    assert [b.text for b in segment(lxml.html.fromstring(page))] == ["Twenty visible chars"]


def test_reveal_share_on_a_page_of_many_hidden_elements(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every hidden element is weighed once (a quadratic search took minutes here).
    monkeypatch.setattr(segmentation, "REVEAL_SHARE", 0.5)
    page = "<html><body><div>" + "<span hidden>x</span> " * 20_000 + "</div></body></html>"
    blocks = segment(lxml.html.fromstring(page))
    assert len(blocks) == 1 and blocks[0].text.count("x") == 20_000


def test_keep_hidden_keeps_them_as_blocks_of_their_own() -> None:
    blocks = segment(lxml.html.fromstring(HIDDEN_PAGE), keep_hidden=True)
    marked = [(b.text, b.hidden) for b in blocks]
    # The hidden span's tail is visible again; pop-ups stay dropped.
    assert marked == [
        ("Visible text, longer than any one element the page hides.", False),
        ("Description revealed by script.", True),
        ("Before", False),
        ("tab label", True),
        ("after.", False),
    ]


def test_hidden_blocks_are_marked_in_the_features_only() -> None:
    from scrapy_maintext.neural.features import _HIDDEN_ID, featurize

    tree = lxml.html.fromstring(HIDDEN_PAGE)
    kept = featurize(segment(tree, keep_hidden=True))
    default = featurize(segment(tree))
    assert [_HIDDEN_ID in row for row in kept.struct_ids.tolist()] == [
        False,
        True,
        False,
        True,
        False,
    ]
    assert _HIDDEN_ID not in default.struct_ids
    # A visible block's ids do not depend on the option.
    assert kept.struct_ids[0].tolist() == default.struct_ids[0].tolist()


def test_hidden_elements_without_text_split_nothing() -> None:
    # Tracking pixels and icon spans; nested hidden elements make one hidden block.
    page = """<html><body><p>Only 10 EUR<img src="x.gif" style="display:none"> incl. VAT.</p>
    <div hidden>Outer <span style="display:none">inner</span> text</div>
    <table><tr style="display:none"><td>Hidden</td><td>row</td></tr></table></body></html>"""
    tree = lxml.html.fromstring(page)
    kept = [(b.text, b.hidden) for b in segment(tree, keep_hidden=True)]
    assert kept == [
        ("Only 10 EUR incl. VAT.", False),
        ("Outer inner text", True),
        ("Hidden | row", True),
    ]
    assert [b.text for b in segment(tree)] == ["Only 10 EUR incl. VAT."]


@pytest.mark.parametrize("extra", [0, 1, 100])
def test_a_page_over_the_block_limit_is_cut_and_says_so(extra: int) -> None:
    count = segmentation.MAX_BLOCKS + extra
    html = "<html><body>" + "<p>a short paragraph</p>" * count + "</body></html>"
    blocks = segment(lxml.html.fromstring(html))
    assert len(blocks) == segmentation.MAX_BLOCKS
    assert blocks.cut is (extra > 0)
