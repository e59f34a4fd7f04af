"""Categories and tags as ``trafilatura.metadata.extract_catstags`` finds them, in a fraction of
the time.

trafilatura evaluates up to six expressions of the form ``//div[class test]//a[@href]`` on the
whole tree, keeping the links whose ``href`` names a category (tag) folder; on most pages no
link does, and every expression runs for nothing (~5 ms a search on a median developer page,
two searches a page). The same answer comes from the other end: the few links whose ``href``
matches, in document order, each kept for the first expression with a matching ancestor
(``//X//a`` is the links below an X). The container tests are trafilatura's, but its EXSLT
regular expressions anchored at the start (``re:test(@class, '^(?:meta|...)')``, a call into
Python per element) are ``starts-with()`` for each alternative. ``tests/test_metadata_fast.py``
checks the answers against trafilatura's; ``benchmarks.metadata_equivalence`` on every
developer page.
"""

from __future__ import annotations

import re

import lxml.html
from lxml.etree import XPath
from trafilatura.baseline import block_text
from trafilatura.utils import line_processing


def _starts(*prefixes: str) -> str:
    return " or ".join(f"starts-with(@class, '{prefix}')" for prefix in prefixes)


#: '^(?:post-?info|post-?meta|meta|entry-meta|entry-info|entry-utility)'
_CATEGORY_CLASSES = _starts(
    "postinfo", "post-info", "postmeta", "post-meta", "meta", "entry-meta", "entry-info",
    "entry-utility",
)  # fmt: skip
#: '^(?:tag|postmeta|meta)'
_TAG_CLASSES = _starts("tag", "postmeta", "meta")

#: The containers of trafilatura's ``CATEGORIES_XPATHS`` and ``TAGS_XPATHS``, in order, as
#: tests on a link's ancestors.
CATEGORY_CONTAINERS = [
    f"div[{_CATEGORY_CLASSES} or starts-with(@id, 'postpath')]",
    "p[starts-with(@class, 'postmeta') or starts-with(@class, 'entry-categories') or "
    "@class='postinfo' or @id='filedunder']",
    "footer[starts-with(@class, 'entry-meta') or starts-with(@class, 'entry-footer')]",
    "*[self::li or self::span][@class='post-category' or @class='postcategory' or "
    "@class='entry-category' or contains(@class, 'cat-links')]",
    "header[@class='entry-header']",
    "div[@class='row' or @class='tags']",
]
TAG_CONTAINERS = [
    "div[@class='tags']",
    "p[starts-with(@class, 'entry-tags')]",
    f"div[@class='row' or @class='jp-relatedposts' or @class='entry-utility' or {_TAG_CLASSES}]",
    "*[@class='entry-meta' or contains(@class, 'topics') or contains(@class, 'tags-links')]",
]
_TESTS = {
    kind: [XPath(f"boolean(ancestor::{container})") for container in containers]
    for kind, containers in (("category", CATEGORY_CONTAINERS), ("tag", TAG_CONTAINERS))
}
#: Every link the href pattern may accept contains this ("/tag(?:y|ies|s)?/" needs "/tag").
_LINKS = {
    "category": XPath("//a[contains(@href, '/categor')]"),
    "tag": XPath("//a[contains(@href, '/tag')]"),
}
_SECTION = XPath(
    './/head//meta[@property="article:section" or contains(@name, "subject")][@content]'
)


def extract_catstags(metatype: str, tree: lxml.html.HtmlElement) -> list[str]:
    """``trafilatura.metadata.extract_catstags(metatype, tree)`` for "category" and "tag"."""
    results: list[str] = []
    regexpr = "/" + metatype.rstrip("y") + "(?:y|ies|s)?/"
    links = [a for a in _LINKS[metatype](tree) if re.search(regexpr, a.attrib["href"])]
    if links:
        for test in _TESTS[metatype]:
            results.extend(block_text(a) for a in links if test(a))
            if results:
                break
    if metatype == "category" and not results:
        results.extend(element.attrib["content"] for element in _SECTION(tree))
    return [r for r in dict.fromkeys(line_processing(x) for x in results if x) if r]
