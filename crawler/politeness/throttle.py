"""AutoThrottle that never goes below a site's robots.txt Crawl-delay."""

from __future__ import annotations

from scrapy import Request, Spider
from scrapy.extensions.throttle import AutoThrottle
from scrapy.http import Response

#: ``DOWNLOAD_SLOTS``-style key under which ``RobotsPolitenessMiddleware`` records a slot's
#: Crawl-delay, the floor of that slot's delay.
FLOOR_KEY = "crawl_delay"


class PoliteAutoThrottle(AutoThrottle):
    """Scrapy's AutoThrottle, with each slot's delay kept at or above its Crawl-delay.

    AutoThrottle lowers a slot's delay after fast responses, down to ``DOWNLOAD_DELAY``; a
    site that asked for a longer Crawl-delay keeps it, and AutoThrottle still raises the
    delay when the site slows down. The floor is re-applied in the same signal handler that
    lowered the delay, so no request leaves in between.
    """

    def _response_downloaded(self, response: Response, request: Request, spider: Spider) -> None:
        super()._response_downloaded(response, request, spider)
        key, slot = self._get_slot(request, spider)
        if key is None or slot is None:
            return
        floor = self.crawler.engine.downloader.per_slot_settings.get(key, {}).get(FLOOR_KEY)
        if floor is not None and slot.delay < floor:
            slot.delay = floor
