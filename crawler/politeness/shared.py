"""Politeness shared by every worker of a distributed crawl (``REDIS_URL`` set).

Each site's next allowed request time lives in Redis. Right before a request leaves for the
downloader, a Lua script reserves the site's next slot atomically: it returns how long to
wait and moves the site's next allowed time on by the site's delay. N workers together
therefore never send to a site more often than its delay, whatever their number. A
``Retry-After`` pause one worker sees moves the site's next allowed time for all of them.

The delay is the largest of ``DOWNLOAD_DELAY``, the site's robots.txt Crawl-delay (shared
in Redis, so a worker that has not read robots.txt yet still honours it) and this worker's
own slot delay (AutoThrottle). Times are Redis's clock, so machines need not agree on time.
Every worker reads robots.txt itself (Scrapy's robots middleware needs it), but only one at
a time until the first has read it: no request leaves before the Crawl-delay is known.
Within one worker, a site's requests are sent one at a time: the next one reserves its
slot only when the previous one is answered, so a reserved time is never spent waiting in
the downloader.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING

from protego import Protego
from redis.exceptions import RedisError
from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy_maintext.distributed import lua
from scrapy_maintext.distributed.connection import crawl_client
from scrapy_maintext.distributed.settings import DistributedSettings
from scrapy_maintext.distributed.worker import DistributedWorker
from scrapy_maintext.politeness.robots import RobotsPolitenessSettings
from scrapy_maintext.politeness.throttle import FLOOR_KEY
from scrapy_maintext.scrapy_internals import cancel_slot_timer, live_slot, slot_key, slot_settings
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import Stopping, switched_off
from twisted.internet import defer, task

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

logger = logging.getLogger(__name__)

#: Lifetime of a site's keys after its last request (ms): longer than any Retry-After
#: pause honoured (``RETRY_AFTER_MAX_DELAY``, 300 s by default); a site's shared Crawl-delay
#: is the largest one read by any worker within it.
KEY_LIFETIME_MS = 3600 * 1000
#: How long one worker may take to fetch a site's robots.txt before another tries (ms).
ROBOTS_FETCH_LEASE_MS = 30_000
#: How often a worker waiting for another's robots.txt looks again (s).
ROBOTS_POLL = 0.1


class SharedPolitenessMiddleware:
    """Downloader middleware, last before the downloader (order 950)."""

    def __init__(self, crawler: Crawler) -> None:
        config = DistributedSettings.from_settings(crawler.settings)
        if not config.redis_url:
            raise switched_off("SharedPolitenessMiddleware", "REDIS_URL is not set")
        self.crawler = crawler
        self.prefix = config.politeness_prefix
        self.min_delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
        self.robots = RobotsPolitenessSettings.from_settings(crawler.settings)
        self.user_agent = str(
            crawler.settings.get("ROBOTSTXT_USER_AGENT") or crawler.settings.get("USER_AGENT")
        )
        self.worker_id = f"{id(self)}"
        self.server = server = crawl_client(crawler)
        self._reserve = server.register_script(lua.RESERVE)
        self._pause = server.register_script(lua.PAUSE)
        self._dispatch = server.register_script(lua.DISPATCH)
        self._robots_gate = server.register_script(lua.ROBOTS_GATE)
        self._robots_read = server.register_script(lua.ROBOTS_READ)
        self._locks: dict[str, defer.DeferredLock] = {}
        self._holding: dict[Request, str] = {}
        crawler.signals.connect(self.response_downloaded, signal=signals.response_downloaded)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _worker(self) -> DistributedWorker | None:
        return self.crawler.get_extension(DistributedWorker)

    async def process_request(self, request: Request) -> None:
        key = slot_key(self.crawler, request)
        lock = self._locks.setdefault(key, defer.DeferredLock())
        await maybe_deferred_to_future(lock.acquire())
        self._holding[request] = key
        try:
            if is_robots_txt(request):
                await self._robots_turn(key)
            await self._wait_for_turn(key)
        except RedisError:
            # Redis stopped answering (said once; the crawl stops): not sent, left undone.
            self._release(request)
            raise Stopping("Redis stopped answering") from None
        except BaseException:
            self._release(request)
            raise

    async def _wait_for_turn(self, key: str) -> None:
        """Reserve the site's next time and wait for it; a Retry-After pause that began
        meanwhile (another worker's 429) voids the reservation: wait it out, reserve again.
        Then record the send, or wait more if this worker woke up too late for its turn."""
        wait = self._reserve_slot(key) / 1000
        while True:
            if wait > 0:
                await sleep(wait)
                self._inc(Stat.SHARED_WAITS)
            paused = int(self.server.pttl(self._key(key, "pause")))
            if paused > 0:
                self._inc(Stat.SHARED_PAUSED_WAITS)
                await sleep(paused / 1000)
                wait = self._reserve_slot(key) / 1000
                continue
            wait = self._dispatch_slot(key) / 1000
            if wait <= 0:
                self._drop_stale_timer(key)
                return
            self._inc(Stat.SHARED_LATE_WAITS)

    def _drop_stale_timer(self, key: str) -> None:
        """The downloader slot may still hold a timer set when its delay was longer (the
        AutoThrottle start delay before the first answer): the request would wait for it
        after its turn here. The slot's own delay check runs again when the request enters."""
        slot = live_slot(self.crawler, key)
        if slot is not None:
            cancel_slot_timer(slot)

    def _dispatch_slot(self, key: str) -> int:
        delay, _floor = self._delays(key)
        keys = [self._key(key, "next"), self._key(key, "sent"), self._key(key, "floor")]
        return int(self._dispatch(keys, [int(delay * 1000), KEY_LIFETIME_MS]))

    async def _robots_turn(self, key: str) -> None:
        keys = [self._key(key, "robots"), self._key(key, "robots:fetching")]
        while not self._robots_gate(keys, [self.worker_id, ROBOTS_FETCH_LEASE_MS]):
            await sleep(ROBOTS_POLL)

    def _robots_txt_read(self, key: str, response: Response) -> None:
        """Share the Crawl-delay of a robots.txt this worker fetched, as its robots
        middleware will apply it (``ROBOTSTXT_CRAWL_DELAY_*``)."""
        floor = self.min_delay
        if response.status < 400 and self.robots.obey_crawl_delay:
            parser = Protego.parse(response.body.decode("utf-8", "replace"))
            delay = parser.crawl_delay(self.user_agent)
            if delay:
                floor = max(floor, min(float(delay), self.robots.max_crawl_delay))
        keys = [self._key(key, "floor"), self._key(key, "robots")]
        self._robots_read(keys, [int(floor * 1000), KEY_LIFETIME_MS])

    def _key(self, site: str, name: str) -> str:
        return f"{self.prefix}:{site}:{name}"

    def _reserve_slot(self, key: str) -> int:
        delay, floor = self._delays(key)
        keys = [self._key(key, "next"), self._key(key, "floor")]
        local = int(self._local_wait(key) * 1000)
        args = [int(delay * 1000), int(floor * 1000), KEY_LIFETIME_MS, local]
        wait, _start = self._reserve(keys, args)
        return int(wait)

    def _local_wait(self, key: str) -> float:
        """How long this worker's own download slot would still hold a request (its delay
        may have grown since the last reservation: AutoThrottle, a local Retry-After
        pause). The reservation starts no earlier, so no time reserved is lost there."""
        slot = live_slot(self.crawler, key)
        if slot is None:
            return 0.0
        return max(0.0, slot.lastseen + slot.download_delay() - time.monotonic())

    def _delays(self, key: str) -> tuple[float, float]:
        """(this worker's delay for the site, its robots.txt floor)."""
        configured = slot_settings(self.crawler, key)
        floor = max(self.min_delay, float(configured.get(FLOOR_KEY) or 0.0))
        slot = live_slot(self.crawler, key)
        delay = max(floor, float(configured.get("delay") or 0.0), slot.delay if slot else 0.0)
        return delay, floor

    def process_response(self, request: Request, response: Response) -> Response:
        if is_robots_txt(request) and request in self._holding:
            with contextlib.suppress(RedisError):  # the crawl stops (said once)
                self._robots_txt_read(self._holding[request], response)
        self._release(request)
        worker = self._worker()
        if worker is not None:
            worker.left_downloader(request)
        return response

    def process_exception(self, request: Request, exception: BaseException) -> None:
        self._release(request)
        worker = self._worker()
        if worker is not None:
            worker.download_failed(request)

    def _release(self, request: Request) -> None:
        key = self._holding.pop(request, None)
        if key is not None:
            self._locks[key].release()

    def response_downloaded(self, response: Response, request: Request) -> None:
        """RetryAfterMiddleware chose a pause for the site (``retry_after_pause``)."""
        pause = request.meta.get(Meta.RETRY_AFTER_PAUSE)
        if not pause:
            return
        key = slot_key(self.crawler, request)
        try:
            self._pause(
                [self._key(key, "next"), self._key(key, "pause")],
                [int(float(pause) * 1000), KEY_LIFETIME_MS],
            )
        except RedisError:
            return  # Redis stopped answering: the crawl stops (said once)
        self._inc(Stat.SHARED_RETRY_AFTER_PAUSES)
        logger.info("Paused %s for every worker: %.1fs", key, float(pause))

    def _inc(self, key: str) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(key)


async def sleep(seconds: float) -> None:
    from twisted.internet import reactor

    await maybe_deferred_to_future(task.deferLater(reactor, seconds, lambda: None))


def is_robots_txt(request: Request) -> bool:
    return urlparse_cached(request).path == "/robots.txt"
