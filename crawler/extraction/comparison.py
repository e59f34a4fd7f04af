"""When trafilatura's comparison with readability and jusText is worth running.

With its default options trafilatura compares its own output with readability's and, when the
text it found is short, with jusText's. jusText's paragraph revision walks, for every short
paragraph, to the nearest long one on both sides: on a run of ``n`` short paragraphs it costs
``n**2`` steps. A page of 40,000 one-line paragraphs took 133 s there, past the crawl's
extraction timeout, so a good article on such a page was lost. trafilatura's ``fast=True``
skips the comparison and stays linear.

The measure is the number of elements that jusText turns into paragraphs (its own tag list),
counted up to the bound only. ``python -m benchmarks.studies.comparison_bound --data
../shared/data`` measures where the bound lies: on the 5,193 developer pages the count is at
most 9,097 (99.9th percentile 4,127; 4 pages lie over 5,000, where trafilatura takes 0.2-1.3 s
with or without the comparison); the pathological page's comparison takes 2.4-5.4 s at 5,000
short paragraphs on the shared 2-core machine (depending on its load) and 9.4-13 s at 10,000.
Above the bound, trafilatura (the stacked model's reference, and the fallback) runs with
``fast=True``; past ``neural.REFERENCE_MAX_BLOCKS`` blocks the stacked model gets no reference
at all. Either way the page counts as ``extract/trafilatura_bounded/<why>`` (:class:`Bound`).
"""

from __future__ import annotations

from enum import StrEnum
from itertools import islice
from typing import Any

#: jusText's ``PARAGRAPH_TAGS``: every element of these tags starts a paragraph of its own.
PARAGRAPH_TAGS = (
    "blockquote",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "div",
    "dl",
    "dt",
    "fieldset",
    "form",
    "legend",
    "optgroup",
    "option",
    "p",
    "pre",
    "table",
    "td",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
)
#: Pages with more paragraph elements than this get trafilatura without the comparison
#: (4 of the 5,193 developer pages; the quadratic worst case there is 2.4-5.4 s).
MAX_COMPARED_PARAGRAPHS = 5_000


class Bound(StrEnum):
    """How trafilatura's work on a page was bounded (``Document.trafilatura_bounded``)."""

    #: trafilatura ran with ``fast=True``: no readability/jusText comparison.
    NO_COMPARISON = "no_comparison"
    #: The stacked model read "no reference": trafilatura did not run for it.
    NO_REFERENCE = "no_reference"


def comparison_pays(tree: Any, limit: int = MAX_COMPARED_PARAGRAPHS) -> bool:
    """Whether ``tree`` has at most ``limit`` paragraph elements (counting stops past it)."""
    if tree is None or not hasattr(tree, "iter"):
        return True
    return next(islice(tree.iter(*PARAGRAPH_TAGS), limit, None), None) is None
