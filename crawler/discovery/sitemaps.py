"""Sitemap parsing from bytes: XML urlsets and indexes, news and hreflang extensions, text."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from lxml import etree
from scrapy_maintext.discovery.dates import parse_date
from scrapy_maintext.discovery.safexml import child_text, decode_text, load_document, local_name
from scrapy_maintext.discovery.urls import absolute_http_url

#: A text sitemap lists at most 50,000 URLs (sitemaps.org); more is a broken or hostile file.
MAX_URLS_PER_SITEMAP = 50_000


@dataclass(frozen=True)
class Alternate:
    """An hreflang alternate (``<xhtml:link rel="alternate" hreflang=... href=...>``)."""

    lang: str
    url: str


@dataclass(frozen=True)
class SitemapEntry:
    """A page listed in a sitemap, with what the sitemap says about it."""

    url: str
    lastmod: datetime | None = None
    news_date: datetime | None = None
    news_title: str | None = None
    alternates: tuple[Alternate, ...] = ()
    #: Its ``changefreq`` as written (``hourly``, ``daily``, ...), if any.
    changefreq: str | None = None

    @property
    def date(self) -> datetime | None:
        """The best date: news publication date, else lastmod."""
        return self.news_date or self.lastmod


@dataclass(frozen=True)
class SitemapRef:
    """A child sitemap listed in a sitemap index."""

    url: str
    lastmod: datetime | None = None


@dataclass
class SitemapParseResult:
    """What one sitemap document contained."""

    kind: str  # "urlset", "index", "text" or "invalid"
    entries: list[SitemapEntry] = field(default_factory=list)
    sitemaps: list[SitemapRef] = field(default_factory=list)
    error: str | None = None
    truncated: bool = False


def parse_sitemap(body: bytes, base_url: str | None = None) -> SitemapParseResult:
    """Parse a sitemap (XML, gzip'd XML or plain text); never raises on bad input."""
    loaded = load_document(body, is_xml=lambda head: head.startswith(b"<"))
    if loaded.error:
        return SitemapParseResult(kind="invalid", error=loaded.error)
    if loaded.root is None:
        return _parse_text(loaded.data, base_url)
    parse = _ROOTS.get(local_name(loaded.root))
    if parse is None:
        return SitemapParseResult(kind="invalid", error="not_a_sitemap")
    return parse(loaded.root, base_url)


def _parse_text(data: bytes, base_url: str | None) -> SitemapParseResult:
    result = SitemapParseResult(kind="text")
    for line in decode_text(data).splitlines():
        is_url = line.strip()[:4].lower() == "http"
        url = absolute_http_url(line, base_url) if is_url else None
        if url is None:
            continue
        if len(result.entries) >= MAX_URLS_PER_SITEMAP:
            result.truncated = True
            break
        result.entries.append(SitemapEntry(url=url))
    if not result.entries:
        return SitemapParseResult(kind="invalid", error="not_a_sitemap")
    return result


def _parse_index(root: etree._Element, base_url: str | None) -> SitemapParseResult:
    result = SitemapParseResult(kind="index")
    for el in root:
        if local_name(el) == "sitemap":
            _add_ref(result, el, base_url)
    return result


def _add_ref(result: SitemapParseResult, el: etree._Element, base_url: str | None) -> None:
    """A ``<sitemap>`` element's child sitemap, once (the spider limits depth and count)."""
    url = absolute_http_url(child_text(el, "loc"), base_url)
    if url and len(result.sitemaps) < MAX_URLS_PER_SITEMAP:
        result.sitemaps.append(SitemapRef(url, parse_date(child_text(el, "lastmod"))))


def _parse_urlset(root: etree._Element, base_url: str | None) -> SitemapParseResult:
    """Pages of a ``<urlset>``, and the child sitemaps some mix in as ``<sitemap>``
    elements (followed like an index's, within the same depth and count limits)."""
    result = SitemapParseResult(kind="urlset")
    for el in root:
        name = local_name(el)
        if name == "sitemap":
            _add_ref(result, el, base_url)
            continue
        if name != "url":
            continue
        entry = _parse_url(el, base_url)
        if entry is None:
            continue
        if len(result.entries) >= MAX_URLS_PER_SITEMAP:
            result.truncated = True
            break
        result.entries.append(entry)
    return result


def _parse_url(el: etree._Element, base_url: str | None) -> SitemapEntry | None:
    url = absolute_http_url(child_text(el, "loc"), base_url)
    if url is None:
        return None
    news_date = news_title = None
    alternates: list[Alternate] = []
    for child in el:
        name = local_name(child)
        if name == "news":
            news_date = parse_date(child_text(child, "publication_date"))
            news_title = child_text(child, "title")
        elif name == "link" and child.get("rel") == "alternate":
            href = absolute_http_url(child.get("href"), base_url)
            lang = (child.get("hreflang") or "").strip()
            if href and lang:
                alternates.append(Alternate(lang, href))
    return SitemapEntry(
        url=url,
        lastmod=parse_date(child_text(el, "lastmod")),
        news_date=news_date,
        news_title=news_title,
        alternates=tuple(alternates),
        changefreq=child_text(el, "changefreq"),
    )


_ROOTS: dict[str, Callable[[etree._Element, str | None], SitemapParseResult]] = {
    "sitemapindex": _parse_index,
    "urlset": _parse_urlset,
}
