"""``scrapy crawl sitemap -a domain=example.com``: every page a site lists in its sitemaps."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response
from scrapy_maintext.discovery.robots import sitemaps_from_robots
from scrapy_maintext.discovery.sitemaps import parse_sitemap
from scrapy_maintext.discovery.urls import host_of
from scrapy_maintext.logformatter import PROGRESS
from scrapy_maintext.spiders.base import DiscoverySpider
from scrapy_maintext.spiders.explore import ExploreMixin
from scrapy_maintext.spiders.sites import SiteState
from scrapy_maintext.vocabulary.names import Meta, Stat

logger = logging.getLogger(__name__)

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
        for site in self.sites.values():
            yield self.discovery_request(
                site,
                f"{site.base_url}/robots.txt",
                self.parse_robots,
                # robots.txt answering 404 means "no Sitemap lines": guess the usual paths.
                handle_httpstatus_all=True,
                **{Meta.ROBOTS_DISCOVERY: True},
            )

    def parse_robots(self, response: Response) -> Iterator[scrapy.Request]:
        yield from self.discovery_step(response, self._read_robots)

    def _read_robots(self, site: SiteState, response: Response) -> Iterator[scrapy.Request]:
        found = sitemaps_from_robots(response.body, response.url) if response.status < 400 else []
        self.inc_stat(Stat.ROBOTS_SITEMAPS, len(found))
        # The site vouches for the hosts its robots.txt names (a CDN, a sitemap service).
        self.sitemap_hosts[site.base_url] = {host_of(url) for url in found}
        urls = found or [f"{site.base_url}{path}" for path in USUAL_SITEMAP_PATHS]
        site.guessing = not found
        for url in urls:
            yield from self._sitemap_request(site, url, depth=0)

    def _sitemap_request(self, site: SiteState, url: str, depth: int) -> Iterator[scrapy.Request]:
        if url in site.sitemaps_seen:
            return
        if len(site.sitemaps_seen) >= self.discovery.max_sitemaps:
            self.inc_stat(Stat.SITEMAPS_OVER_LIMIT)
            return
        site.sitemaps_seen.add(url)
        yield self.discovery_request(site, url, self.parse_sitemap, **{Meta.SITEMAP_DEPTH: depth})

    def parse_sitemap(self, response: Response) -> Iterator[scrapy.Request]:
        yield from self.discovery_step(response, self._read_sitemap)

    def _read_sitemap(self, site: SiteState, response: Response) -> Iterator[scrapy.Request]:
        result = parse_sitemap(response.body, response.url)
        if result.error:
            self._count_invalid(site, response, result.error)
        else:
            self.inc_stat(Stat.SITEMAPS)
            self.inc_stat(Stat.SITEMAPS_BY_KIND + result.kind)
            if result.truncated:
                self.inc_stat(Stat.SITEMAPS_TRUNCATED)
                logger.warning("Sitemap %s lists too many URLs; truncated", response.url)
        depth = response.meta.get(Meta.SITEMAP_DEPTH, 0)
        for ref in result.sitemaps:
            if not self._may_follow(site, ref.url):
                self.inc_stat(Stat.SITEMAPS_OFFSITE)
                logger.info(
                    "Not following sitemap %s listed by %s: another site", ref.url, response.url
                )
                continue
            if depth + 1 > self.discovery.sitemap_max_depth:
                self.inc_stat(Stat.SITEMAPS_TOO_DEEP)
                logger.warning("Sitemap index nesting too deep at %s", response.url)
                break
            yield from self._sitemap_request(site, ref.url, depth + 1)
        for entry in result.entries:
            site.plan.add_sitemap_entry(entry, response.url)

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
        logger.warning("Skipped sitemap %s: %s", response.url, error)

    def nothing_found(self, site: SiteState) -> Iterator[scrapy.Request]:
        if self.explore:
            logger.info(
                "No sitemap on %s: looking for feeds, then links", site.base_url, extra=PROGRESS
            )
            yield from self.start_explore(site)
            return
        logger.warning("No sitemap with pages on %s (try -a explore=1)", site.base_url)
