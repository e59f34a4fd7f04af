"""``scrapy crawl feed -a domain=example.com`` (or ``-a url=FEED``): news through web feeds."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import scrapy

from spiders.base import DiscoverySpider, base_url_of
from spiders.explore import ExploreMixin

logger = logging.getLogger(__name__)


def _split_urls(value: str | None) -> list[str]:
    return [u.strip() for u in (value or "").replace(",", " ").split() if u.strip()]


class FeedSpider(ExploreMixin, DiscoverySpider):
    """Fetches the pages listed in a site's feeds (RSS 2.0, RSS 1.0/RDF, Atom, JSON Feed).

    Arguments: ``domain`` (feeds found on its home page or at usual paths), or ``url``
    (one or more feed URLs, comma- or space-separated) or ``urls_file`` (one URL per line);
    plus ``since``, ``max_pages``, ``subdomains``, ``explore`` as for the sitemap spider.
    """

    name = "feed"

    def __init__(self, url: str | None = None, urls_file: str | None = None, **kwargs: Any) -> None:
        self.feed_urls = _split_urls(url)
        if urls_file:
            lines = Path(urls_file).read_text(encoding="utf-8").splitlines()
            self.feed_urls += [ln.strip() for ln in lines if ln.strip() and ln[0] != "#"]
        if not kwargs.get("domain") and self.feed_urls:
            kwargs["domain"] = base_url_of(self.feed_urls[0])
        super().__init__(**kwargs)

    async def start(self) -> AsyncIterator[Any]:
        if not self.base_url:
            raise ValueError("feed spider: pass -a domain=example.com or -a url=FEED_URL")
        self.stage = "feeds"
        if self.feed_urls:
            for url in self.feed_urls:
                yield self.feed_request(url)
        else:
            yield self.feed_home_request()

    def nothing_found(self) -> Iterator[scrapy.Request]:
        if self.explore:
            yield from self.start_explore()
            return
        logger.warning("No feed with entries found for %s", self.base_url)
