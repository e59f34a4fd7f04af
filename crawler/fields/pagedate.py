"""htmldate's ``find_date`` on a page, and the check of a bare year's guess, in one pass.

The metadata keeps htmldate's extensive answer unless it is a first of January that the
page's markup alone does not give (``real_date``): there ``find_date`` ran a
second time, without its free-text search, copying, cleaning and serialising the page and
scanning the string again (a third of a page's date search where it happens).

:func:`find_dates` follows ``htmldate.core.find_date`` of the htmldate this module knows
(:data:`KNOWN_HTMLDATE`), calling the same functions in the same order. For the second
answer it repeats only the steps whose answer depends on the free-text search setting
(those that may hand a text to the external date parser: meta tags, ``<abbr>``,
date-bearing elements, title and headings, ``<time>``); the others (the URL, JSON, the
pruned copy of the tree, its serialisation, the timestamp, image and idiosyncrasy
patterns) are functions of the page alone and are reused. Another htmldate runs
``find_date`` twice, as before. ``tests/test_pagedate.py`` compares both with htmldate.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from typing import Any

import htmldate
import lxml.html
from htmldate import core as hc
from htmldate.utils import Extractor
from htmldate.validators import get_max_date, get_min_date
from trafilatura.settings import set_date_params

#: The htmldate whose ``find_date`` :func:`find_dates` follows.
KNOWN_HTMLDATE = "1.11.0"
#: The ``find_date`` settings :class:`_Steps` reads (others, an output format among them,
#: go to ``find_date`` itself).
_PARAMS = frozenset(
    {"extensive_search", "original_date", "min_date", "max_date", "deferred_url_extractor"}
)
#: The first of January: a bare year's date (``real_date``).
NEW_YEAR = "-01-01"


def follows_htmldate() -> bool:
    """Whether the installed htmldate is the one :func:`find_dates` follows."""
    return getattr(htmldate, "__version__", None) == KNOWN_HTMLDATE and (
        all(hasattr(hc, name) for name in _STEPS)
    )


def find_dates(
    tree: lxml.html.HtmlElement,
    url: str | None,
    params: dict[str, Any],
    page_url: str | None,
    page_tree: lxml.html.HtmlElement | None = None,
) -> tuple[str | None, str | None]:
    """``find_date(tree, url=url, **params)``, and the date kept of it: the same unless it is
    a first of January that ``find_date(page_tree, url=page_url, **params)`` without the
    free-text search does not give too (then None). ``page_tree``: the tree the check reads
    when it is another (``tree`` with its JSON-LD bounded, ``metadata.bound_json_ld``)."""
    page_tree = tree if page_tree is None else page_tree
    if not follows_htmldate() or not _PARAMS.issuperset(params):
        found = hc.find_date(tree, url=url, **params)
        return found, _kept(found, params, lambda: _fast_date(page_tree, params, page_url))
    steps = _Steps(tree, params)
    found = steps.answer(steps.extensive, url)
    if page_tree is not tree or not steps.extensive.extensive:
        # Another tree, or a copy the first answer pruned further: find_date on its own.
        return found, _kept(found, params, lambda: _fast_date(page_tree, params, page_url))
    return found, _kept(found, params, lambda: steps.answer(steps.fast, page_url))


def _kept(
    found: str | None, params: dict[str, Any], markup: Callable[[], str | None]
) -> str | None:
    """``found``, unless it is the free-text search's guess from a bare year: a first of
    January that ``markup()`` (the answer without that search) does not give."""
    if not found or not found.endswith(NEW_YEAR):
        return found or None
    return found if markup() == found else None


def _fast_date(tree: lxml.html.HtmlElement, params: dict[str, Any], url: str | None) -> str | None:
    """``find_date`` without its free-text search."""
    return hc.find_date(tree, **{**params, "extensive_search": False, "url": url})


def real_date(date: str | None, tree: lxml.html.HtmlElement, url: str | None) -> str | None:
    """``date`` unless it is htmldate's guess from a bare year.

    With nothing better, htmldate's extensive search returns YYYY-01-01 from a footer's
    "(c) 2026" or any lone year: not a publication date. A first of January is kept only
    when the page's markup (no free-text search) gives it too.
    """
    if not date or not date.endswith("-01-01"):
        return date or None
    params = {**set_date_params(extensive=False), "url": url}
    # No copy: find_date copies what it prunes.
    return date if hc.find_date(tree, **params) == date else None


class _Steps:
    """``find_date``'s steps on one page; those that do not depend on the extensive
    setting run once for both answers (the URL's once per URL)."""

    def __init__(self, tree: lxml.html.HtmlElement, params: dict[str, Any]):
        extensive = params.get("extensive_search", True)
        self.extensive = Extractor(
            extensive,
            get_max_date(params.get("max_date")),
            get_min_date(params.get("min_date")),
            params.get("original_date", False),
            "%Y-%m-%d",
        )
        self.fast = Extractor(False, *(getattr(self.extensive, f) for f in _LIMITS))
        self.tree = tree
        self.deferred = params.get("deferred_url_extractor", False)
        self._memo: dict[str, Any] = {}

    def _once(self, name: str, call: Callable[[], Any]) -> Any:
        if name not in self._memo:
            self._memo[name] = call()
        return self._memo[name]

    def search_tree(self) -> lxml.html.HtmlElement:
        def prune() -> lxml.html.HtmlElement:
            pruning_tree = deepcopy(self.tree)
            try:
                return hc.discard_unwanted(hc.clean_html(pruning_tree, hc.CLEANING_LIST))
            # As htmldate: a rare lxml error (NULL bytes or control characters).
            except ValueError:  # pragma: no cover
                return pruning_tree

        return self._once("tree", prune)

    def answer(self, options: Extractor, url: str | None) -> str | None:
        """What ``find_date`` answers with these options and this URL."""
        if url is None:
            urlelem = self.tree.find('.//link[@rel="canonical"]')
            if urlelem is not None:
                url = urlelem.get("href")
        url_result = self._once(f"url {url}", lambda: hc.extract_url_date(url, options))
        if url_result is not None and not self.deferred:
            return url_result
        result = hc.examine_header(self.tree, options) or self._once(
            "json", lambda: hc.json_search(self.tree, options)
        )
        if result is not None:
            return result
        if self.deferred and url_result is not None:
            return url_result
        result = hc.examine_abbr_elements(self.tree, options)
        if result is not None:
            return result
        search_tree = self.search_tree()
        result = (
            hc.examine_elements(hc.date_candidates(search_tree, options.extensive), options)
            or hc.examine_elements(search_tree.xpath(".//title|.//h1"), options)
            or hc.examine_time_elements(search_tree, options)
        )
        if result is not None:
            return result
        htmlstring: str = self._once("string", lambda: hc.serialize(search_tree))
        result = self._once(
            "patterns",
            lambda: (
                hc.pattern_search(htmlstring, hc.TIMESTAMP_PATTERN, options)
                or hc.img_search(search_tree, options)
                or hc.idiosyncrasies_search(htmlstring, options)
            ),
        )
        if result is not None:
            return result
        if not options.extensive:
            # As htmldate: this prunes the copy further, the last step that reads it.
            hc.clean_html(search_tree, ["script", "style"])
            text = " ".join(search_tree.itertext())
            return hc.pattern_search(text, hc.TIMESTAMP_LOOSE_PATTERN, options)
        reference = None
        for segment in hc.FREE_TEXT_EXPRESSIONS(search_tree):
            segment = segment.strip()
            if hc.MIN_SEGMENT_LEN < len(segment) < hc.MAX_SEGMENT_LEN:
                reference = hc.compare_reference(reference, segment, options)
        converted = hc.check_extracted_reference(reference, options)
        return converted or hc.search_page(htmlstring, options)


#: The parts of ``htmldate.core`` that :class:`_Steps` calls.
_STEPS = (
    "CLEANING_LIST", "FREE_TEXT_EXPRESSIONS", "MAX_SEGMENT_LEN", "MIN_SEGMENT_LEN",
    "TIMESTAMP_LOOSE_PATTERN", "TIMESTAMP_PATTERN", "check_extracted_reference", "clean_html",
    "compare_reference", "date_candidates", "discard_unwanted", "examine_abbr_elements",
    "examine_elements", "examine_header", "examine_time_elements", "extract_url_date",
    "idiosyncrasies_search", "img_search", "json_search", "pattern_search", "search_page",
    "serialize",
)  # fmt: skip
#: ``Extractor``'s fields after ``extensive``, in its order.
_LIMITS = ("max", "min", "original", "format")
