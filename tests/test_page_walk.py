"""One walk of the page (issue 45): the segmenter's walk gives the page type's structure
features and the pictures' walk exactly as their own walks do, subtrees the segmenter skips
(dropped, hidden, rows and ``<pre>`` read whole) included; a walk cut short, a tree with a
second root and a tree that is not the root make the steps walk the page themselves."""

from __future__ import annotations

import gzip
import itertools
import json

import lxml.html
import numpy as np
import pytest
from scrapy_maintext.extraction import page_type
from scrapy_maintext.extraction.page_walk import PageWalk
from scrapy_maintext.neural import segment as segmenter
from scrapy_maintext.pictures.images import walk

from tests.test_huge_pages import ARTICLES, DATA, TRICKY, summary

#: Everything the segmenter skips or reads whole, with pictures and text inside.
SKIPPED = """<!DOCTYPE html><html lang="en"><head><title>t</title>
<meta property="og:type" content="Article">
<script type="application/ld+json">{"@type": "NewsArticle"}</script></head><body>
<!-- c --> lead <h1 class="post-title">Head <b>line</b></h1>
<div hidden><p>hidden text <img src="/h.jpg" width="400"></p></div>
<div style="display:none" class="comment"><p>also hidden</p><img src="/h2.jpg"></div>
<div role="dialog"><p>pop-up</p><img src="/d.jpg"></div>
<table><tr><td>a <img src="/t.jpg"></td><td>b $12.00</td></tr><tr><td>one</td></tr></table>
<pre>code <b>bold</b>
line two</pre><svg><g><text>svg text</text></g></svg><iframe src="x"></iframe>
<noscript><img src="/lazy.jpg"> noscript text</noscript><?pi x?>after pi
<ul class="items"><li>1</li><li>2</li><li>3</li><li>4</li></ul>
<figure itemscope itemtype="https://schema.org/ImageObject"><img src="/f.jpg">
<figcaption>cap</figcaption></figure><p>one <a href="/x">link</a> two <button>Add to cart
</button></p><p>%s</p></body></html>""" % ("word " * 40)


def walked(html: str, keep_hidden: bool = False) -> tuple[lxml.html.HtmlElement, PageWalk]:
    tree = lxml.html.document_fromstring(html)
    observer = PageWalk.of(tree)
    assert observer is not None
    segmenter.segment(tree, keep_hidden, observer)
    return tree, observer


def assert_same(tree: lxml.html.HtmlElement, observer: PageWalk) -> None:
    assert observer.complete
    alone = page_type.page_inputs(tree, "https://example.com/a/b")
    shared = page_type.page_inputs(tree, "https://example.com/a/b", observer.structure_counts())
    assert np.array_equal(alone.features, shared.features)
    assert alone.products == shared.products
    page = observer.page_text()
    assert page is not None
    assert summary(page) == summary(walk(tree))


@pytest.mark.parametrize("keep_hidden", [False, True])
def test_the_segmenters_walk_reads_what_the_steps_own_walks_read(keep_hidden: bool) -> None:
    tree, observer = walked(SKIPPED, keep_hidden)
    assert_same(tree, observer)
    assert len(observer.page_text().pictures) == 6  # type: ignore[union-attr]


def test_fixture_articles_read_alike() -> None:
    for path in sorted(ARTICLES.glob("*.html")):
        assert_same(*walked(path.read_text("utf-8")))


def test_a_second_root_or_a_subtree_is_walked_by_the_steps_themselves() -> None:
    tree = lxml.html.document_fromstring(TRICKY)
    assert PageWalk.of(tree) is None
    assert PageWalk.of(tree.body) is None


def test_a_walk_cut_short_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segmenter, "MAX_BLOCKS", 3)
    _, observer = walked(SKIPPED)
    assert not observer.complete
    assert observer.page_text() is None and observer.structure_counts() is None


def test_a_page_past_the_readers_limits_is_read_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    from scrapy_maintext.pictures import images

    monkeypatch.setattr(images, "MAX_WALK_ELEMENTS", 30)
    monkeypatch.setattr(page_type, "MAX_ELEMENTS", 25)
    assert_same(*walked(SKIPPED))


@pytest.mark.skipif(not (DATA / "wcxb-dev.jsonl.gz").exists(), reason="no ../shared/data")
def test_labelled_pages_read_alike() -> None:
    with gzip.open(DATA / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in itertools.islice(lines, 150):
            page = json.loads(line)
            tree = lxml.html.document_fromstring(page["html"])
            observer = PageWalk.of(tree)
            if observer is None:
                continue
            segmenter.segment(tree, False, observer)
            assert_same(tree, observer)


def test_unread_text_is_read_by_no_one() -> None:
    """The walk does not copy the text of the elements whose text no reader reads: the
    segmenter drops them, and both readers skip their text."""
    from scrapy_maintext.extraction import page_walk
    from scrapy_maintext.neural.tags import DROP_TAGS

    assert segmenter.UNREAD_TEXT <= page_walk.UNREAD_TEXT
    assert segmenter.UNREAD_TEXT <= DROP_TAGS


def test_parsed_pages_have_lxml_html_element_classes() -> None:
    """The parser's element classes, chosen in C, are lxml.html's own (``FormElement`` for a
    form, ``HtmlElement`` for the rest)."""
    from scrapy_maintext.extraction.body import parse_text
    from scrapy_maintext.extraction.options import ExtractOptions

    html = (
        "<html><body><FORM><Input name=a><p>x</p><svg:rect/><label>l</label><select>"
        "<option>o</select><textarea>t</textarea></FORM><div><b>b</b></div></body></html>"
    )
    tree = parse_text(html, ExtractOptions()).tree
    assert tree is not None
    theirs = lxml.html.document_fromstring(html, parser=lxml.html.HTMLParser())
    assert [type(el) for el in tree.iter()] == [type(el) for el in theirs.iter()]
    assert type(tree.find(".//form")) is lxml.html.FormElement
