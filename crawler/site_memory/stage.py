"""Scrapy glue of the site memory: settings, the per-crawl registry, JOBDIR, stats, drain.

The :class:`~scrapy_maintext.pipelines.extraction.ExtractionPipeline` owns one
:class:`SiteMemoryStage`.
Workers return each page's block signatures with its Document; the stage learns them and
decides pages in the crawl process, in item arrival order (inside the pipeline's turns), so
the output does not depend on worker timing. Pages held for their site's warm-up wait in
``process_item`` until their site has ``SITE_MEMORY_WARMUP`` pages, until the held HTML
passes ``SITE_MEMORY_MAX_HELD_BYTES``, or until the crawl has nothing else left to do
(checked every :data:`DRAIN_INTERVAL` seconds): Scrapy does not call ``spider_idle`` while
items are in a pipeline, so the stage itself notices that no other page can come.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.settings import BaseSettings
from scrapy_maintext.document import Document
from scrapy_maintext.extraction.core import PageResult
from scrapy_maintext.scrapy_internals import crawl_is_drained
from scrapy_maintext.site_memory.memory import (
    SiteMemoryOptions,
)
from scrapy_maintext.site_memory.registry import (
    Decided,
    Pending,
    SiteMemories,
    SiteMemoriesOptions,
    site_key,
)
from scrapy_maintext.state.site_memory_journal import MemoryJournal
from scrapy_maintext.vocabulary.names import Stat
from scrapy_maintext.vocabulary.reasons import switched_off
from scrapy_maintext.vocabulary.settings import setting
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall
from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

#: Seconds between checks whether held pages can still get company from their site.
DRAIN_INTERVAL = 0.25
#: Consecutive idle checks before held pages are decided: one check can fall between a
#: response leaving the downloader and its item reaching the pipeline.
DRAIN_CHECKS = 2
#: Item field telling how many blocks the site memory removed (0: it changed nothing).
ITEM_FIELD = "site_memory_removed"
#: Scrapy's default SCRAPER_SLOT_MAX_ACTIVE_SIZE.
SCRAPY_MAX_ACTIVE_SIZE = 5_000_000

#: Judges a decided page (counts it, drops it with DropItem): the pipeline's own checks.
Judge = Callable[[Document, str | None], None]


@dataclass(frozen=True)
class SiteMemoryConfig:
    """The ``SITE_MEMORY_*`` settings, read once."""

    enabled: bool
    options: SiteMemoriesOptions
    jobdir: str | None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SiteMemoryConfig:
        site = SiteMemoryOptions(
            min_pages=setting(settings, "SITE_MEMORY_MIN_PAGES"),
            min_share=setting(settings, "SITE_MEMORY_MIN_SHARE"),
            max_blocks=setting(settings, "SITE_MEMORY_MAX_BLOCKS"),
        )
        active = settings.getint("SCRAPER_SLOT_MAX_ACTIVE_SIZE", SCRAPY_MAX_ACTIVE_SIZE)
        options = SiteMemoriesOptions(
            site=site,
            warmup=setting(settings, "SITE_MEMORY_WARMUP"),
            max_sites=setting(settings, "SITE_MEMORY_MAX_SITES"),
            max_held_bytes=setting(settings, "SITE_MEMORY_MAX_HELD_BYTES") or active // 2,
        )
        return cls(
            enabled=setting(settings, "SITE_MEMORY_ENABLED"),
            options=options,
            jobdir=settings.get("JOBDIR") or None,
        )


@dataclass
class Ticket:
    """An item's claim on its decision: fired with (Document, blocks removed) or DropItem."""

    url: str | None
    deferred: Deferred = field(default_factory=Deferred)


class SiteMemoryStage:
    """The crawl's site memories and the items waiting for their site's warm-up."""

    def __init__(self, crawler: Crawler, config: SiteMemoryConfig) -> None:
        if not config.enabled:
            raise switched_off("SiteMemoryStage", "SITE_MEMORY_ENABLED is off")
        self.crawler = crawler
        self.config = config
        self.memories: SiteMemories[Ticket] = SiteMemories(config.options)
        self.journal: MemoryJournal | None = None
        self._drain = LoopingCall(self._check_drained)
        self._idle_checks = 0
        self._flush: Callable[[], None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteMemoryStage | None:
        """The stage, or None when ``SITE_MEMORY_ENABLED`` is off."""
        try:
            return cls(crawler, SiteMemoryConfig.from_settings(crawler.settings))
        except NotConfigured:
            return None

    def open(self, flush: Callable[[], None]) -> None:
        """Restore from JOBDIR; ``flush`` decides every held page in the pipeline's turn."""
        self._flush = flush
        replayed = 0
        if self.config.jobdir:
            self.journal = MemoryJournal(self.config.jobdir)
            replayed = self.journal.restore(self.memories)
        options = self.config.options
        logger.info(
            "Site memory: warm-up %d pages, template on >= max(%d, %.0f%%) of a site's pages "
            "(%d sites known, %d pages replayed)",
            options.warmup,
            options.site.min_pages,
            options.site.min_share * 100,
            len(self.memories),
            replayed,
        )

    def close(self, judge: Judge) -> None:
        """Decide what is still held (nothing, normally) and persist the memories."""
        self.flush(judge)
        if self._drain.running:
            self._drain.stop()
        if self.journal is not None:
            self.journal.snapshot(self.memories)
            self.journal.close()
        stats = self.crawler.stats
        removed = stats.get_value("extract/site_memory/blocks_removed", 0) if stats else 0
        sites = len(self.memories)
        logger.info("Site memory: %d sites remembered, %d template blocks removed", sites, removed)

    def arrive(self, url: str | None, result: PageResult, size: int, judge: Judge) -> Deferred:
        """Learn a page (in arrival order) and decide whatever can be decided now.

        Returns the Deferred of this page's own decision, fired now or later.
        """
        ticket = Ticket(url)
        pending = Pending(site_key(url), result.doc, result.signatures, ticket, size)
        self._settle(self.memories.arrive(pending), judge)
        self._inc(Stat.SITE_MEMORY_PAGES, result.signatures is not None)
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value(Stat.SITE_MEMORY_SITES, len(self.memories))
            stats.set_value(Stat.SITE_MEMORY_EVICTED, self.memories.evicted)
            stats.max_value(Stat.SITE_MEMORY_MAX_HELD, self.memories.held_pages)
        if self.memories.held and not self._drain.running:
            self._idle_checks = 0
            self._drain.start(DRAIN_INTERVAL, now=False)
        return ticket.deferred

    def flush(self, judge: Judge) -> None:
        self._settle(self.memories.flush(), judge)

    def _settle(self, decided: list[Decided[Ticket]], judge: Judge) -> None:
        for item in decided:
            ticket, doc, removed = item.pending.token, item.pending.doc, item.outcome.removed
            if item.trigger != "arrival":
                self._inc(Stat.SITE_MEMORY_HELD + item.trigger)
            self._inc(Stat.SITE_MEMORY_BLOCKS_REMOVED, removed)
            self._inc(Stat.SITE_MEMORY_PAGES_CHANGED, removed > 0)
            try:
                judge(doc, ticket.url)
            # Whatever the judge raises belongs to that page's item (DropItem: dropped), not
            # to the item whose turn released it; the other released pages still get theirs.
            except Exception as exc:
                ticket.deferred.errback(Failure(exc))
            else:
                ticket.deferred.callback((doc, removed))

    def _inc(self, key: str, count: int = 1) -> None:
        if count and self.crawler.stats is not None:
            self.crawler.stats.inc_value(key, count)

    def _check_drained(self) -> None:
        if not self.memories.held:
            self._drain.stop()
            return
        try:
            drained = self._nothing_else_can_come()
        # The engine's internals differ between Scrapy versions: if they cannot be read,
        # held pages are decided at once rather than risk a crawl that never ends.
        except Exception as exc:
            logger.warning("Site memory cannot read the engine's state (%r): warm-up off", exc)
            self.memories.options = replace(self.memories.options, warmup=0)
            drained, self._idle_checks = True, DRAIN_CHECKS
        self._idle_checks = self._idle_checks + 1 if drained else 0
        if self._idle_checks >= DRAIN_CHECKS and self._flush is not None:
            logger.debug("Crawl drained: deciding %d held pages", self.memories.held_pages)
            self._flush()

    def _nothing_else_can_come(self) -> bool:
        """Whether every item in the pipelines is held and no page is on its way.

        Reads the engine's state: nothing downloading, no response waiting for the spider
        or in its callback, and nothing scheduled that the engine is willing to send
        (closing, or backing out). A held item keeps its request in the engine's
        ``inprogress`` and its response in the scraper's ``active`` set (Scrapy awaits item
        processing inside the response's turn), so more of either than held pages means
        something is still on its way: a response between the downloader and the scraper
        (a hop of the event loop, long on a loaded machine), or a callback still running.
        """
        return crawl_is_drained(self.crawler, self.memories.held_pages)
