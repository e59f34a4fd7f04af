"""Pages whose extraction takes seconds: for the tests of the per-page timeout, and a page
that trafilatura's comparison would take minutes on (tests/test_extraction_comparison.py)."""

from __future__ import annotations

#: About 3 s of extraction (engine auto) on the 2-core development machine: far above the
#: timeouts of the tests that use it (0.5 s), which pebble checks every 0.1 s.
SLOW_PARAGRAPHS = 60_000


def slow_page() -> str:
    paragraphs = "".join(
        f"<div><p>Paragraph {i} with some words to read here.</p></div>"
        for i in range(SLOW_PARAGRAPHS)
    )
    return f"<html><body>{paragraphs}</body></html>"


#: A phrase of the article on :func:`short_paragraphs_page`.
ARTICLE_PHRASE = "the river flooded the valley"
#: Paragraph elements of :func:`short_paragraphs_page` besides its short paragraphs.
ARTICLE_ELEMENTS = 14


def short_paragraphs_page(short_paragraphs: int) -> str:
    """A real article (a heading, 12 paragraphs) followed by ``short_paragraphs`` one-line
    paragraphs: trafilatura's jusText comparison is quadratic on such a page."""
    article = "".join(
        f"<p>Paragraph {i} of the report explains at length why {ARTICLE_PHRASE} in the "
        "spring of that year, and what the town council decided to do about it.</p>"
        for i in range(12)
    )
    notes = "".join(f"<p>Note {i}.</p>" for i in range(short_paragraphs))
    return (
        "<html><head><title>The flood</title></head><body><article><h1>The flood</h1>"
        f"{article}</article><div>{notes}</div></body></html>"
    )
