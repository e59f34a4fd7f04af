"""``scrapy crawl feed -a domain=example.com`` (or ``-a url=FEED``): news through web feeds."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import scrapy
from scrapy_maintext.spiders.args import ARGUMENT_FORMS, FEED_ARGUMENT_FORMS
from scrapy_maintext.spiders.base import DiscoverySpider
from scrapy_maintext.spiders.explore import ExploreMixin
from scrapy_maintext.spiders.sites import SiteState, base_url_of
from scrapy_maintext.vocabulary.names import Meta, Stat

logger = logging.getLogger(__name__)


class FeedSpider(ExploreMixin, DiscoverySpider):
    """Fetches the pages listed in feeds (RSS 2.0, RSS 1.0/RDF, Atom, JSON Feed).

    Arguments: ``domain`` (feeds found on each home page or at usual paths; several
    comma-separated) or ``domains_file``, and/or ``url`` (feed URLs, comma- or
    space-separated) or ``urls_file`` (one feed URL per line); plus ``since``,
    ``max_pages`` (per site), ``subdomains``, ``explore`` as for the sitemap spider.
    """

    name = "feed"
    argument_forms: Mapping[str, str] = MappingProxyType(ARGUMENT_FORMS | FEED_ARGUMENT_FORMS)

    async def start(self) -> AsyncIterator[Any]:
        self.open_journal()
        for site in self.sites.values():
            site.stage = "feeds"
        # Built (and counted per site) before the first is yielded: Scrapy reads start()
        # lazily, and a site must not finish discovery before all its feeds are asked for.
        requests = [
            self.feed_request(self.sites[base_url_of(u)], u, **{Meta.DIRECT_FEED: True})
            for u in self.feed_urls
            if not self.document_not_due(self.sites[base_url_of(u)], u, Stat.RECRAWL_FEEDS_NOT_DUE)
        ]
        # Sites named by domain/domains_file: feeds are found through their home pages.
        homes = dict.fromkeys(self.named_sites)
        requests += [self.feed_home_request(self.sites[base]) for base in homes]
        for request in requests:
            yield request

    def nothing_found(self, site: SiteState) -> Iterator[scrapy.Request]:
        if self.explore:
            yield from self.start_explore(site)
            return
        logger.log(self.site_warning, "No feed with entries found for %s", site.base_url)
