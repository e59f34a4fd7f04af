"""Collecting discovered pages into an ordered, pruned, de-duplicated crawl plan."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from scrapy_maintext.discovery.feeds import INVALID_URL, FeedEntry, FeedParseResult
from scrapy_maintext.discovery.sitemaps import SitemapEntry
from scrapy_maintext.discovery.urls import UrlPolicy, normalize_url

logger = logging.getLogger(__name__)

_OLDEST = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A page to fetch and where it was found (slots: a plan holds one per URL)."""

    url: str
    discovered_via: str  # "sitemap", "feed" or "link"
    source_url: str
    date: datetime | None = None
    title: str | None = None
    #: Its sitemap ``changefreq`` as written, if any (a recurring crawl's hint).
    changefreq: str | None = None


@dataclass(frozen=True)
class PlanOptions:
    """How to prune and order a plan (the spiders' ``since``, ``max_pages``, ``lang``)."""

    since: datetime | None = None
    max_pages: int | None = None
    lang: str | None = None


@dataclass
class CrawlPlan:
    """Pages found by discovery, one per normalised URL, with counted rejections."""

    policy: UrlPolicy
    options: PlanOptions = field(default_factory=PlanOptions)
    candidates: dict[str, Candidate] = field(default_factory=dict)
    rejected: Counter[str] = field(default_factory=Counter)
    #: ``max_pages`` left pages of the plan out (:meth:`to_fetch`).
    truncated: bool = False

    def add(self, candidate: Candidate) -> bool:
        """Add a page; False (and a counted reason) when it is refused or already known."""
        url = normalize_url(candidate.url)
        reason = INVALID_URL if url is None else self.policy.reject_reason(url)
        if reason is None and url is not None:
            if self._too_old(candidate.date):
                reason = "before_since"
            elif url in self.candidates:
                reason = "duplicate"
                self._merge(url, candidate)
        if reason:
            self.rejected[reason] += 1
            return False
        assert url is not None
        self.candidates[url] = replace(candidate, url=url)
        return True

    def _too_old(self, date: datetime | None) -> bool:
        # Undated pages are kept: nothing says they are old.
        return bool(self.options.since and date and date < self.options.since)

    def _merge(self, url: str, new: Candidate) -> None:
        # A page listed twice (sitemap and news sitemap, say) keeps the richest metadata.
        old = self.candidates[url]
        if (old.date is None and new.date) or (old.title is None and new.title):
            self.candidates[url] = replace(
                old, date=old.date or new.date, title=old.title or new.title
            )

    def add_sitemap_entry(self, entry: SitemapEntry, source_url: str) -> None:
        lang = self.options.lang
        if lang and entry.alternates:
            chosen = _pick_language(entry, lang)
            if chosen is None:
                self.rejected["other_language"] += 1
                return
            urls = [chosen]
        else:
            urls = [entry.url, *(alt.url for alt in entry.alternates)]
        for url in urls:
            self.add(
                Candidate(
                    url, "sitemap", source_url, entry.date, entry.news_title, entry.changefreq
                )
            )

    def add_feed_entry(self, entry: FeedEntry, source_url: str) -> None:
        self.add(Candidate(entry.url, "feed", source_url, entry.date, entry.title))

    def add_feed_result(self, result: FeedParseResult, source_url: str) -> None:
        """Every entry of a parsed feed, and the items it refused counted with the plan's
        own rejections (an item whose link is no http(s) URL: ``invalid``)."""
        for entry in result.entries:
            self.add_feed_entry(entry, source_url)
        self.rejected.update(result.rejected)

    def ordered(self) -> list[Candidate]:
        """Newest first (undated last, in discovery order)."""
        items = list(self.candidates.values())
        items.sort(key=lambda c: c.date or _OLDEST, reverse=True)
        return items

    def to_fetch(
        self, scheduled: set[str], skip: AbstractSet[str] = frozenset()
    ) -> list[Candidate]:
        """The pages to request now: newest first, none of ``scheduled`` or ``skip``, and no
        more than ``max_pages`` counting those already scheduled (not those skipped)."""
        pages = [c for c in self.ordered() if c.url not in scheduled and c.url not in skip]
        if self.options.max_pages is not None:
            allowed = max(0, self.options.max_pages - len(scheduled))
            self.truncated = self.truncated or len(pages) > allowed
            pages = pages[:allowed]
        return pages


def _pick_language(entry: SitemapEntry, lang: str) -> str | None:
    """The alternate URL for ``lang``: the exact language first, else a regional variant
    of it ("de" takes "de" over "de-AT", and "de-AT" when it is the only German one)."""
    lang = lang.lower()
    codes = [(alt.lang.lower(), alt.url) for alt in entry.alternates]
    exact = [url for code, url in codes if code == lang]
    variants = [url for code, url in codes if code.split("-")[0] == lang.split("-")[0]]
    found = exact or variants
    return found[0] if found else None
