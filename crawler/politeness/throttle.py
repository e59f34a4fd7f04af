"""AutoThrottle that never goes below a site's robots.txt Crawl-delay."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy_maintext.scrapy_internals import AutoThrottleHooks, slot_settings

if TYPE_CHECKING:
    from scrapy.core.downloader import Slot

#: ``DOWNLOAD_SLOTS``-style key under which ``RobotsPolitenessMiddleware`` records a slot's
#: Crawl-delay, the floor of that slot's delay.
FLOOR_KEY = "crawl_delay"


class PoliteAutoThrottle(AutoThrottleHooks):
    """Scrapy's AutoThrottle, with each slot's delay kept at or above its Crawl-delay.

    AutoThrottle lowers a slot's delay after fast responses, down to ``DOWNLOAD_DELAY``; a
    site that asked for a longer Crawl-delay keeps it, and AutoThrottle still raises the
    delay when the site slows down. The floor is re-applied in the same signal handler that
    lowered the delay, so no request leaves in between.
    """

    def delay_adjusted(self, key: str, slot: Slot) -> None:
        floor = slot_settings(self.crawler, key).get(FLOOR_KEY)
        if floor is not None and slot.delay < floor:
            slot.delay = floor
