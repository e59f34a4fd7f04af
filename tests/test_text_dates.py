"""Days a page writes as text beside its heading, and non-ISO days in meta tags: the date
sources of ``fields.textdates`` (pages built here)."""

from __future__ import annotations

import time

import lxml.html
import pytest
from scrapy_maintext.extraction import extract
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.fields.metadata import gather
from scrapy_maintext.fields.metadata_rules import RULES
from scrapy_maintext.fields.structured import page_candidates
from scrapy_maintext.fields.textdates import (
    AFTER_H1,
    BEFORE_H1,
    MAX_WINDOW_CHARS,
    PUBLISHED,
    UPDATED,
    heading_dates,
    parse_day,
)

BODY = "<p>" + "The council met on Monday to discuss the cycle lanes of the city. " * 8 + "</p>"


def tree_of(html: str):  # type: ignore[no-untyped-def]
    tree = parse_page(html, ExtractOptions()).tree
    assert tree is not None
    return tree


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("March 3, 2026", "2026-03-03"),
        ("3. März 2026", "2026-03-03"),
        ("Dec. 09, 2025 5:00 am PST", "2025-12-09"),
        ("30th March 2025, 16:26", "2025-03-30"),
        ("December 15th 2025", "2025-12-15"),
        ("le 3 mars 2026", "2026-03-03"),
        ("12.12.2025", "2025-12-12"),
        ("2024-11-06", "2024-11-06"),
        ("03/01/2017", "2017-03-01"),
        ("13/11/2025 09:21", "2025-11-13"),
        ("February 30, 2025", None),
        ("in 2025 and beyond", None),
        ("Mayday 2020", None),
    ],
)
def test_days_written_in_words_and_numbers_are_read(text: str, day: str | None) -> None:
    assert parse_day(text) == day


def test_the_days_beside_the_heading_are_sources_by_their_cue() -> None:
    tree = tree_of(
        "<html><body><nav>Archive 1 January 2020</nav><p>Feb 4, 2025 - 11 min read</p>"
        "<h1>Cycle lanes</h1><script>var built = '2019-05-05';</script>"
        "<p>By Anna Maier <span>Last updated:</span> <b>Dec 4, 2025</b></p>"
        f"<p>Posted on 3 March 2024</p>{BODY}<footer>5.6.2021</footer></body></html>"
    )
    assert heading_dates(tree) == {
        BEFORE_H1: "2025-02-04",
        AFTER_H1: "2025-12-04",
        UPDATED: "2025-12-04",
        PUBLISHED: "2024-03-03",
    }
    assert page_candidates(tree, None).date[UPDATED] == "2025-12-04"


def test_days_far_from_the_heading_or_without_one_are_no_source() -> None:
    far = "<p>" + "Nothing dated here at all. " * (MAX_WINDOW_CHARS // 20) + "</p>"
    tree = tree_of(f"<html><body><h1>Cycle lanes</h1>{far}<p>March 3, 2026</p></body></html>")
    assert heading_dates(tree) == {}
    assert heading_dates(tree_of(f"<html><body><p>March 3, 2026</p>{BODY}</body></html>")) == {}


def test_meta_dates_written_in_words_are_read() -> None:
    tree = tree_of(
        '<html><head><meta name="date" content="November 25, 2025">'
        '<meta name="updated" content="2025-12-18"></head><body><h1>T</h1></body></html>'
    )
    dates = page_candidates(tree, None).date
    assert dates["meta_date"] == "2025-11-25"
    assert dates["meta_updated"] == "2025-12-18"


def test_a_page_that_shows_only_its_day_as_text_gets_that_day() -> None:
    html = (
        "<html><head><title>Cycle lanes</title></head><body><article><h1>Cycle lanes</h1>"
        f"<p class='byline'>Published: January 23, 2025</p>{BODY}</article></body></html>"
    )
    _, found = gather(tree_of(html), "https://example.org/cycle-lanes")
    assert RULES["date"].pick(found.date) == ("2025-01-23", PUBLISHED)
    assert extract(html).date == "2025-01-23"


def test_the_window_bounds_the_search_on_a_huge_page() -> None:
    nodes = "".join(f"<p>paragraph {i} of 2 words</p>" for i in range(50_000))
    tree = tree_of(f"<html><body><h1>Long</h1>{nodes}<p>March 3, 2026</p></body></html>")
    started = time.perf_counter()
    assert heading_dates(tree) == {}
    assert time.perf_counter() - started < 0.5


def test_a_comment_beside_the_heading_is_read_past() -> None:
    """A tree parsed with its comments (``lxml.html.fromstring``; ``extract()``'s parser drops
    them): a comment among the heading's following siblings has only a tail, and reading its
    text made the whole metadata step fail."""
    html = (
        "<html><body><div><h1>Ferry back</h1><!-- byline --><p>4 December 2025</p>"
        "<?pi x?><p>Text.</p></div></body></html>"
    )
    tree = lxml.html.fromstring(html)
    assert heading_dates(tree) == {AFTER_H1: "2025-12-04"}
    assert gather(tree, "https://a.example/x")[1].date.get(AFTER_H1) == "2025-12-04"


def test_the_texts_before_the_heading_are_the_xpath_preceding_texts() -> None:
    # The walk stands for this XPath (nearest first): the same text nodes in the same order,
    # past scripts, styles, comments, ancestors' own text and tails at every depth; past
    # MAX_WALK_BACK elements the XPath answers.
    import lxml.etree
    from scrapy_maintext.fields import textdates

    xpath = lxml.etree.XPath(
        "preceding::text()[not(ancestor::script or ancestor::style)]"
        f"[position() <= {textdates.BEFORE_NODES}]"
    )

    def both(html: str) -> tuple[list[str], list[str]]:
        heading = tree_of(html).xpath("//h1")[0]
        want = [str(text) for text in reversed(xpath(heading))]
        return textdates.texts_before(heading), want

    got, want = both(
        "<html><head><title>T</title><style>p {}</style><script>var a = 1;</script></head>"
        "<body>top<div>a<!-- c -->after comment<span>b<b>c</b>d</span>e"
        "<script>x()</script>tail of script<noscript>ns</noscript></div>between"
        "<div>f<p>g<em>h</em>i</p>j<article>k<header>l<time>March 3, 2026</time>m"
        "<h1>Title</h1>n</header>o</article>p</div></body></html>"
    )
    assert got == want
    assert "var a = 1;" not in got and "x()" not in got and "tail of script" in got
    got, want = both("<body>" + "<p>x<b>y</b></p>" * 100 + "<h1>T</h1></body>")
    assert got == want and len(want) == textdates.BEFORE_NODES
    empty = "<span></span>" * (textdates.MAX_WALK_BACK + 10)
    got, want = both(f"<body><p>early</p>{empty}<p>late</p>{empty}<h1>T</h1></body>")
    assert got == want == ["late", "early"]
