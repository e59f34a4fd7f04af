"""The article's keywords as its publisher tags them, for ``Document.tags``.

Publishers name an article's topics in ``article:tag`` tags, ``news_keywords`` and
``keywords`` meta tags and the JSON-LD ``keywords`` of the article; the first of these the
page gives is taken (trafilatura's tag search, which also reads links in the page, is the
fallback). Identifiers and CMS bookkeeping that some sites put there ("8f50...-...",
"NLP Category: General", "Category: Travel" beside the real keywords) are left out.
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
    return out[:MAX_KEYWORDS]


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
