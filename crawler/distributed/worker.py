"""``DistributedWorker``: this process's membership in a shared crawl.

It keeps the worker's heartbeat, takes back the requests of workers that died, tracks the
requests this worker leased until each is finished (its item exported, or its failure
handled), claims each site's discovery once per crawl and decides, when this worker runs
out of work, whether the whole crawl is finished or it should wait for more.
"""

from __future__ import annotations

import functools
import logging
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from redis.exceptions import RedisError
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.extensions.feedexport import FeedExporter
from scrapy.utils.defer import deferred_from_coro
from scrapy_maintext.distributed.connection import breaker_of, crawl_client
from scrapy_maintext.distributed.settings import DistributedSettings
from scrapy_maintext.distributed.state import CrawlState, ForeignRun, new_worker_id
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import switched_off
from scrapy_maintext.vocabulary.settings import setting
from twisted.internet.task import LoopingCall

if TYPE_CHECKING:
    from typing import Self

    from redis import Redis
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request

logger = logging.getLogger(__name__)

T = TypeVar("T")


class DistributedWorker:
    """Extension (enabled by the add-on when ``REDIS_URL`` is set)."""

    def __init__(self, crawler: Crawler) -> None:
        self.config = DistributedSettings.from_settings(crawler.settings)
        if not self.config.redis_url:
            raise switched_off("DistributedWorker", "REDIS_URL is not set")
        self.crawler = crawler
        self.worker_id = new_worker_id()
        #: Tripped by the first Redis call that gets no answer: the crawl stops, and the
        #: worker asks Redis nothing more (its leases come back to the others by timeout).
        self.breaker = breaker_of(crawler)
        self.server: Redis = crawl_client(crawler)
        #: A recurring crawl (``CRAWL_STATE``): a worker started on a finished run starts
        #: the next one (the same command, run again, crawls again).
        self.recurring = bool(setting(crawler.settings, "CRAWL_STATE"))
        #: The run of the shared crawl this worker joined.
        self.run = ""
        #: Lease id -> site, for every request taken and not finished.
        self.leases: dict[str, str] = {}
        #: Requests per site taken and not yet back from the downloader.
        self.held: Counter[str] = Counter()
        #: Leases whose download failed: acknowledged at the next tick, unless a retry
        #: took them over first (a crash in between re-queues the page, never loses it).
        self._failed: set[str] = set()
        #: Sites whose discovery this worker claimed and has not finished.
        self.claimed: set[str] = set()
        self.stopping = False
        self.joined = False
        #: Why this worker did not join (the run is another crawl state's), if so.
        self.refused = ""
        self._loop = LoopingCall(self._tick)
        connect = crawler.signals.connect
        connect(self.spider_opened, signal=signals.spider_opened)
        connect(self.spider_idle, signal=signals.spider_idle)
        connect(self.spider_closed, signal=signals.spider_closed)
        connect(self.engine_stopping, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    @functools.cached_property
    def state(self) -> CrawlState:
        spider = self.crawler.spider
        assert spider is not None, "the shared crawl's keys need the spider's name"
        prefix = self.config.prefix(spider.name)
        timeout = self.config.worker_timeout
        return CrawlState(self.server, prefix, self.worker_id, timeout, self.config.crawl_state)

    # -- lifecycle
    def join(self, spider: Spider) -> None:
        """Called by the scheduler when it opens, before the spider's start requests."""
        # Closed from spider_opened when this fails (said once by the breaker): Scrapy cannot
        # close a spider whose scheduler failed to open.
        try:
            self.joined = bool(self.ask(self._join, spider))
        except ForeignRun as exc:
            # Checked by the crawl command first; here when the run changed hands since.
            self.refused = str(exc)
            logger.error("%s", exc)
            self._inc(Stat.DISTRIBUTED_REFUSED)

    def _join(self, spider: Spider) -> bool:
        self.server.ping()
        proposed = getattr(spider, "run_id", None) or new_worker_id()
        self.run, renewed = self.state.start_run(proposed, renew=self.recurring)
        if renewed:
            logger.info(
                "Shared crawl %s had finished: this worker starts its next run", self.state.prefix
            )
            self._inc(Stat.DISTRIBUTED_NEW_RUN)
        elif self.state.is_finished():
            logger.warning(
                "Shared crawl %s is finished: nothing to do (a new crawl needs another "
                "DISTRIBUTED_KEY_PREFIX)",
                self.state.prefix,
            )
        self.state.heartbeat()
        self.state.reap()
        if hasattr(spider, "run_id"):
            # Page requests carry the run id of the worker that planned them; every worker
            # of the crawl (and every restart) must accept them.
            spider.run_id = self.run
        logger.info(
            "Worker %s joined shared crawl %s (%d sites with queued requests)",
            self.worker_id,
            self.state.prefix,
            self.state.queued(),
        )
        return True

    def ask(self, call: Callable[..., T], *args: Any, default: T | None = None) -> T | None:
        """``call(*args)``, a Redis call whose failure stops the crawl (said once, by the
        breaker), never a traceback; ``default`` once Redis stopped answering."""
        if self.breaker.down:
            return default
        try:
            return call(*args)
        except RedisError as exc:
            self.breaker.trip(exc)
            return default

    def spider_opened(self, spider: Spider) -> None:
        if self.refused:
            raise CloseSpider("shared_run_of_another_state")
        if not self.joined:
            raise CloseSpider("redis_unreachable")
        self._loop.start(self.config.poll_interval, now=False)

    def engine_stopping(self) -> None:
        if self._loop.running:
            self._loop.stop()

    def spider_closed(self, spider: Spider, reason: str) -> None:
        self.stopping = True
        if self._loop.running:
            self._loop.stop()
        if not self.joined:
            return
        handed_back = self.ask(self._leave) or 0
        if handed_back:
            logger.info("%d unfinished requests handed back to the shared queue", handed_back)
        self._inc(Stat.DISTRIBUTED_REQUEUED_AT_CLOSE, handed_back)

    def _leave(self) -> int:
        self._ack_failed()
        for site in self.claimed:
            self.state.release_claim(site)
        return self.state.leave()

    def _tick(self) -> None:
        if self.ask(self._beat):
            self.wake_engine()

    def _beat(self) -> bool:
        self.state.heartbeat()
        self._ack_failed()
        self._inc(Stat.DISTRIBUTED_REAPED, self.state.reap())
        self._check_claims()
        return True

    def wake_engine(self) -> None:
        """Let the engine ask the scheduler again now: Scrapy itself re-polls an idle
        scheduler only every 5 s (``ExecutionEngine._SLOT_HEARTBEAT_INTERVAL``, private)."""
        slot = getattr(self.crawler.engine, "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()

    # -- leases
    def leased(self, lease: str, site: str) -> None:
        self.leases[lease] = site
        self.held[site] += 1

    def left_downloader(self, request: Request) -> None:
        site = self.leases.get(request.meta.get(Meta.DISTRIBUTED_LEASE, ""))
        if site is not None and self.held[site] > 0:
            self.held[site] -= 1

    def download_failed(self, request: Request) -> None:
        self.left_downloader(request)
        lease = request.meta.get(Meta.DISTRIBUTED_LEASE)
        if lease in self.leases:
            self._failed.add(lease)

    def replaced_lease(self, request: Request) -> str:
        """The lease of the request this one replaces (a redirect, a retry: same meta), taken
        off its meta; the queue ends that lease when it takes this request (:meth:`handed_on`)."""
        lease = request.meta.pop(Meta.DISTRIBUTED_LEASE, None)
        return lease if lease in self.leases else ""

    def handed_on(self, lease: str) -> None:
        if lease in self.leases:
            self._forget(lease)

    def finished(self, request: Request) -> None:
        """The request's outcome is final and its items are exported: acknowledge it."""
        lease = request.meta.get(Meta.DISTRIBUTED_LEASE)
        if lease is None or lease not in self.leases:
            return
        self._flush_feeds()
        self.state.ack_later(lease)
        self._forget(lease)
        self._inc(Stat.DISTRIBUTED_ACKED)

    def _forget(self, lease: str) -> None:
        site = self.leases.pop(lease)
        self._failed.discard(lease)
        if self.held[site] > 0 and not self.leases_of(site):
            self.held[site] = 0

    def leases_of(self, site: str) -> int:
        return sum(1 for s in self.leases.values() if s == site)

    def _ack_failed(self) -> None:
        for lease in list(self._failed):
            if lease in self.leases:
                self.state.ack(lease)
                self._forget(lease)
                self._inc(Stat.DISTRIBUTED_ACKED)
        self._failed.clear()

    def _flush_feeds(self) -> None:
        # A page is acknowledged only once its line is out of this process's buffers:
        # after a SIGKILL, every acknowledged page is in this worker's output.
        exporter = self.crawler.get_extension(FeedExporter)
        for slot in getattr(exporter, "slots", ()):
            file = getattr(slot, "file", None)
            if file is not None and hasattr(file, "flush") and not getattr(file, "closed", 0):
                file.flush()

    # -- discovery claims
    def claim(self, site: str) -> bool:
        result = self.ask(self.state.claim, site, default=0)
        if result == 2:
            logger.warning("Taking over the discovery of %s from a worker that is gone", site)
        if result:
            self.claimed.add(site)
            logger.info("This worker discovers %s", site)
            self._inc(Stat.DISTRIBUTED_DISCOVERY_CLAIMED)
        return bool(result)

    def discovery_finished(self, site: str) -> None:
        if site in self.claimed:
            self.claimed.discard(site)
            self.ask(self.state.discovery_done, site)

    # -- sites whose pages did not all end cleanly (a recurring crawl's discovery memory)
    def site_incomplete(self, site: str) -> None:
        """A page of ``site`` failed here: whichever worker discovers the site is told
        before this page's lease is acknowledged."""
        self.ask(self.state.mark_incomplete, site)

    def incomplete_sites(self) -> set[str] | None:
        """Sites a page of which failed on any worker of this crawl; None when unknown."""
        return self.ask(self.state.incomplete)

    def _check_claims(self) -> None:
        """Discovery that ended in an errback (no spider output to watch) is done once the
        spider has no discovery request of the site outstanding."""
        sites = getattr(self.crawler.spider, "sites", {})
        for base in list(self.claimed):
            site = sites.get(base)
            if site is not None and getattr(site, "outstanding", 1) <= 0:
                self.discovery_finished(base)

    # -- end of the crawl
    def spider_idle(self, spider: Spider) -> None:
        """This worker has nothing to do: close only if the whole crawl is finished."""
        if self.stopping:
            return
        wait = self.ask(self._idle)
        if wait:
            logger.debug("Idle, waiting: %s", wait)
            raise DontCloseSpider(wait)
        if wait is None:
            return  # Redis stopped answering: the crawl stops
        logger.info("Shared crawl finished: queue empty, no worker busy, discovery done")

    def _idle(self) -> str:
        # Nothing is downloading or being scraped here: every lease left is finished.
        self.state.flush_acks()
        for lease in list(self.leases):
            self.state.ack(lease)
            self._forget(lease)
        self._check_claims()
        self.state.reap()
        if self.state.run_id_now() != self.run:
            return ""  # the run this worker joined finished; another worker began the next
        wait = self._wait_reason()
        if not wait:
            self.state.finish(self.run)
        return wait

    def _wait_reason(self) -> str:
        if self.state.queued():
            return "requests queued"
        if self.state.leased_elsewhere():
            return "other workers have requests in progress"
        discovering = self.state.discovering()
        if not discovering:
            return ""
        live = set(self.state.live_workers())
        orphans = [site for site, owner in discovering.items() if owner not in live]
        if orphans:
            self._restart_discovery(orphans)
        return "discovery in progress"

    def _restart_discovery(self, orphans: list[str]) -> None:
        spider = self.crawler.spider
        mine = [site for site in orphans if site in getattr(spider, "sites", {})]
        claimed = [site for site in mine if self.claim(site)]
        if claimed and spider is not None:
            deferred_from_coro(self._crawl_start_of(spider, set(claimed)))

    async def _crawl_start_of(self, spider: Any, sites: set[str]) -> None:
        """Discovery requests of ``sites``, from a fresh run of the spider's ``start()``."""
        async for request in filter_start(spider, spider.start(), sites.__contains__):
            self.crawler.engine.crawl(request)

    def _inc(self, key: str, count: int = 1) -> None:
        if count and self.crawler.stats is not None:
            self.crawler.stats.inc_value(key, count)


async def filter_start(spider: Any, start: Any, keep: Any) -> Any:
    """Requests of ``start`` for sites ``keep`` accepts; other sites' discovery requests are
    dropped (and no longer counted as outstanding by the spider)."""
    from scrapy import Request

    sites = getattr(spider, "sites", {})
    async for item in start:
        site = item.meta.get(Meta.SITE) if isinstance(item, Request) else None
        if site is None or site not in sites or keep(site):
            yield item
            continue
        sites[site].outstanding -= 1
