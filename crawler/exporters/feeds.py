"""``CheckedFeedExporter``: a document counts as exported only once every feed took it.

Scrapy's feed exporter writes an item from its ``item_scraped`` handler; a write that fails
there (a full disk, an output path under a file) is logged as a signal error, and every
other ``item_scraped`` handler still runs: a recurring crawl's state recorded the page as
exported, and the next run would never export it. This subclass (the add-on puts it in
place of Scrapy's) catches the failure, says in one line which output failed and why,
stops the crawl, and sends :data:`~scrapy_maintext.vocabulary.names.Signal.ITEM_EXPORTED`
only for items every feed accepted: the crawl state, the page journal and the distributed
worker record those, and no other (:func:`exported_signal`). Items that reach it after a
failure are not written anywhere and counted as not exported.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.extensions.feedexport import FeedExporter, FeedSlot
from scrapy.http import Response
from scrapy_maintext.report.losses import output_failed
from scrapy_maintext.vocabulary.names import Signal, Stat

logger = logging.getLogger(__name__)


class CheckedFeedExporter(FeedExporter):
    """Scrapy's feed exporter that stops the crawl at the first failed write."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        #: Feeds whose write failed, by URI (closed quietly, never reported as stored).
        self.failed: dict[str, FeedSlot] = {}

    def item_scraped(self, item: Any, spider: Spider, response: Response | None = None) -> None:
        stats = self.crawler.stats
        if self.failed:
            if stats is not None:
                stats.inc_value(Stat.EXPORT_NOT_EXPORTED)
            return
        before = {id(slot): slot.itemcount for slot in self.slots}
        try:
            super().item_scraped(item, spider)
        except Exception as exc:  # any storage or exporter failure: the item is not out
            slot = self._failed_slot(item, before)
            uri = slot.uri if slot is not None else "a feed"
            if slot is not None:
                self.failed[slot.uri] = slot
            output_failed(self.crawler, f"output {uri}", exc)
            return
        self.crawler.signals.send_catch_log(
            Signal.ITEM_EXPORTED, item=item, response=response, spider=spider
        )

    def _failed_slot(self, item: Any, before: dict[int, int]) -> FeedSlot | None:
        """The first slot that should have taken ``item`` and did not count it."""
        for slot in self.slots:
            if slot.filter.accepts(item) and before.get(id(slot)) == slot.itemcount:
                return slot
        return None

    async def close_spider(self, spider: Spider) -> None:
        # A failed feed is closed here and is not reported by Scrapy as "Stored ... feed (N
        # items)": it did not store them all. Its closing bytes (a JSON array's "]", an XML
        # root's end tag) are tried, so that what it holds stays readable.
        for uri, slot in self.failed.items():
            if slot in self.slots:
                self.slots.remove(slot)
            try:
                slot.finish_exporting()
            except Exception as exc:  # the output failed already: said once
                logger.debug("Finishing failed output %s: %s", uri, exc)
            file = getattr(slot, "file", None)
            try:
                if file is not None:
                    file.close()
            except OSError as exc:
                logger.debug("Closing failed output %s: %s", uri, exc)
        await super().close_spider(spider)


def exported_signal(crawler: Crawler) -> object:
    """The signal that says an item is exported: ``ITEM_EXPORTED`` when the checked feed
    exporter runs, else Scrapy's ``item_scraped`` (no feeds, or a project that kept
    Scrapy's exporter: what passed every pipeline is what there is)."""
    if crawler.get_extension(CheckedFeedExporter) is not None:
        return Signal.ITEM_EXPORTED
    return signals.item_scraped
