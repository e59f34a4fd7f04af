"""Feed discovery and breadth-first link exploration, shared by both spiders."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy.http import Response, TextResponse
from scrapy_maintext.discovery.feeds import USUAL_FEED_PATHS, find_feed_links, parse_feed
from scrapy_maintext.discovery.plan import Candidate
from scrapy_maintext.discovery.urls import host_of, normalize_url, registrable_domain
from scrapy_maintext.state.schedule import feed_hints
from scrapy_maintext.vocabulary.names import Meta, Stat
from twisted.python.failure import Failure

if TYPE_CHECKING:
    from scrapy_maintext.spiders.base import DiscoverySpider
    from scrapy_maintext.spiders.sites import SiteState

    _Base = DiscoverySpider
else:
    _Base = object

logger = logging.getLogger(__name__)


class FeedDiscoveryMixin(_Base):
    """Finds feeds announced by a home page (or at usual paths) and plans their entries."""

    def feed_home_request(self, site: SiteState) -> scrapy.Request:
        return self.discovery_request(
            site, f"{site.base_url}/", self.parse_home_for_feeds, errback=self.home_error
        )

    def feed_request(self, site: SiteState, url: str, **meta: Any) -> scrapy.Request:
        meta[Meta.DISCOVERY_DOCUMENT] = "feed"
        return self.discovery_request(site, url, self.parse_feed, **meta)

    def parse_home_for_feeds(self, response: Response) -> Iterator[scrapy.Request]:
        yield from self.discovery_step(response, self._read_home)

    def _read_home(self, site: SiteState, response: Response) -> Iterator[scrapy.Request]:
        links = []
        if isinstance(response, TextResponse):
            links = find_feed_links(response.body, response.url)
        self.inc_stat(Stat.FEEDS_ANNOUNCED, len(links))
        if links:
            for link in links:
                if not self.document_not_due(site, link.url, Stat.RECRAWL_FEEDS_NOT_DUE):
                    yield self.feed_request(site, link.url)
        else:
            yield from self._usual_feed_requests(site)

    def _usual_feed_requests(self, site: SiteState) -> Iterator[scrapy.Request]:
        site.guessing = True
        for path in USUAL_FEED_PATHS:
            yield self.feed_request(site, f"{site.base_url}{path}")

    def home_error(self, failure: Failure) -> Iterator[scrapy.Request]:
        """The home page failed (403, 5xx, timeout, ...): feeds may still be at usual paths."""
        request = failure.request  # type: ignore[attr-defined]
        if not self.is_stale(request):
            yield from self._usual_feed_requests(self.site_of(request))
        yield from self.discovery_error(failure)

    def parse_feed(self, response: Response) -> Iterator[scrapy.Request]:
        yield from self.discovery_step(response, self._read_feed)

    def _read_feed(self, site: SiteState, response: Response) -> Iterator[scrapy.Request]:
        result = parse_feed(response.body, response.url)
        if result.error:
            if site.guessing and result.error == "not_a_feed":
                self.inc_stat(Stat.FEEDS_NOT_FOUND)
            else:
                self.inc_stat(Stat.DISCOVERY_INVALID + result.error)
                logger.log(self.site_warning, "Skipped feed %s: %s", response.url, result.error)
        else:
            self.inc_stat(Stat.FEEDS)
            self.inc_stat(Stat.FEEDS_BY_KIND + result.kind)
            self.read_document(site, response, None, feed_hints(result))
        if response.meta.get(Meta.DIRECT_FEED):
            self._widen_to_feed_site(site, response.url, result.home)
        site.plan.add_feed_result(result, response.url)
        return iter(())

    def _widen_to_feed_site(self, site: SiteState, feed_url: str, home: str | None) -> None:
        """A feed given directly may live on a sibling host of its pages (feeds.example.org
        for www.example.org) or on a feed service: its registrable domain and its own
        home-page link say which site it is."""
        urls = [feed_url] + ([home] if home else [])
        hosts = {host_of(url) for url in urls} - {""}
        domains = {d for d in map(registrable_domain, urls) if d}
        site.plan.policy = site.plan.policy.widened(hosts, domains)
        self.url_policy = self.url_policy.widened(hosts, domains)


class ExploreMixin(FeedDiscoveryMixin):
    """``explore=1``: when discovery finds nothing, try feeds, then follow internal links."""

    def start_explore(self, site: SiteState) -> Iterator[scrapy.Request]:
        if site.stage == "sitemaps":
            site.stage = "feeds"
            yield self.feed_home_request(site)
            return
        site.stage = "links"
        yield from self._link_request(site, f"{site.base_url}/", site.base_url, depth=0)

    def _link_request(
        self, site: SiteState, url: str, source: str, depth: int
    ) -> Iterator[scrapy.Request]:
        normalized = normalize_url(url)
        if normalized is None or normalized in site.links_seen:
            return
        if site.plan.policy.reject_reason(normalized):
            return
        max_pages = self.plan_options.max_pages
        if max_pages is not None and len(site.scheduled) >= max_pages:
            return
        site.links_seen.add(normalized)
        # Breadth first: shallower pages get higher priority.
        candidate = Candidate(normalized, "link", source)
        yield self.page_request(site, candidate, priority=-depth, **{Meta.LINK_DEPTH: depth})

    def parse_page(self, response: Response) -> Iterator[Any]:
        yield from super().parse_page(response)
        depth = response.meta.get(Meta.LINK_DEPTH)
        if depth is None or not isinstance(response, TextResponse):
            return
        if depth >= self.discovery.explore_max_depth:
            return
        site = self.site_of(response)
        for href in response.css("a::attr(href)").getall():
            try:
                url = response.urljoin(href)
            except ValueError:  # "http://[x": one broken link must not end the page's links
                continue
            yield from self._link_request(site, url, response.url, depth + 1)
