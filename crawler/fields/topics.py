"""The article's keywords as its publisher tags them, for ``Document.tags``.

Publishers name an article's topics in ``article:tag`` tags, ``news_keywords`` and
``keywords`` meta tags and the JSON-LD ``keywords`` of the article; the first of these the
page gives is taken (trafilatura's tag search, which also reads links in the page, is the
fallback). Identifiers and CMS bookkeeping that some sites put there ("8f50...-...",
"NLP Category: General", "Category: Travel" beside the real keywords, facets such as
"Day: Friday" beside "Subject: Justice") are left out. Section and site words the publisher
lists among its keywords stay: fundus's parsers keep them too (on the tuning folds, taking
out the words of the page's menus or the site's name lowered the topics' Jaccard from 0.658
to 0.564 and 0.650). Categories above ``MAX_SECTIONS`` are a menu and are left out.
Scrapy-free.
"""

from __future__ import annotations

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
_FACET = re.compile(r"^([^:]{1,30}):\s+(\S.*)$")

_META = lxml.etree.XPath("//meta[@content]")
_JSON_LD = lxml.etree.XPath('//script[@type="application/ld+json"]')
_BOOKKEEPING = re.compile(
    r"^(?:[0-9a-f]{8}-[0-9a-f]{4}-|nlp\b|[a-z ]*category\s*:|primary\b|region\b|https?:)", re.I
)


def page_keywords(tree: lxml.html.HtmlElement) -> list[str]:
    """The keywords of the first source in ``META_KEYWORDS`` that gives some, else those of
    the page's JSON-LD article; [] when none does."""
    by_source: dict[str, list[str]] = {}
    for meta in _META(tree):
        name = (meta.get("property") or meta.get("name") or "").strip().lower()
        if name in META_KEYWORDS:
            by_source.setdefault(name, []).extend(_split(meta.get("content", "")))
    for name in META_KEYWORDS:
        keywords = _clean(by_source.get(name, []))
        if keywords:
            return keywords
    return _clean(_json_ld_keywords(tree))


def without_facets(terms: list[str]) -> list[str]:
    """Keywords without a CMS's facets: where at least ``MIN_FACETS`` terms read "Label:
    value" ("Day: Friday", "WC: 1000-1999", "Subject: Justice"), the values of subject
    labels are the keywords and the other facets are left out; a list with fewer such terms
    is kept as it is (a keyword may hold a colon: "Star Wars: Andor")."""
    facets = [_FACET.match(term) for term in terms]
    if sum(match is not None for match in facets) < MIN_FACETS:
        return terms
    out = []
    for term, match in zip(terms, facets, strict=True):
        if match is None:
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
    return without_facets(out[:MAX_KEYWORDS])


def _json_ld_keywords(tree: lxml.html.HtmlElement) -> list[str]:
    for script in _JSON_LD(tree):
        text = script.text or ""
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
