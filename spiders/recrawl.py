"""What the discovery spiders do in a recurring crawl (``CRAWL_STATE``): ask the crawl state
before requesting, and remember their sitemaps and feeds when a site ended cleanly."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy import signals
from scrapy.http import Response
from scrapy_maintext.state.recrawl import Recrawl, crawl_state_of
from scrapy_maintext.state.recrawl_discovery import DiscoveryMemory, format_epoch
from scrapy_maintext.state.schedule import NO_HINTS, Hints, body_digest, response_freshness
from scrapy_maintext.state.validators import Validators
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import (
    FINAL_DROPS,
    RecrawlOutcome,
    SkipReason,
    drop_reason,
)

if TYPE_CHECKING:
    from scrapy_maintext.distributed.worker import DistributedWorker
    from scrapy_maintext.spiders.sites import SiteState

    # DiscoverySpider is made of this mixin: what it uses of the spider is declared below.
    _Base = scrapy.Spider
else:
    _Base = object

logger = logging.getLogger(__name__)


class RecrawlMixin(_Base):
    """The discovery spiders' side of a recurring crawl; nothing without ``CRAWL_STATE``."""

    if TYPE_CHECKING:
        sites: dict[str, SiteState]

        def report_skip(
            self, site: str, reason: str, count: int = 1, planned: bool = True
        ) -> None: ...

        def inc_stat(self, key: str, count: int = 1) -> None: ...

    #: The crawl state of a recurring crawl, from ``start()`` on.
    recrawl: Recrawl | None = None
    discovery_memory: DiscoveryMemory | None = None

    def open_recrawl(self) -> None:
        """Open the crawl state (at the start of ``start()``), if there is one."""
        self.recrawl = crawl_state_of(self.crawler)
        if self.recrawl is not None:
            self.discovery_memory = DiscoveryMemory(self.recrawl.state, self.recrawl.schedule)
            connect = self.crawler.signals.connect
            connect(self._item_not_final, signal=signals.item_dropped)
            connect(self._item_not_final, signal=signals.item_error)

    def skip_unchanged(self, site: SiteState) -> None:
        """Set aside the planned pages whose sitemap lastmod or feed date says they did not
        change since they were last decided (counted)."""
        memory = self.discovery_memory
        if memory is None or self.recrawl is None:
            return
        done = site.scheduled | site.unchanged
        dated = {u: c.date for u, c in site.plan.candidates.items() if u not in done}
        unchanged = memory.unchanged(dated)
        if unchanged:
            site.unchanged |= unchanged
            self.recrawl.outcome(site.base_url, RecrawlOutcome.SKIPPED_BY_DATE, len(unchanged))
            reason = SkipReason.UNCHANGED_BY_DATE
            self.report_skip(site.base_url, reason, len(unchanged), planned=False)
        not_due = memory.not_due(site.base_url, {u: d for u, d in dated.items() if d is None})
        if not_due:
            site.unchanged |= not_due
            self.recrawl.outcome(site.base_url, RecrawlOutcome.NOT_DUE, len(not_due))
            self.report_skip(site.base_url, SkipReason.NOT_DUE, len(not_due), planned=False)

    def document_not_due(self, site: SiteState, url: str, stat: str) -> bool:
        """A sitemap or feed of a recurring crawl that is not due yet (adaptive revisits):
        not requested (counted in ``stat``); what it listed is remembered."""
        memory = self.discovery_memory
        if memory is None or memory.due(url):
            return False
        site.remembered += 1
        self.inc_stat(stat)
        when = memory.requested_from(url)
        logger.info(
            "Sitemap or feed not due: %s (read by a run started from %s)",
            url,
            "now" if when is None else format_epoch(when),
        )
        if self.recrawl is not None:
            self.recrawl.not_due.add(url, when)
        return True

    def _item_not_final(
        self, response: Response | None = None, exception: Any = None, failure: Any = None, **_: Any
    ) -> None:
        """A page whose item failed or was dropped for a reason that may not hold next time
        (a timeout): its site's sitemaps are not remembered, so the page is planned again."""
        if exception is not None and drop_reason(exception) in FINAL_DROPS:
            return
        site = self.sites.get(getattr(response, "meta", {}).get(Meta.SITE, ""))
        if site is not None:
            self.page_not_final(site)

    def page_not_final(self, site: SiteState) -> None:
        """A page of ``site`` did not end cleanly: its sitemaps are not remembered in this
        run; in a shared crawl the worker that discovers the site is told."""
        site.incomplete = True
        shared = self._shared_crawl()
        if shared is not None:
            shared.site_incomplete(site.base_url)

    def _shared_crawl(self) -> DistributedWorker | None:
        """This worker of a shared recurring crawl (None: not one)."""
        if self.recrawl is None or not self.recrawl.config.redis_url:
            return None
        from scrapy_maintext.distributed.worker import DistributedWorker

        return self.crawler.get_extension(DistributedWorker)

    def closed(self, reason: str) -> None:
        """A recurring crawl that finished keeps the sitemaps and feeds of every site that
        ended cleanly (before the state closes: this handler was connected first), on every
        worker of a shared crawl."""
        if self.discovery_memory is None or self.recrawl is None or reason != "finished":
            return
        shared = self._shared_crawl()
        elsewhere = shared.incomplete_sites() if shared is not None else set()
        if elsewhere is None:
            return  # not known: nothing remembered, the next run reads them all again
        for base, site in self.sites.items():
            if not site.incomplete and site.failure is None and base not in elsewhere:
                self.recrawl.write(self.discovery_memory.save, base)

    def read_document(
        self,
        site: SiteState,
        response: Response,
        parent: str | None,
        hints: Hints = NO_HINTS,
    ) -> None:
        """A sitemap or feed was read: remember it (saved at a clean end), with a hash of
        its body and what it and its headers say of its changes."""
        if self.discovery_memory is None or self.recrawl is None:
            return
        headers = response.headers
        validators = Validators.from_headers(headers.get("ETag"), headers.get("Last-Modified"))
        lastmod = response.meta.get(Meta.SITEMAP_LASTMOD)
        fresh = response_freshness(headers, self.recrawl.clock.now())
        digest = body_digest(response.body)
        self.discovery_memory.read(
            site.base_url,
            response.url,
            validators,
            lastmod,
            parent,
            digest,
            hints.with_fresh_for(fresh),
        )

    def discovery_not_modified(
        self, site: SiteState, request: scrapy.Request
    ) -> Iterator[scrapy.Request]:
        """A sitemap or feed answered 304: what it lists is what this crawl had last time."""
        site.remembered += 1
        if self.discovery_memory is not None:
            self.discovery_memory.read(site.base_url, request.url, None, None, None)
            listing = self.discovery_memory.remembered_children(request.url)
            self.count_behind_unchanged(site, [*listing.dated, *listing.undated])
        self.inc_stat(Stat.RECRAWL_FEEDS_NOT_MODIFIED)
        return iter(())

    def count_behind_unchanged(self, site: SiteState, pages: list[str]) -> None:
        """Pages listed by a sitemap or feed that is as it was, and not planned: counted
        once (``recrawl/behind_unchanged``), so that the end line adds up to the known
        pages; a page another sitemap of this run lists already is counted there."""
        if self.recrawl is None:
            return
        planned = site.plan.candidates
        count = sum(1 for url in pages if url not in planned)
        self.recrawl.outcome(site.base_url, RecrawlOutcome.BEHIND_UNCHANGED, count)
