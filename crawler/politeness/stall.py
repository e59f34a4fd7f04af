"""A site's stalled requests get a time budget; past it, the site is given up.

A server that never answers (or sends a byte a second) costs the whole DOWNLOAD_TIMEOUT per
attempt, three attempts per URL with Scrapy's retries, and with one request at a time per
site it blocks the site meanwhile. Every timed-out request is counted; once a site has
spent ``STALL_BUDGET`` seconds on them (one warning), nothing of it is retried, new
requests fail at once (``site_stalled``), and those already waiting in the downloader get
a tenth of the timeout: an answer in that time still counts, silence ends them as
``site_stalled`` too.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING
from weakref import WeakSet

from scrapy.utils.httpobj import urlparse_cached
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import SiteStalled, SkipReason, download_error, switched_off
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Request
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

#: Exceptions that mean "the server did not answer in time" (by class name: Twisted's,
#: Scrapy's and the TCP stack's).
#: Share of DOWNLOAD_TIMEOUT left to requests already waiting when their site stalls.
LAST_CHANCE_SHARE = 0.1


@dataclass(frozen=True)
class StallSettings:
    """``STALL_*`` settings."""

    #: Seconds a site may spend on timed-out requests (0: no limit). Four full timeouts at
    #: the add-on's DOWNLOAD_TIMEOUT (30 s): a site that stalls that often is down.
    budget: float
    download_timeout: float

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> StallSettings:
        return cls(
            budget=setting(settings, "STALL_BUDGET"),
            download_timeout=settings.getfloat("DOWNLOAD_TIMEOUT", 180.0),
        )


class StallBudgetMiddleware:
    """Downloader middleware; after RetryMiddleware (550) so that its process_exception
    runs first and can stop the retry."""

    def __init__(self, crawler: Crawler) -> None:
        self.config = StallSettings.from_settings(crawler.settings)
        if self.config.budget <= 0:
            raise switched_off("StallBudgetMiddleware", "STALL_BUDGET is 0")
        self.crawler = crawler
        #: Seconds spent on timed-out requests, by site.
        self.spent: defaultdict[str, float] = defaultdict(float)
        self.stalled: set[str] = set()
        #: Requests in the downloader (waiting for their slot or downloading), every site's
        #: in one set: a set per site stayed with every site done (about 1 KB and six
        #: objects for the collector each; issue 47), and the downloader holds few requests.
        self.waiting: WeakSet[Request] = WeakSet()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        netloc = urlparse_cached(request).netloc
        if netloc in self.stalled:
            raise SiteStalled(f"site stalled: {netloc}")
        self.waiting.add(request)

    def process_exception(self, request: Request, exception: Exception) -> None:
        if download_error(exception) != SkipReason.TIMEOUT:
            return
        if request.meta.get(Meta.RENDER) is not None:
            return  # a page's script that never ended (RENDER_TIMEOUT), not a slow site
        netloc = urlparse_cached(request).netloc
        if request.meta.get(Meta.STALL_LAST_CHANCE):
            raise SiteStalled(f"site stalled: {netloc}")
        self._inc(Stat.STALLED)
        timeout = request.meta.get("download_timeout", self.config.download_timeout)
        self.spent[netloc] += float(timeout)
        if netloc not in self.stalled and self.spent[netloc] >= self.config.budget:
            self._give_up(netloc)
        if netloc in self.stalled:
            request.meta["dont_retry"] = True

    def _give_up(self, netloc: str) -> None:
        self.stalled.add(netloc)
        self._inc(Stat.STALLED_SITES)
        logger.warning(
            "%s spent %.0fs on requests that timed out (STALL_BUDGET): its remaining "
            "requests are dropped",
            netloc,
            self.spent[netloc],
        )
        # Their downloads have not started (one at a time per site), and the download
        # handler reads the timeout when it starts.
        short = self.config.download_timeout * LAST_CHANCE_SHARE
        for waiting in list(self.waiting):
            if urlparse_cached(waiting).netloc == netloc:
                self.waiting.discard(waiting)
                waiting.meta.update({"download_timeout": short, Meta.STALL_LAST_CHANCE: True})

    def _inc(self, key: str) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(key)
