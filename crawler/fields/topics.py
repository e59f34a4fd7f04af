"""The article's keywords as its publisher tags them, for ``Document.tags``.

Publishers name an article's topics in ``article:tag`` tags, ``news_keywords`` and
``keywords`` meta tags and the JSON-LD ``keywords`` of the article; the first of these the
page gives is taken. An article whose data name none often shows them as a list of links
after its text ("articleTags", "entry-tags"): :func:`page_tag_list` reads it (trafilatura's
tag search, links to "/tag/" folders in a few named containers, is the last fallback).
Identifiers and CMS bookkeeping that some sites put there ("8f50...-...", "NLP Category:
General", "Category: Travel" beside the real keywords, facets such as "Day: Friday" beside
"Subject: Justice", a news agency's subject codes: "AER", "AIRS08") are left out. Section
and site words the publisher lists among its keywords stay: fundus's parsers keep them too
(on the tuning folds, taking out the words of the page's menus or the site's name lowered
the topics' Jaccard from 0.658 to 0.564 and 0.650). Categories above ``MAX_SECTIONS`` are
a menu and are left out. Scrapy-free.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import lxml.etree
import lxml.html
from scrapy_maintext.fields.structured import ARTICLE_TYPES, MAX_JSON_LD_CHARS

#: Meta tags read, in the order they are believed.
META_KEYWORDS = ("article:tag", "news_keywords", "keywords", "parsely-tags")
#: Keywords kept per page at most; longer values are no keyword.
MAX_KEYWORDS = 30
MAX_KEYWORD_CHARS = 80

#: Terms of the form "Label: value" that make a keyword list a list of facets.
MIN_FACETS = 2
#: Facet labels whose values are keywords.
SUBJECT_LABELS = frozenset(
    {"subject", "subjects", "topic", "topics", "tag", "tags", "keyword", "keywords"}
)
#: Categories above this many are a menu's links, not the article's sections.
MAX_SECTIONS = 4
#: Terms at least, for a list of subject codes (``_codes``).
MIN_CODES = 12
_CODE = re.compile(r"^[A-Z0-9][A-Z0-9:_-]*$")
_FACET = re.compile(r"^([^:]{1,30}):\s+(\S.*)$")

#: A tag list's terms: at most this long, in characters and words.
MAX_TAG_CHARS = 60
MAX_TAG_WORDS = 6
#: Text of a tag list beside its links (a heading; separators), in characters.
MAX_TAG_LIST_TEXT = 40
#: Elements that may be a tag list looked at, at most, per page.
MAX_TAG_CANDIDATES = 50
_TAG_WORD = re.compile(r"(?:tag|topic)s?(?![a-z])")
_MENU_WORD = re.compile(r"trend|menu|navi?(?![a-z])|header")
#: What an attribute's value or name (``data-test-tags-box``) holds where it may name a tag
#: list, tested in C with ``contains()`` (a case-folding ``translate()`` costs more: see
#: docs/benchmarks.md); ``_TAG_WORD`` then decides on the element's class, id and data
#: attributes.
_TAG_SUBSTRINGS = ("tag", "Tag", "opic")
_TAG_TEST = "[{} or contains(name(), 'tag')]".format(
    " or ".join(f"contains(., '{w}')" for w in _TAG_SUBSTRINGS)
)
_TAG_ATTRIBUTES = lxml.etree.XPath(f"//body//*/@*{_TAG_TEST}")
_TAG_ATTRIBUTES_AFTER = lxml.etree.XPath(f"following::*/@*{_TAG_TEST}")
_META = lxml.etree.XPath("//meta[@content]")
_JSON_LD = lxml.etree.XPath('//script[@type="application/ld+json"]')
#: A JSON-LD type, and the first of a list of types.
_LD_TYPE = re.compile(r'"@type"\s*:\s*\[?\s*"([^"]{1,40})"')
_BOOKKEEPING = re.compile(
    r"^(?:[0-9a-f]{8}-[0-9a-f]{4}-|nlp\b|[a-z ]*category\s*:|primary\b|region\b|https?:)", re.I
)


def page_keywords(tree: lxml.html.HtmlElement) -> list[str]:
    """The keywords of the first source in ``META_KEYWORDS`` that gives some, else those of
    the page's JSON-LD article, else, on a page that says it is an article (``og:type`` or
    a JSON-LD article type), its tag list (:func:`page_tag_list`); [] when none does."""
    by_source: dict[str, list[str]] = {}
    article = False
    for meta in _META(tree):
        name = (meta.get("property") or meta.get("name") or "").strip().lower()
        if name in META_KEYWORDS:
            by_source.setdefault(name, []).extend(_split(meta.get("content", "")))
        elif name == "og:type":
            article = article or "article" in meta.get("content", "").lower()
    for name in META_KEYWORDS:
        keywords = _clean(by_source.get(name, []))
        if keywords:
            return keywords
    scripts = [script.text or "" for script in _JSON_LD(tree)]
    keywords = _clean(_json_ld_keywords(scripts))
    if keywords:
        return keywords
    # The tag list's search reads every attribute after the headline: only on articles.
    if article or any(_declares_article(text) for text in scripts):
        return _clean(page_tag_list(tree))
    return []


def _declares_article(text: str) -> bool:
    """Whether a JSON-LD block names an article type (``"@type": "NewsArticle"``)."""
    return any(kind.lower() in ARTICLE_TYPES for kind in _LD_TYPE.findall(text[:MAX_JSON_LD_CHARS]))


def page_tag_list(tree: lxml.html.HtmlElement) -> list[str]:
    """The link texts of the article's tag list, for pages whose data name no keywords: the
    first element after the headline whose class, id or data attributes name tags or topics
    ("articleTags", ``data-component="tags"``, "related-topics") and that holds
    only short links (``_tag_links``; a link named so stands for its parent); a menu of the
    site ("trending-topics", "nav") is no tag list. Of nested such elements, the innermost
    that still holds the links (less one at most). At most ``MAX_TAG_CANDIDATES`` elements
    are looked at."""
    found: list[tuple[lxml.html.HtmlElement, list[str]]] = []
    for element in _tag_containers(tree)[:MAX_TAG_CANDIDATES]:
        if found and not _within(element, found[0][0]):
            break
        words = " ".join(
            f"{name} {value}"
            for name, value in element.attrib.items()
            if name in ("class", "id") or name.startswith("data-")
        ).lower()
        if not _TAG_WORD.search(words) or _MENU_WORD.search(words):
            continue
        container = element.getparent() if element.tag == "a" else element
        if container is None or (found and container is found[-1][0]):
            continue
        links = _tag_links(container)
        if links:
            found.append((container, links))
    if not found:
        return []
    outer = len(found[0][1])
    inner = [links for _, links in found if len(links) >= min(outer, max(2, outer - 1))]
    return inner[-1]


def _tag_containers(tree: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """Elements after the first <h1> (of the whole page without one) with an attribute that
    may name a tag list (``_TAG_WORD`` decides), in document order."""
    heading = tree.find(".//h1")
    attributes = _TAG_ATTRIBUTES_AFTER(heading) if heading is not None else _TAG_ATTRIBUTES(tree)
    return list(dict.fromkeys(attribute.getparent() for attribute in attributes))


def _within(element: lxml.html.HtmlElement, ancestor: lxml.html.HtmlElement) -> bool:
    return any(parent is ancestor for parent in element.iterancestors())


def _tag_links(element: lxml.html.HtmlElement) -> list[str]:
    """The texts of the links in ``element`` when it holds 1 to ``MAX_KEYWORDS`` links, each
    a short term, and little text besides (a heading: "Schlagworte", "Mehr zum Thema");
    else []. Links within the page ("#...": "skip this section") are no terms."""
    anchors = list(itertools.islice(element.iter("a"), MAX_KEYWORDS + 1))
    anchors = [a for a in anchors if not a.get("href", "#").startswith("#")]
    if not anchors or len(anchors) > MAX_KEYWORDS:
        return []
    texts = [" ".join(a.text_content().split()).strip("#,;| ") for a in anchors]
    if not all(0 < len(t) <= MAX_TAG_CHARS and len(t.split()) <= MAX_TAG_WORDS for t in texts):
        return []
    rest = len(" ".join(element.text_content().split())) - sum(len(t) for t in texts)
    if rest > MAX_TAG_LIST_TEXT + 3 * len(texts):
        return []
    return texts


def without_facets(terms: list[str]) -> list[str]:
    """Keywords without a CMS's facets: where at least ``MIN_FACETS`` terms read "Label:
    value" ("Day: Friday", "WC: 1000-1999", "Subject: Justice"), the values of subject
    labels are the keywords and the other facets are left out; where facets are most of the
    list, a term without a label is a facet without its value ("Medium" among "Day: Friday",
    "Page Type: Article") and is left out too. A list with fewer such terms is kept as it is
    (a keyword may hold a colon: "Star Wars: Andor")."""
    facets = [_FACET.match(term) for term in terms]
    labelled = sum(match is not None for match in facets)
    if labelled < MIN_FACETS:
        return terms
    out = []
    for term, match in zip(terms, facets, strict=True):
        if match is None:
            if labelled * 2 <= len(terms):
                out.append(term)
        elif match.group(1).strip().casefold() in SUBJECT_LABELS:
            out.append(match.group(2).strip())
    return out


def sections(categories: list[str]) -> list[str]:
    """The article's sections: ``categories`` unless they are more than ``MAX_SECTIONS``
    (then they are the links of a menu: "Canada, World, NP Comment, Longreads, Life,
    Shopping" from every page of a site)."""
    return categories if len(categories) <= MAX_SECTIONS else []


def _split(value: str) -> list[str]:
    return [part for part in re.split(r"[,;]", value) if part.strip()]


def _clean(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        term = " ".join(value.split())
        if not term or len(term) > MAX_KEYWORD_CHARS or _BOOKKEEPING.match(term):
            continue
        if term.casefold() not in (t.casefold() for t in out):
            out.append(term)
    return [] if _codes(out) else without_facets(out[:MAX_KEYWORDS])


def _codes(terms: list[str]) -> bool:
    """Whether a keyword list is a news agency's subject codes ("AER", "AIRS08", "INDG08",
    "RSBI:HUMAN-RIGHTS"): at least ``MIN_CODES`` terms, most in capitals without a space,
    two of them mixing letters and digits. No reader's keywords: the next source is read."""
    if len(terms) < MIN_CODES:
        return False
    codes = [term for term in terms if _CODE.match(term)]
    mixed = sum(bool(re.search("[A-Z]", c) and re.search("[0-9]", c)) for c in codes)
    return mixed >= 2 and len(codes) * 5 >= len(terms) * 4


def _json_ld_keywords(scripts: list[str]) -> list[str]:
    """The keywords of the first JSON-LD article among the texts of ``scripts`` giving some."""
    for text in scripts:
        if '"keywords"' not in text or len(text) > MAX_JSON_LD_CHARS:
            continue
        try:
            data = json.loads(text, strict=False)
        except (ValueError, RecursionError):
            continue
        for obj in _articles(data):
            value = obj.get("keywords")
            if isinstance(value, str):
                return _split(value)
            if isinstance(value, list):
                return [v for v in value if isinstance(v, str)]
    return []


def _articles(data: Any) -> list[dict[str, Any]]:
    """The article objects of a JSON-LD block: the block itself or its ``@graph``."""
    items = data if isinstance(data, list) else [data]
    graph = [g for item in items if isinstance(item, dict) for g in item.get("@graph", [])]
    out = []
    for item in [*items, *graph]:
        if not isinstance(item, dict):
            continue
        kinds = item.get("@type")
        names = kinds if isinstance(kinds, list) else [kinds]
        if any(isinstance(k, str) and k.lower() in ARTICLE_TYPES for k in names):
            out.append(item)
    return out
