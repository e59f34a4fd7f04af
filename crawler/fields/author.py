"""The page's author as ``trafilatura.metadata.extract_author`` finds it, in a fifth of the time.

trafilatura copies the whole tree, deletes comment sections, dates, figures and the like
(``AUTHOR_DISCARD_XPATHS``) from the copy, then runs three XPath expressions whose EXSLT
regular expressions call back into Python for every element with a class or id (the slowest
step of the metadata by far; ``benchmarks.metadata_equivalence`` times both). The same answer
comes from:

1. one XPath (evaluated in C) reads the attributes the three expressions test, and one regular
   expression picks every element they could match, usually none to a handful;
2. the exact tests of the three expressions, in Python, on those few elements;
3. for a match, the deletions trafilatura would make, checked on its ancestors (a deleted
   ancestor removes it) and applied to a copy of its own subtree only (deleted descendants
   take their text out but leave their tail, as ``trafilatura.xml.delete_element`` does).

``tests/test_metadata_fast.py`` checks it gives trafilatura's answer on the fixture pages;
``python -m benchmarks.metadata_equivalence --data ../shared/data`` on every developer page.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable

import lxml.etree
import lxml.html
from trafilatura.metadata import normalize_authors
from trafilatura.utils import trim
from trafilatura.xml import delete_element

#: Longest author string kept, as ``extract_author`` asks of ``extract_metainfo``.
AUTHOR_MAX_CHARS = 120

#: The attributes the three author expressions test.
_ATTRIBUTES = ("class", "id", "itemprop", "data-component", "rel", "data-testid")
#: Every value that may make an element match: each regular expression and exact test of the
#: three expressions needs one of these substrings in one of those attributes.
_SUPERSET_WORDS = (
    "uthor",
    "yline",
    "writer",
    "screenname",
    "channel-name",
    "zuozhe",
    "bianji",
    "xiaobian",
    "submitted-by",
    "posted-by",
    "journalist-name",
)
_SUPERSET_EXACT = ("username", "byl", "BBL")
_SUPERSET_VALUE = re.compile(
    "|".join((*_SUPERSET_WORDS, *(f"^{word}$" for word in _SUPERSET_EXACT)))
)
#: Those attributes with their elements, read in one pass evaluated in C (an XPath testing
#: each element with ``contains()`` instead costs as much as trafilatura's own expressions).
#: libxml2 merges a union's node sets in time quadratic in their sizes: on pages of more
#: than ``UNION_MAX_ELEMENTS`` elements only the attributes holding a superset word are
#: united (each test in C, slower on a small page, linear on a huge one).
_ATTRIBUTE_NODES = lxml.etree.XPath(
    "|".join(f"descendant-or-self::*/@{name}" for name in _ATTRIBUTES)
)
_SUPERSET_TEST = " or ".join(
    [
        *(f"contains(., '{word}')" for word in _SUPERSET_WORDS),
        *(f".='{word}'" for word in _SUPERSET_EXACT),
    ]
)
_SUPERSET_NODES = lxml.etree.XPath(
    "|".join(f"descendant-or-self::*/@{name}[{_SUPERSET_TEST}]" for name in _ATTRIBUTES)
)
UNION_MAX_ELEMENTS = 5_000
_ELEMENTS = lxml.etree.XPath("count(descendant-or-self::*)")
#: The two tests on elements rather than attributes: ``//author`` and ``rel='me'``.
_ODD_ELEMENTS = lxml.etree.XPath("descendant-or-self::author|descendant-or-self::rel")

_FIRST_TAGS = frozenset({"a", "address", "div", "link", "p", "span", "strong"})
_FIRST_CLASS = re.compile("author-?name|AuthorName|authorName")
_SECOND_TAGS = frozenset({"a", "div", "h3", "h4", "p", "span"})
_SECOND_CLASSES = frozenset({"byline", "username", "byl", "BBL"})
_SECOND_ID = re.compile("author|zuozhe|bianji|xiaobian")
_SECOND_CLASS = re.compile(
    "author|channel-name|zuozhe|bianji|xiaobian|submitted-by|posted-by|journalist-name"
)
_THIRD_ID = re.compile("[Aa]uthor")
_THIRD_CLASS = re.compile("[Aa]uthor|screenname|writer|[Bb]yline")

_DISCARD_TAGS = frozenset({"a", "div", "section", "span"})
_DISCARD_CLASSES = frozenset({"comments", "title", "date"})
_DISCARD_ID = re.compile("^comments|comment-?list|ProductReviews")
_DISCARD_CLASS = re.compile(
    "^[Cc]omments|commentlist|comments-list|sidebar|is-hidden|quote|embedly-instagram"
    "|article-(?:share|support)|print|category|meta-date|meta-reviewer"
)


def _first(el: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> bool:
    if el.tag == "author":
        return True
    if el.tag not in _FIRST_TAGS:
        return False
    cls, get = el.get("class", ""), el.get
    return (
        get("rel") == "author"
        or get("id") == "author"
        or cls == "author"
        or get("itemprop") == "author name"
        or _has_rel_me(el, root)
        or get("data-testid") in ("AuthorCard", "AuthorURL")
        or bool(_FIRST_CLASS.search(cls))
    )


def _has_rel_me(el: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> bool:
    """XPath's ``rel='me'`` (sic in trafilatura): a child element <rel> whose text, once the
    discarded sections are deleted, is "me"."""
    return any("".join(_pruned(child, root).itertext()) == "me" for child in el.iterchildren("rel"))


def _second(el: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> bool:
    if el.tag not in _SECOND_TAGS:
        return False
    cls = el.get("class", "")
    return (
        cls in _SECOND_CLASSES
        or "author" in el.get("itemprop", "")
        or bool(_SECOND_ID.search(el.get("id", "")))
        or bool(_SECOND_CLASS.search(cls))
    )


def _third(el: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> bool:
    return (
        "Byline" in el.get("data-component", "")
        or "author" in el.get("itemprop", "")
        or bool(_THIRD_ID.search(el.get("id", "")))
        or bool(_THIRD_CLASS.search(el.get("class", "")))
    )


_Test = Callable[[lxml.html.HtmlElement, lxml.html.HtmlElement], bool]
_EXPRESSIONS: tuple[_Test, ...] = (_first, _second, _third)


def _discarded(el: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> bool:
    """Whether ``AUTHOR_DISCARD_XPATHS`` delete ``el`` (never the root: it has no parent)."""
    if el is root:
        return False
    if el.tag in ("time", "figure"):
        return True
    if el.tag not in _DISCARD_TAGS:
        return False
    cls = el.get("class", "")
    return (
        el.get("id") == "comments"
        or cls in _DISCARD_CLASSES
        or bool(_DISCARD_ID.search(el.get("id", "")))
        or bool(_DISCARD_CLASS.search(cls))
        or "Figure" in el.get("data-component", "")
    )


def _survives(el: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> bool:
    """Whether ``el`` is still in the tree once the discarded sections are deleted."""
    while el is not root:
        if _discarded(el, root):
            return False
        el = el.getparent()
    return True


def _pruned(el: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """``el``, or a copy of it without the discarded sections below it."""
    doomed = [d for d in el.iterdescendants() if isinstance(d.tag, str) and _discarded(d, root)]
    if not doomed:
        return el
    # Deletions change how text and tails join: make them on a copy of this subtree only, in
    # document order, with trafilatura's own function.
    positions = {d: i for i, d in enumerate(el.iterdescendants())}
    wanted = {positions[d] for d in doomed}
    pruned = copy.deepcopy(el)
    for i, d in enumerate(list(pruned.iterdescendants())):
        if i in wanted:
            delete_element(d)
    return pruned


def _pruned_text(el: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> str:
    """``trim(" ".join(el.itertext()))`` once the discarded sections below it are deleted."""
    return str(trim(" ".join(_pruned(el, root).itertext())))


def _candidates(tree: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """In document order, the elements of ``tree`` the three expressions may match."""
    if _ODD_ELEMENTS(tree):
        return [el for el in tree.iter() if isinstance(el.tag, str)]
    nodes = _ATTRIBUTE_NODES if _ELEMENTS(tree) <= UNION_MAX_ELEMENTS else _SUPERSET_NODES
    found = (a.getparent() for a in nodes(tree) if _SUPERSET_VALUE.search(a))
    return list(dict.fromkeys(found))


def extract_author(tree: lxml.html.HtmlElement) -> str | None:
    """``trafilatura.metadata.extract_author(tree)``; the tree is not modified."""
    candidates = _candidates(tree)
    if not candidates:
        return None
    # trafilatura searches a copy of ``tree``: elements outside it (a second <html> after
    # the first in a broken page) are not searched.
    root = tree
    for expression in _EXPRESSIONS:
        for el in candidates:
            if not expression(el, root) or not _survives(el, root):
                continue
            content = _pruned_text(el, root)
            if content and 2 < len(content) < AUTHOR_MAX_CHARS:
                author: str | None = normalize_authors(None, content)
                return author
    return None
