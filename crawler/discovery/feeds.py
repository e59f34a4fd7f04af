"""Web feed parsing from bytes (RSS 2.0, RSS 1.0/RDF, Atom, JSON Feed) and feed discovery."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import lxml.html
from lxml import etree
from scrapy_maintext.discovery.dates import parse_date
from scrapy_maintext.discovery.safexml import child_text, load_document, local_name
from scrapy_maintext.discovery.urls import absolute_http_url

#: Entries kept from one feed; real feeds hold tens, a hostile one could hold millions.
MAX_FEED_ENTRIES = 10_000

FEED_TYPES = {
    "application/rss+xml": "rss",
    "application/atom+xml": "atom",
    "application/rdf+xml": "rdf",
    "application/feed+json": "json",
    "application/json": "json",
}

#: Why a feed item was refused, in :attr:`FeedParseResult.rejected` (the crawl plan's
#: reason for a URL that is none): its link is there but no http(s) URL, even cleaned.
INVALID_URL = "invalid"

#: Where feeds usually live when a home page does not announce one.
USUAL_FEED_PATHS = ("/feed", "/rss.xml", "/feed.xml", "/atom.xml", "/index.xml", "/feed.json")


@dataclass(frozen=True)
class FeedEntry:
    """One feed item: its page URL, date and title."""

    url: str
    date: datetime | None = None
    title: str | None = None


@dataclass
class FeedParseResult:
    """What one feed document contained."""

    kind: str  # "rss", "rdf", "atom", "json" or "invalid"
    entries: list[FeedEntry] = field(default_factory=list)
    title: str | None = None
    error: str | None = None
    #: The site the feed belongs to, by its own home-page link.
    home: str | None = None
    #: Items refused, by reason (:data:`INVALID_URL`): ``CrawlPlan.add_feed_result`` counts
    #: them with the plan's own rejections.
    rejected: Counter[str] = field(default_factory=Counter)
    #: What an RSS channel says of its changes, as written: ``ttl`` (minutes a copy stays
    #: fresh), ``sy:updatePeriod`` and ``sy:updateFrequency``.
    ttl: str | None = None
    update_period: str | None = None
    update_frequency: str | None = None


def parse_feed(body: bytes, base_url: str | None = None) -> FeedParseResult:
    """Parse a feed of any supported format; never raises on bad input."""
    loaded = load_document(body, is_xml=lambda head: not head.startswith((b"{", b"[")))
    if loaded.error:
        return FeedParseResult(kind="invalid", error=loaded.error)
    if loaded.root is None:
        return _parse_json_feed(loaded.data, base_url)
    parse = _ROOTS.get(local_name(loaded.root))
    if parse is None:
        return FeedParseResult(kind="invalid", error="not_a_feed")
    return parse(loaded.root, base_url)


def _add(result: FeedParseResult, entry: FeedEntry | None) -> None:
    if entry is not None and len(result.entries) < MAX_FEED_ENTRIES:
        result.entries.append(entry)


def _item_url(result: FeedParseResult, link: object, base_url: str | None) -> str | None:
    """An item's page URL (:func:`absolute_http_url`); a link that is there but is no
    http(s) URL, even cleaned, is counted as :data:`INVALID_URL`."""
    if link is None or (isinstance(link, str) and not link.strip()):
        return None
    url = absolute_http_url(link, base_url)
    if url is None:
        result.rejected[INVALID_URL] += 1
    return url


def _item_date(el: etree._Element) -> datetime | None:
    for name in ("pubdate", "date", "published", "issued", "updated", "modified"):
        found = parse_date(child_text(el, name))
        if found:
            return found
    return None


def _parse_rss(root: etree._Element, base_url: str | None) -> FeedParseResult:
    channel = next((c for c in root if local_name(c) == "channel"), root)
    home = absolute_http_url(_rss_link(channel), base_url)
    result = FeedParseResult(kind="rss", title=child_text(channel, "title"), home=home)
    result.ttl = child_text(channel, "ttl")
    result.update_period = child_text(channel, "updateperiod")
    result.update_frequency = child_text(channel, "updatefrequency")
    for item in channel:
        if local_name(item) != "item":
            continue
        link = _rss_link(item)
        if not link:
            guid = next((c for c in item if local_name(c) == "guid"), None)
            if guid is not None and guid.get("isPermaLink", "true") != "false":
                link = (guid.text or "").strip()
        url = _item_url(result, link, base_url)
        if url:
            _add(result, FeedEntry(url, _item_date(item), child_text(item, "title")))
    return result


def _rss_link(item: etree._Element) -> str | None:
    """The item's (or channel's) own ``<link>``: an ``<atom:link>`` (another namespace)
    may come first."""
    for child in item:
        if child.tag in ("link", f"{{{item.nsmap.get(None, '')}}}link"):
            text = "".join(child.itertext()).strip()
            if text:
                return text
    return None


def _parse_rdf(root: etree._Element, base_url: str | None) -> FeedParseResult:
    channel = next((c for c in root if local_name(c) == "channel"), None)
    title = child_text(channel, "title") if channel is not None else None
    result = FeedParseResult(kind="rdf", title=title)
    for item in root:
        if local_name(item) != "item":
            continue
        about = next((v for k, v in item.attrib.items() if str(k).endswith("about")), None)
        url = _item_url(result, child_text(item, "link") or about, base_url)
        if url:
            _add(result, FeedEntry(url, _item_date(item), child_text(item, "title")))
    return result


def _atom_href(entry: etree._Element) -> str | None:
    """The ``href`` of the entry's (or feed's) first alternate ``<link>``, as written."""
    links = [c for c in entry if local_name(c) == "link"]
    for link in links:
        if link.get("rel", "alternate") == "alternate" and link.get("href"):
            return link.get("href")
    return None


def _parse_atom(root: etree._Element, base_url: str | None) -> FeedParseResult:
    home = absolute_http_url(_atom_href(root), base_url)
    result = FeedParseResult(kind="atom", title=child_text(root, "title"), home=home)
    for entry in root:
        if local_name(entry) != "entry":
            continue
        url = _item_url(result, _atom_href(entry), base_url)
        if url:
            _add(result, FeedEntry(url, _item_date(entry), child_text(entry, "title")))
    return result


def _parse_json_feed(data: bytes, base_url: str | None) -> FeedParseResult:
    try:
        doc: Any = json.loads(decode_json(data), strict=False)
    except (ValueError, RecursionError):
        return FeedParseResult(kind="invalid", error="malformed_json")
    if not isinstance(doc, dict) or "jsonfeed.org" not in str(doc.get("version", "")):
        return FeedParseResult(kind="invalid", error="not_a_feed")
    title = doc.get("title") if isinstance(doc.get("title"), str) else None
    home = absolute_http_url(doc.get("home_page_url"), base_url)
    result = FeedParseResult(kind="json", title=title, home=home)
    items = doc.get("items")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        url = _item_url(result, _json_item_url(item), base_url)
        if url:
            date = parse_date(_str(item.get("date_published")) or _str(item.get("date_modified")))
            _add(result, FeedEntry(url, date, _str(item.get("title"))))
    return result


def decode_json(data: bytes) -> str:
    """A JSON Feed's text: UTF-8, or UTF-16/32 by BOM or NUL pattern (as ``json`` sniffs
    bytes, after RFC 4627). A bad byte becomes U+FFFD and nothing more: the decoder never
    swallows the ASCII after it (a quote, a bracket), so one bad byte spoils no other string
    and no structure, and :func:`absolute_http_url` cleans or refuses the string it is in.
    Raw control characters in strings are taken as they are (``strict=False``)."""
    return data.decode(json.detect_encoding(data), errors="replace")


def _json_item_url(item: dict[str, Any]) -> Any:
    """``url``, else ``external_url``, else an ``id`` that is a URL (JSON Feed 1.1: "it may
    be the URL of the item")."""
    url = item.get("url") or item.get("external_url")
    if url:
        return url
    item_id = _str(item.get("id"))
    return item_id if item_id and "://" in item_id else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_ROOTS: dict[str, Callable[[etree._Element, str | None], FeedParseResult]] = {
    "rss": _parse_rss,
    "rdf": _parse_rdf,
    "feed": _parse_atom,
}


@dataclass(frozen=True)
class FeedLink:
    """A feed announced by a page's ``<link rel="alternate">``."""

    url: str
    kind: str


def find_feed_links(html: bytes | str, base_url: str) -> list[FeedLink]:
    """Feeds announced in a page's head, in document order, without duplicates."""
    try:
        tree = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return []
    found: dict[str, FeedLink] = {}
    for link in tree.iter("link"):
        rels = (link.get("rel") or "").lower().split()
        kind = FEED_TYPES.get((link.get("type") or "").lower().split(";")[0].strip())
        url = absolute_http_url(link.get("href"), base_url)
        if "alternate" in rels and kind and url and url not in found:
            found[url] = FeedLink(url, kind)
    return list(found.values())
