"""The sites of a discovery crawl: base URLs, discovery settings, per-site state."""

from __future__ import annotations

import heapq
import itertools
import re
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, cast
from urllib.parse import urlsplit

from scrapy.settings import BaseSettings
from scrapy_maintext.discovery.plan import Candidate, CrawlPlan
from scrapy_maintext.discovery.urls import UrlPolicy
from scrapy_maintext.discovery.window import sites_at_once
from scrapy_maintext.vocabulary.settings import setting


def base_url_of(domain: str) -> str:
    """``example.com`` → ``https://example.com``; a URL keeps its scheme and port."""
    domain = domain.strip()
    if "://" not in domain:
        domain = f"https://{domain}"
    parts = urlsplit(domain)
    host = parts.hostname
    if parts.scheme not in ("http", "https") or not host or _NOT_IN_HOSTS.search(host):
        raise ValueError(f"domain: not a host or base URL: {domain!r}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        raise ValueError(f"domain: not a host or base URL: {domain!r}") from None
    return f"{parts.scheme}://{parts.netloc}"


#: Characters no host name has (whitespace, URL delimiters); IDN letters are fine.
_NOT_IN_HOSTS = re.compile(r"[\s<>\"{}|\\^`/?#@]")


@dataclass(frozen=True)
class DiscoverySettings:
    """``DISCOVERY_*`` settings shared by the spiders."""

    sitemap_max_depth: int
    max_sitemaps: int
    explore_max_depth: int
    sitemaps_before_pages: int
    #: Sites under way at a time (:class:`~scrapy_maintext.discovery.window.SiteWindow`;
    #: 0: every site).
    sites_at_once: int
    #: Sites above which per-site progress lines stay out of the console.
    broad_sites: int

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> DiscoverySettings:
        return cls(
            sitemap_max_depth=setting(settings, "DISCOVERY_SITEMAP_MAX_DEPTH"),
            max_sitemaps=setting(settings, "DISCOVERY_MAX_SITEMAPS"),
            explore_max_depth=setting(settings, "DISCOVERY_EXPLORE_MAX_DEPTH"),
            sitemaps_before_pages=setting(settings, "DISCOVERY_SITEMAPS_BEFORE_PAGES"),
            sites_at_once=sites_at_once(
                setting(settings, "DISCOVERY_SITES_AT_ONCE"),
                settings.getint("CONCURRENT_REQUESTS"),
            ),
            broad_sites=setting(settings, "CRAWL_REPORT_BROAD_SITES"),
        )


@dataclass(slots=True)
class SitemapQueue:
    """A site's sitemaps not requested yet, level by level (shallowest first), within a
    level newest first by the ``lastmod`` their index gave (undated last), then in the
    order found; at most ``limit`` of them are handed to Scrapy at a time, so that the
    pages of the sitemaps already read can go out between the others (a tree of thousands
    of sitemaps does not sit in the site's download queue ahead of every page).

    Level by level, because an endless index tree (a broken CMS, a trap) is deeper than
    any budget: read deepest first, the ordinary sitemaps its first indexes list would wait
    behind all of it (issue 35)."""

    held: list[tuple[tuple[int, float, int], Any]] = field(default_factory=list)
    #: Requests handed to Scrapy and not answered yet.
    in_flight: int = 0
    _order: Any = field(default_factory=itertools.count)

    def push(self, request: Any, depth: int, lastmod: datetime | None) -> None:
        newest = -lastmod.timestamp() if lastmod is not None else float("inf")
        heapq.heappush(self.held, ((depth, newest, next(self._order)), request))

    def release(self, limit: int) -> list[Any]:
        """The requests to hand to Scrapy now: up to ``limit`` in flight."""
        released = []
        while self.held and self.in_flight < limit:
            released.append(heapq.heappop(self.held)[1])
            self.in_flight += 1
        return released

    def answered(self) -> None:
        self.in_flight = max(self.in_flight - 1, 0)


@dataclass(slots=True)
class PageQueue:
    """A site's planned pages not handed to Scrapy yet, as the plan's own entries (a
    :class:`Candidate` each, about a tenth of a request's memory), in the order planned.
    At most ``limit`` of a site's pages are requests at a time, and the next goes out as
    one of them ends, so that a crawl of a million planned URLs holds requests for its
    sites, not for its URLs (issue 47). A list read from :attr:`start` on, not a deque:
    an empty deque takes 600 bytes, and a crawl has a queue per site."""

    held: list[tuple[int, Candidate]] = field(default_factory=list)
    #: Where the pages not handed out yet begin in :attr:`held`.
    start: int = 0
    #: Pages handed to Scrapy whose end (item, error, drop) has not come yet.
    in_flight: int = 0

    def push(self, candidate: Candidate, priority: int) -> None:
        self.held.append((priority, candidate))

    def release(self, limit: float) -> list[tuple[int, Candidate]]:
        """The pages to request now: up to ``limit`` in flight."""
        released = []
        while self.start < len(self.held) and self.in_flight < limit:
            released.append(self.held[self.start])
            self.start += 1
            self.in_flight += 1
        if self.start == len(self.held):
            self.held.clear()
            self.start = 0
        elif self.start >= PAGE_QUEUE_TRIM and 2 * self.start >= len(self.held):
            del self.held[: self.start]
            self.start = 0
        return released

    def ended(self) -> None:
        self.in_flight = max(self.in_flight - 1, 0)

    def __len__(self) -> int:
        """Pages not handed out yet."""
        return len(self.held) - self.start


#: Pages handed out of a :class:`PageQueue` before its list drops them (at least half of it).
PAGE_QUEUE_TRIM = 32


@dataclass(slots=True)
class SiteState:
    """Discovery state of one site of a crawl."""

    base_url: str
    plan: CrawlPlan
    #: Discovery requests of this site not answered yet.
    outstanding: int = 0
    #: "sitemaps", "feeds" or "links" (explore mode moves through them in that order).
    stage: str = "sitemaps"
    #: Page URLs already requested (a site's discovery can finish more than once in
    #: explore mode; nothing is requested twice).
    scheduled: set[str] = field(default_factory=set)
    sitemaps_seen: set[str] = field(default_factory=set)
    #: Sitemap requests counted as outstanding but not handed to Scrapy yet.
    sitemaps: SitemapQueue = field(default_factory=SitemapQueue)
    #: Planned pages (counted in ``scheduled``) not handed to Scrapy yet.
    pages: PageQueue = field(default_factory=PageQueue)
    links_seen: set[str] = field(default_factory=set)
    #: Discovery is guessing usual locations (so "not a sitemap/feed" is no error).
    guessing: bool = False
    #: Why the site cannot be crawled at all (unreachable, robots.txt 5xx), once known;
    #: the robots middleware has said so in one line, so nothing more is logged for it.
    failure: str | None = None
    #: Sitemaps not read for DISCOVERY_SITEMAP_MAX_DEPTH / DISCOVERY_MAX_SITEMAPS, said
    #: in one line per site when its discovery is done.
    too_deep: int = 0
    over_limit: int = 0
    #: Recurring crawl: planned pages not requested (not newer than when last decided).
    unchanged: set[str] = field(default_factory=set)
    #: Recurring crawl: sitemaps and feeds not read again (304, or same lastmod).
    remembered: int = 0
    #: Recurring crawl: something of this site did not end cleanly (a page failed, the
    #: plan was cut by max_pages or since): its sitemaps' and feeds' rows are not saved.
    incomplete: bool = False
    #: How many pages were planned (``scheduled``), kept when a done site forgets its plan.
    planned_when_done: int = 0

    def planned_count(self) -> int:
        """Pages planned for this site so far (the report's "planned"), also once the
        site's plan is forgotten."""
        return max(len(self.scheduled), self.planned_when_done)

    def is_done(self) -> bool:
        """Discovery answered and every planned page handed to the downloader."""
        return self.outstanding <= 0 and not self.pages and self.pages.in_flight == 0

    def forget_plan(self) -> None:
        """Drop what only discovery and planning need (the plan and its URL policy, the
        URLs requested or set aside, the sitemaps seen): kept for every site until the
        crawl's end, they were most of a broad crawl's memory per URL. Only once the site
        is done and its discovery cannot start again (no explore mode)."""
        self.planned_when_done = self.planned_count()
        self.plan = _DONE_PLAN
        self.scheduled = self.sitemaps_seen = self.links_seen = self.unchanged = _DONE_URLS


#: What a done site keeps of its plan and of the URLs it saw: nothing of its own. Shared and
#: immutable: a change to a done site's plan fails (a counted discovery error) instead of
#: growing it again.
_DONE_PLAN = CrawlPlan(
    UrlPolicy.for_urls([]), candidates=cast(dict[str, Candidate], MappingProxyType({}))
)
_DONE_URLS = cast(set[str], frozenset())


def split_list(value: str | None) -> list[str]:
    """Comma- or space-separated values of a spider argument."""
    return [v.strip() for v in str(value or "").replace(",", " ").split() if v.strip()]


def feed_url(value: str) -> str:
    """``value``, checked as a feed URL (http or https, with a host), else ValueError."""
    if not value.lower().startswith(("http://", "https://")):
        raise ValueError(f"not an http(s) URL: {value}")
    base_url_of(value)
    return value
