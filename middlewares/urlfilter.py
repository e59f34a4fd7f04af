"""URL hygiene for every request a spider yields: normalise with courlan, keep to the site."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy_maintext.discovery.urls import UrlPolicy, normalize_url
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import switched_off
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class UrlFilterSettings:
    """``URLFILTER_*`` settings."""

    enabled: bool

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> UrlFilterSettings:
        return cls(enabled=setting(settings, "URLFILTER_ENABLED"))


class UrlFilterMiddleware:
    """Normalises request URLs (tracking parameters, fragments, query order) so duplicates
    collapse in the dupefilter; drops off-site and non-HTML URLs for spiders that declare a
    ``url_policy`` (:class:`scrapy_maintext.discovery.urls.UrlPolicy`)."""

    def __init__(self, crawler: Crawler) -> None:
        self.config = UrlFilterSettings.from_settings(crawler.settings)
        if not self.config.enabled:
            raise switched_off("UrlFilterMiddleware", "URLFILTER_ENABLED is off")
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        async for obj in result:
            filtered = self._filter(obj)
            if filtered is not None:
                yield filtered

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for obj in start:
            filtered = self._filter(obj)
            if filtered is not None:
                yield filtered

    def _filter(self, obj: Any) -> Any:
        if not isinstance(obj, Request) or obj.meta.get(Meta.SKIP_URL_FILTER) or obj.dont_filter:
            return obj
        if obj.meta.get(Meta.PAGE_URL) == obj.url:
            # A page of a site's plan: made canonical and held to the site's policy when it
            # was planned (a distributed crawl hands every page over here).
            return obj
        stats = self.crawler.stats
        assert stats is not None
        url = normalize_url(obj.url)
        if url is None:
            stats.inc_value(Stat.URLS_DROPPED + "invalid")
            logger.debug("Dropped invalid URL %s", obj.url)
            return None
        policy: UrlPolicy | None = getattr(self.crawler.spider, "url_policy", None)
        reason = policy.reject_reason(url) if policy else None
        if reason:
            stats.inc_value(Stat.URLS_DROPPED + reason)
            logger.debug("Dropped %s URL %s", reason, url)
            return None
        if url != obj.url:
            stats.inc_value(Stat.URLS_NORMALIZED)
            return obj.replace(url=url)
        return obj
