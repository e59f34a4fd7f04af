"""What a page says about itself in structured markup, source by source, bounded.

Each source (a JSON-LD property, an OpenGraph or ``article:*`` tag, Dublin Core, microdata,
``<title>``, the first ``<h1>``, the days written beside it (``textdates``), ...) gives at
most one value per field; which source is believed first is decided by how often each
proved right on labelled pages (``scrapy_maintext.fields.metadata_rules``, measured by
``benchmarks.metadata``).

Hostile markup costs neither memory nor the page: JSON-LD blocks above
:data:`MAX_JSON_LD_CHARS` are not parsed, nesting beyond what ``json`` accepts is caught,
the walk visits at most :data:`MAX_JSON_LD_NODES` nodes, and a value longer than
:data:`MAX_VALUE_CHARS` is no title, name or date.
"""

from __future__ import annotations

import datetime
import html
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import lxml.etree
import lxml.html
from scrapy_maintext.fields.textdates import heading_dates, parse_day

#: JSON-LD blocks longer than this are not parsed (chars). Real blocks are far smaller
#: (a product page with reviews: ~100 KB); an 8 MB ``author`` is an attack or a bug.
MAX_JSON_LD_CHARS = 1_000_000
#: Nodes of all JSON-LD blocks of a page visited at most.
MAX_JSON_LD_NODES = 5_000
#: Longer strings are no title, author name or date.
MAX_VALUE_CHARS = 300
#: Authors kept from one list.
MAX_AUTHORS = 8

#: Types of the object whose headline, author and date are the page's.
ARTICLE_TYPES = frozenset(
    {
        "article",
        "newsarticle",
        "blogposting",
        "reportagenewsarticle",
        "analysisnewsarticle",
        "opinionnewsarticle",
        "techarticle",
        "scholarlyarticle",
        "liveblogposting",
        "socialmediaposting",
        "discussionforumposting",
        "review",
        "recipe",
        "howto",
        "webpage",
        "itempage",
        "qapage",
        "medicalwebpage",
        "creativework",
        "videoobject",
        "podcastepisode",
    }
)

_JSON_LD = lxml.etree.XPath('//script[@type="application/ld+json"]')
_META = lxml.etree.XPath("//meta[@content]")
_TITLE = lxml.etree.XPath("(//head/title|//title)[1]")
_H1 = lxml.etree.XPath("//h1")
_TIME = lxml.etree.XPath("//time[@datetime]")
#: An element inside a picture's figure (its ``itemprop="author"`` is the picture's).
_IN_FIGURE = lxml.etree.XPath("boolean(ancestor::figure or ancestor::figcaption)")
#: An e-mail address alone, "mailto:" or not.
_EMAIL = re.compile(r"(?:mailto:)?[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)
#: A picture's credit: "Image:", "(Photo: ...", "Foto:", "Bild:" first.
_CREDIT = re.compile(r"\(?\s*(?:image|photo|picture|foto|bild|photograph)\s*:", re.IGNORECASE)
#: ``[@itemprop]`` first: libxml2 then tests the four values only on elements that have one.
_ITEMPROP = lxml.etree.XPath(
    "//*[@itemprop][@itemprop='author' or @itemprop='datePublished' or @itemprop='headline'"
    " or @itemprop='creator']"
)
_REL_AUTHOR = lxml.etree.XPath("//a[@rel='author']")
#: The source name of a byline's names.
BYLINE = "byline_text"
#: Text nodes whose first two letters can open :data:`_BYLINE_WORD` (by, von, par, por, written
#: by, words by; any case), chosen in libxml2: the regex then reads a handful of nodes, not
#: every text starting with one of those letters.
_BYLINE_NODES = lxml.etree.XPath(
    "//text()[contains('|by|vo|pa|po|wr|wo|', concat('|', translate("
    "substring(normalize-space(.), 1, 2), 'BYVOPARW', 'byvoparw'), '|'))]"
)
_BYLINE_WORD = re.compile(r"\s*(?i:by|von|par|por|written by|words by)\b")
_NAME = "[A-Z\u00c0-\u00de][\\w.'\u2019-]*"
_NAMES = f"{_NAME}(?:\\s+{_NAME}){{1,3}}"
_BYLINE = re.compile(
    f"^(?i:(?:written |words )?(?:by|von|par|por))\\s*:?\\s+"
    f"({_NAMES}(?:\\s*(?:,|\\band\\b|&|\\bund\\b|\\bet\\b|\\by\\b)\\s*{_NAMES})*)"
)
#: A "By ..." heading of a menu or a filter ("By Company Size"), not a byline: inside a menu,
#: or naming a kind of thing where a byline names a person.
_IN_MENU = lxml.etree.XPath(
    "boolean(ancestor::nav or ancestor::*[@role='menu' or @role='menubar' or @role='navigation'"
    " or contains(@class, 'menu') or contains(@class, 'dropdown')])"
)
_FACET = re.compile(
    r"\b(?i:types?|sizes?|industry|industries|category|categories|topics?|roles?|regions?"
    r"|use cases?|solutions?|products?|services?|needs?)$"
)
#: Text nodes looked at at most, and the longest byline text.
MAX_BYLINES = 50
MAX_BYLINE_CHARS = 120
_URL_DATE = re.compile(r"/((?:19|20)\d{2})[/-](0?[1-9]|1[0-2])[/-](0?[1-9]|[12]\d|3[01])(?:/|\b)")
_ISO_DATE = re.compile(r"((?:19|20)\d{2})-(\d{2})-(\d{2})")
_ISO_MOMENT = re.compile(
    r"((?:19|20)\d{2}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:[.,]\d+)?\s*"
    r"(Z|z|[+-]\d{2}:?\d{2})?(?!\d)"
)

#: Meta tags (``name`` or ``property``, lower case) read as each source.
META_SOURCES: dict[str, tuple[str, str]] = {
    "og:title": ("title", "og_title"),
    "twitter:title": ("title", "twitter_title"),
    "dc.title": ("title", "dc_title"),
    "dcterms.title": ("title", "dc_title"),
    "citation_title": ("title", "citation_title"),
    "parsely-title": ("title", "parsely_title"),
    "author": ("author", "meta_author"),
    "article:author": ("author", "article_author"),
    "dc.creator": ("author", "dc_creator"),
    "dcterms.creator": ("author", "dc_creator"),
    "citation_author": ("author", "citation_author"),
    "parsely-author": ("author", "parsely_author"),
    "sailthru.author": ("author", "parsely_author"),
    "twitter:creator": ("author", "twitter_creator"),
    "article:published_time": ("date", "article_published"),
    "og:published_time": ("date", "article_published"),
    "article:published": ("date", "article_published"),
    "date": ("date", "meta_date"),
    "pubdate": ("date", "meta_date"),
    "publishdate": ("date", "meta_date"),
    "publish-date": ("date", "meta_date"),
    "publication_date": ("date", "meta_date"),
    "sailthru.date": ("date", "meta_date"),
    "parsely-pub-date": ("date", "meta_date"),
    "dc.date": ("date", "dc_date"),
    "dc.date.issued": ("date", "dc_date"),
    "dcterms.date": ("date", "dc_date"),
    "dcterms.issued": ("date", "dc_date"),
    "dcterms.created": ("date", "dc_date"),
    "citation_publication_date": ("date", "dc_date"),
    "citation_date": ("date", "dc_date"),
    "ms.date": ("date", "meta_date"),
    "updated": ("date", "meta_updated"),
    "last-modified": ("date", "meta_updated"),
    "dcterms.modified": ("date", "meta_updated"),
    "article:modified_time": ("date", "modified"),
    "og:updated_time": ("date", "modified"),
    "og:site_name": ("sitename", "og_site_name"),
    "application-name": ("sitename", "application_name"),
}


@dataclass
class Candidates:
    """Per field, the value each source gives (the first it gives)."""

    title: dict[str, str] = field(default_factory=dict)
    author: dict[str, str] = field(default_factory=dict)
    date: dict[str, str] = field(default_factory=dict)
    sitename: dict[str, str] = field(default_factory=dict)
    #: Per date source, its date with the time and zone the page writes (``iso_moment``).
    moments: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, source: str, value: Any) -> None:
        if not isinstance(value, str):
            return
        if len(value) > MAX_VALUE_CHARS:
            return
        # JSON-LD and meta values often carry HTML entities ("&#8216;", "&amp;").
        value = " ".join(html.unescape(value).split())
        if not value:
            return
        if name == "author" and is_picture_credit(value):
            return
        if name == "date":
            moment = iso_moment(value)
            value = iso_day(value) or ""
            if not value:
                return
            if moment and moment.startswith(value):
                self.moments.setdefault(source, moment)
        values: dict[str, str] = getattr(self, name)
        values.setdefault(source, value)


def is_picture_credit(author: str) -> bool:
    """Whether an author value is a picture's credit ("Image: Getty Images") that a caption
    marked as its picture's author."""
    return bool(_CREDIT.match(author))


def is_email(value: str) -> bool:
    """Whether ``value`` is an e-mail address alone (a ``meta`` author filled from the
    writer's account: a name another source gives is better, the address better than none)."""
    return bool(_EMAIL.fullmatch(value))


def iso_moment(value: str) -> str | None:
    """An ISO 8601 date with its time ("2025-04-02T09:15:00+02:00", the zone when given,
    "Z" as "+00:00") from the start of ``value``, or None when it has no valid time."""
    match = _ISO_MOMENT.match(value.strip())
    if not match:
        return None
    day, hour, minute, second, zone = match.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    if zone and ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    text = f"{day}T{hour}:{minute}:{second or '00'}{zone or ''}"
    try:
        datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return text


def iso_day(value: str) -> str | None:
    """YYYY-MM-DD from the start of an ISO 8601 date or datetime, else of the first day
    written in ``value`` ("November 25, 2025"), else None."""
    match = _ISO_DATE.match(value.strip())
    if not match:
        return parse_day(value)
    month, day = int(match.group(2)), int(match.group(3))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return match.group(0)


def page_candidates(tree: lxml.html.HtmlElement, url: str | None) -> Candidates:
    """Every structured source of ``tree`` (not modified)."""
    found = Candidates()
    _json_ld(tree, found)
    _meta_tags(tree, found)
    _microdata(tree, found)
    _markup(tree, found)
    for source, day in heading_dates(tree).items():
        found.add("date", source, day)
    if url:
        match = _URL_DATE.search(url)
        if match:
            year, month, day = match.groups()
            found.add("date", "url_date", f"{year}-{int(month):02d}-{int(day):02d}")
    return found


def _meta_tags(tree: lxml.html.HtmlElement, found: Candidates) -> None:
    for meta in _META(tree):
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").lower()
        target = META_SOURCES.get(key.strip())
        if target is None:
            continue
        content = meta.get("content", "")
        if target[0] == "author" and content.lstrip().startswith(("http:", "https:", "@")):
            continue
        found.add(target[0], target[1], content)


def _text(el: lxml.html.HtmlElement) -> str:
    return " ".join(" ".join(el.itertext()).split())


def _markup(tree: lxml.html.HtmlElement, found: Candidates) -> None:
    for title in _TITLE(tree):
        found.add("title", "html_title", _text(title))
    h1s = _H1(tree)
    if h1s:
        found.add("title", "h1", _text(h1s[0]))
    for el in _TIME(tree)[:1]:
        found.add("date", "time_first", el.get("datetime", ""))
    for el in _REL_AUTHOR(tree)[:1]:
        found.add("author", "rel_author", _text(el))


def add_byline(tree: lxml.html.HtmlElement, found: Candidates) -> None:
    """The source :data:`BYLINE`: the names after "By" in the first short text that starts
    with it (not part of :func:`page_candidates`: ~2 ms, run where the rules need it)."""
    nodes = (node for node in _BYLINE_NODES(tree) if _BYLINE_WORD.match(node))
    for node in itertools.islice(nodes, MAX_BYLINES):
        parent = node.getparent()
        if parent is None or parent.tag in ("script", "style", "title"):
            continue
        text = " ".join(str(node).split())
        if len(text) <= len("By: "):
            # "By" alone in its node: the name is in the element after it ("By <a>Name</a>").
            text = " ".join(" ".join(parent.itertext()).split())
        if len(text) > MAX_BYLINE_CHARS:
            continue
        match = _BYLINE.match(text)
        if match and not _FACET.search(match.group(1)) and not _IN_MENU(parent):
            found.add("author", BYLINE, match.group(1))
            return


def _microdata(tree: lxml.html.HtmlElement, found: Candidates) -> None:
    for el in _ITEMPROP(tree)[:50]:
        prop = el.get("itemprop")
        if prop in ("author", "creator") and _IN_FIGURE(el):
            continue  # the picture's author (its credit), not the page's
        if prop == "datePublished":
            found.add("date", "microdata_date", el.get("content") or el.get("datetime") or "")
        elif prop == "headline":
            found.add("title", "microdata_headline", el.get("content") or _text(el))
        else:
            names = el.xpath(".//*[@itemprop='name']")
            value = (names[0].get("content") or _text(names[0])) if names else None
            found.add("author", "microdata_author", value or el.get("content") or _text(el))


# -- JSON-LD ----------------------------------------------------------------------------------


def _json_ld(tree: lxml.html.HtmlElement, found: Candidates) -> None:
    budget = [MAX_JSON_LD_NODES]
    for script in _JSON_LD(tree):
        text = script.text
        if not text or len(text) > MAX_JSON_LD_CHARS:
            continue
        try:
            data = json.loads(text, strict=False)
        # Deep nesting raises RecursionError in json's scanner: the block is ignored.
        except (ValueError, RecursionError):
            continue
        for obj in _objects(data, budget):
            _read_object(obj, found)


def _objects(data: Any, budget: list[int]) -> Iterator[dict[str, Any]]:
    """Every JSON object in ``data``, breadth first, without recursion, within ``budget``."""
    queue: list[Any] = [data]
    while queue and budget[0] > 0:
        item = queue.pop(0)
        budget[0] -= 1
        if isinstance(item, dict):
            yield item
            queue.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            queue.extend(v for v in item if isinstance(v, dict | list))


def _types(obj: dict[str, Any]) -> set[str]:
    kind = obj.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return {k.lower() for k in kinds if isinstance(k, str)}


def _read_object(obj: dict[str, Any], found: Candidates) -> None:
    kinds = _types(obj)
    if "website" in kinds or "organization" in kinds or "newsmediaorganization" in kinds:
        if "website" in kinds:
            found.add("sitename", "jsonld_website", obj.get("name"))
        return
    article = bool(kinds & ARTICLE_TYPES)
    found.add("title", "jsonld_headline", obj.get("headline"))
    if article:
        found.add("title", "jsonld_name", obj.get("name"))
        publisher = obj.get("publisher")
        if isinstance(publisher, dict):
            found.add("sitename", "jsonld_publisher", publisher.get("name"))
    if article or "headline" in obj:
        found.add("date", "jsonld_published", obj.get("datePublished"))
        found.add("date", "jsonld_created", obj.get("dateCreated"))
        found.add("date", "modified", obj.get("dateModified"))
        names = _names(obj.get("author"))
        if names:
            found.add("author", "jsonld_author", ", ".join(names))


def _names(value: Any) -> list[str]:
    """Person names of a JSON-LD ``author``: a string, an object or a list of either."""
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items[:MAX_AUTHORS]:
        name = item.get("name") if isinstance(item, dict) else item
        if isinstance(name, list) and name:
            name = name[0]
        if not isinstance(name, str) or len(name) > MAX_VALUE_CHARS:
            continue
        name = " ".join(name.split())
        if name and not name.startswith(("http:", "https:")) and name not in names:
            names.append(name)
    return names
