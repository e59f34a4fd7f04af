"""``scrapy crawl sitemap -a domain=example.com``: every page a site lists in its sitemaps."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response
from scrapy_maintext.discovery.dates import to_iso
from scrapy_maintext.discovery.plan import Candidate
from scrapy_maintext.discovery.robots import sitemaps_from_robots
from scrapy_maintext.discovery.sitemaps import SitemapEntry, parse_sitemap
from scrapy_maintext.discovery.urls import host_of, normalize_url
from scrapy_maintext.politeness.robots import robots_download_failed
from scrapy_maintext.spiders.base import DISCOVERY_PRIORITY, DiscoverySpider
from scrapy_maintext.spiders.explore import ExploreMixin
from scrapy_maintext.spiders.sites import SiteState
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import SiteUnreachable
from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

_OLDEST = datetime.min.replace(tzinfo=UTC)
#: Pages sent while a site has many sitemaps to read (DISCOVERY_SITEMAPS_BEFORE_PAGES)
#: go out between them: below the sitemaps' priority (DISCOVERY_PRIORITY), above the pages
#: sent when discovery is done.
EARLY_PAGE_PRIORITY = DISCOVERY_PRIORITY - 1
#: Sitemap requests of a site handed to Scrapy at a time (one answered, one waiting for
#: the site's delay); the others wait in the spider (:class:`SitemapQueue`).
SITEMAPS_IN_FLIGHT = 2

#: Where sitemaps usually live when robots.txt names none.
USUAL_SITEMAP_PATHS = (
    "/sitemap.xml",
    "/sitemap_index.xml",
    "/sitemap-index.xml",
    "/sitemap.xml.gz",
    "/sitemap.txt",
    "/sitemap_news.xml",
    "/news-sitemap.xml",
    "/wp-sitemap.xml",
)


class SitemapSpider(ExploreMixin, DiscoverySpider):
    """Discovers sitemaps through robots.txt (or usual paths) and fetches every listed page.

    Arguments: ``domain`` (host or base URL; several comma-separated) or ``domains_file``
    (one per line), ``since`` (date), ``max_pages`` (per site), ``lang`` (hreflang),
    ``subdomains`` (1 to include them), ``explore`` (1: follow links when a site has no
    sitemap and no feed).
    """

    name = "sitemap"

    @functools.cached_property
    def sitemap_hosts(self) -> dict[str, set[str]]:
        """Per site: the hosts of the sitemaps its robots.txt names."""
        return {}

    async def start(self) -> AsyncIterator[Any]:
        self.open_journal()
        self.crawler.signals.connect(self._release_when_idle, signal=signals.spider_idle)
        for site in self.open_window():
            yield self.start_site(site)

    def start_site(self, site: SiteState) -> scrapy.Request:
        return self.discovery_request(
            site,
            f"{site.base_url}/robots.txt",
            self.parse_robots,
            self.robots_error,
            # robots.txt answering 404 means "no Sitemap lines": guess the usual paths.
            handle_httpstatus_all=True,
            **{Meta.ROBOTS_DISCOVERY: True},
        )

    def forget_site(self, site: SiteState) -> None:
        super().forget_site(site)
        self.sitemap_hosts.pop(site.base_url, None)

    def parse_robots(self, response: Response) -> Iterator[scrapy.Request]:
        yield from self.discovery_step(response, self._read_robots)
        yield from self.release_sitemaps(response)

    def robots_error(self, failure: Failure) -> Iterator[scrapy.Request]:
        """The robots.txt request failed: when it was the site's robots.txt download and
        the robots middleware did not see the failure (a later middleware raised it), the
        middleware settles the site's rules now and gives the answer to read."""
        request = failure.request  # type: ignore[attr-defined]
        assert failure.value is not None
        try:
            answer = robots_download_failed(self.crawler, request, failure.value)
        except SiteUnreachable as exc:
            failure = Failure(exc)
            failure.request = request  # type: ignore[attr-defined]
            answer = None
        if answer is not None:
            yield from self.parse_robots(answer)
        else:
            yield from self.discovery_error(failure)

    def _read_robots(self, site: SiteState, response: Response) -> Iterator[scrapy.Request]:
        found = sitemaps_from_robots(response.body, response.url) if response.status < 400 else []
        self.inc_stat(Stat.ROBOTS_SITEMAPS, len(found))
        # The site vouches for the hosts its robots.txt names (a CDN, a sitemap service).
        self.sitemap_hosts[site.base_url] = {host_of(url) for url in found}
        urls = found or [f"{site.base_url}{path}" for path in USUAL_SITEMAP_PATHS]
        site.guessing = not found
        for url in urls:
            self._sitemap_request(site, url, depth=0)
        return iter(())

    def _sitemap_request(
        self,
        site: SiteState,
        url: str,
        depth: int,
        lastmod: datetime | None = None,
        parent: str | None = None,
    ) -> None:
        """Queue a sitemap to read (:meth:`release_sitemaps` hands it to Scrapy)."""
        if url in site.sitemaps_seen:
            return
        if len(site.sitemaps_seen) >= self.discovery.max_sitemaps:
            self.inc_stat(Stat.SITEMAPS_OVER_LIMIT)
            site.over_limit += 1
            return
        site.sitemaps_seen.add(url)
        memory = self.discovery_memory
        if memory is not None and memory.child_unchanged(url, to_iso(lastmod)):
            self.inc_stat(Stat.RECRAWL_SITEMAPS_SKIPPED_BY_DATE)
            self._remembered(site, url, depth)
            return
        if lastmod is None and self.document_not_due(site, url, Stat.RECRAWL_SITEMAPS_NOT_DUE):
            self._remembered(site, url, depth)
            return
        meta: dict[str, Any] = {
            Meta.SITEMAP_DEPTH: depth,
            Meta.SITEMAP_LASTMOD: to_iso(lastmod),
            Meta.SOURCE_URL: parent,
            Meta.DISCOVERY_DOCUMENT: "sitemap",
        }
        # One priority for every sitemap: the SitemapQueue orders them (level by level,
        # newest first), and Scrapy holds no more than two of them.
        request = self.discovery_request(site, url, self.parse_sitemap, self.sitemap_error, **meta)
        site.sitemaps.push(request, depth, lastmod)

    def release_sitemaps(self, request_or_response: Any) -> Iterator[scrapy.Request]:
        """After a discovery answer of a site: its next sitemaps, up to
        :data:`SITEMAPS_IN_FLIGHT` unanswered."""
        if not self.is_stale(request_or_response):
            yield from self.site_of(request_or_response).sitemaps.release(SITEMAPS_IN_FLIGHT)

    def _release_when_idle(self) -> None:
        """A crawl gone idle with sitemaps still held (an answer that never came back):
        they are requested all the same."""
        released = False
        for site in self.sites.values():
            site.sitemaps.in_flight = 0
            for request in site.sitemaps.release(SITEMAPS_IN_FLIGHT):
                self.crawler.engine.crawl(request)
                released = True
        if released:
            raise DontCloseSpider

    def _remembered(self, site: SiteState, url: str, depth: int) -> None:
        """The sitemap ``url`` is as it was (304, or the same lastmod in its index): plan
        what it listed without a date, and walk its child sitemaps as remembered."""
        memory = self.discovery_memory
        assert memory is not None
        site.remembered += 1
        listing = memory.remembered_children(url)
        for page in listing.undated:
            site.plan.add(Candidate(page, "sitemap", url))
        self.count_behind_unchanged(site, listing.dated)
        for child in listing.children:
            if child in site.sitemaps_seen or depth + 1 > self.discovery.sitemap_max_depth:
                continue
            if memory.listed_date(child) is not None:
                # Listed with a lastmod by an index that did not change: the same lastmod.
                site.sitemaps_seen.add(child)
                self.inc_stat(Stat.RECRAWL_SITEMAPS_SKIPPED_BY_DATE)
                self._remembered(site, child, depth + 1)
            else:
                self._sitemap_request(site, child, depth + 1, parent=url)

    def discovery_not_modified(
        self, site: SiteState, request: scrapy.Request
    ) -> Iterator[scrapy.Request]:
        if request.meta.get(Meta.DISCOVERY_DOCUMENT) != "sitemap":
            yield from super().discovery_not_modified(site, request)
            return
        self.inc_stat(Stat.RECRAWL_SITEMAPS_NOT_MODIFIED)
        assert self.discovery_memory is not None
        parent = request.meta.get(Meta.SOURCE_URL)
        lastmod = request.meta.get(Meta.SITEMAP_LASTMOD)
        self.discovery_memory.read(site.base_url, request.url, None, lastmod, parent)
        self._remembered(site, request.url, request.meta.get(Meta.SITEMAP_DEPTH, 0))

    def parse_sitemap(self, response: Response) -> Iterator[scrapy.Request]:
        if not self.is_stale(response):
            self.site_of(response).sitemaps.answered()
        yield from self.discovery_step(response, self._read_sitemap)
        yield from self.release_sitemaps(response)

    def sitemap_error(self, failure: Failure) -> Iterator[scrapy.Request]:
        request = failure.request  # type: ignore[attr-defined]
        if not self.is_stale(request):
            self.site_of(request).sitemaps.answered()
        yield from self.discovery_error(failure)
        yield from self.release_sitemaps(request)

    def _read_sitemap(self, site: SiteState, response: Response) -> Iterator[scrapy.Request]:
        result = parse_sitemap(response.body, response.url)
        if result.error:
            self._count_invalid(site, response, result.error)
        else:
            self.inc_stat(Stat.SITEMAPS)
            self.inc_stat(Stat.SITEMAPS_BY_KIND + result.kind)
            self.read_document(site, response, response.meta.get(Meta.SOURCE_URL))
            if result.truncated:
                self.inc_stat(Stat.SITEMAPS_TRUNCATED)
                logger.log(
                    self.site_warning, "Sitemap %s lists too many URLs; truncated", response.url
                )
        depth = response.meta.get(Meta.SITEMAP_DEPTH, 0)
        # Newest first (by the index's lastmod; undated last, in the index's order).
        refs = sorted(result.sitemaps, key=lambda r: r.lastmod or _OLDEST, reverse=True)
        for ref in refs:
            if ref.url in site.sitemaps_seen:
                continue  # read or waiting already (a tree's every index may list it)
            if not self._may_follow(site, ref.url):
                self.inc_stat(Stat.SITEMAPS_OFFSITE)
                logger.info(
                    "Not following sitemap %s listed by %s: another site", ref.url, response.url
                )
                continue
            if depth + 1 > self.discovery.sitemap_max_depth:
                # Said once per site, with the count, when its discovery is done.
                self.inc_stat(Stat.SITEMAPS_TOO_DEEP)
                site.too_deep += 1
                continue
            self._sitemap_request(site, ref.url, depth + 1, ref.lastmod, response.url)
        for entry in result.entries:
            site.plan.add_sitemap_entry(entry, response.url)
        if self.discovery_memory is not None and not result.error:
            self._check_unlisted(site, response.url, result.entries)
        yield from self.early_pages(site)

    def _check_unlisted(self, site: SiteState, sitemap: str, entries: list[SitemapEntry]) -> None:
        """Pages this sitemap listed last time and not now: each requested once (a 404
        or 410 marks it gone)."""
        assert self.discovery_memory is not None
        urls = (u for e in entries for u in (e.url, *(a.url for a in e.alternates)))
        listed = {url for url in map(normalize_url, urls) if url}
        unlisted = self.discovery_memory.no_longer_listed(site.base_url, sitemap, listed)
        for url in unlisted:
            site.plan.add(Candidate(url, "sitemap", sitemap))
        self.inc_stat(Stat.RECRAWL_UNLISTED_CHECKED, len(unlisted))

    def early_pages(self, site: SiteState) -> Iterator[scrapy.Request]:
        """A site with more than DISCOVERY_SITEMAPS_BEFORE_PAGES sitemaps still to read
        sends the pages found so far ahead of them: a tree of thousands of sitemaps does
        not hold every page back until the last is read."""
        threshold = self.discovery.sitemaps_before_pages
        if threshold <= 0 or site.outstanding <= threshold:
            return
        yield from self.queue_pages(site, self.pages_to_fetch(site), EARLY_PAGE_PRIORITY)

    def say_discovery_limits(self, site: SiteState) -> None:
        """One line per site for the sitemaps its discovery limits left unread."""
        if site.too_deep:
            logger.log(
                self.site_warning,
                "Sitemap index nesting too deep on %s: %d sitemaps not read "
                "(DISCOVERY_SITEMAP_MAX_DEPTH=%d)",
                site.base_url,
                site.too_deep,
                self.discovery.sitemap_max_depth,
            )
            site.too_deep = 0
        if site.over_limit:
            logger.log(
                self.site_warning,
                "Too many sitemaps on %s: %d not read (DISCOVERY_MAX_SITEMAPS=%d)",
                site.base_url,
                site.over_limit,
                self.discovery.max_sitemaps,
            )
            site.over_limit = 0

    def _may_follow(self, site: SiteState, url: str) -> bool:
        """A sitemap index may send the crawl to the site's own hosts, or to the hosts
        its robots.txt named; never elsewhere (a hacked or spammy index)."""
        if site.plan.policy.on_site(url):
            return True
        return host_of(url) in self.sitemap_hosts.get(site.base_url, set())

    def _count_invalid(self, site: SiteState, response: Response, error: str) -> None:
        # A guessed location answering with an HTML page is common and harmless.
        if site.guessing and error == "not_a_sitemap":
            self.inc_stat(Stat.SITEMAPS_NOT_FOUND)
            return
        self.inc_stat(Stat.DISCOVERY_INVALID + error)
        logger.log(self.site_warning, "Skipped sitemap %s: %s", response.url, error)

    def nothing_found(self, site: SiteState) -> Iterator[scrapy.Request]:
        if self.explore:
            logger.info(
                "No sitemap on %s: looking for feeds, then links",
                site.base_url,
                extra=self.site_line,
            )
            yield from self.start_explore(site)
            return
        logger.log(
            self.site_warning, "No sitemap with pages on %s (try -a explore=1)", site.base_url
        )
