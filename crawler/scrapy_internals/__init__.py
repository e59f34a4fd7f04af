"""Every private hook of Scrapy and scrapy-redis that scrapy-maintext uses, in one module.

Scrapy has no public API for what polite crawling needs: a download slot's delay, its last
request time and its queue, the per-slot settings the downloader reads when it creates a
slot, the downloader's start of a slot's queued requests, the robots middleware's parse
step, AutoThrottle's adjustment, the engine's state (for the site memory's drain check, off
by default), a response's explicit encoding, scrapy-redis's request codec, and the HTTP/1.1
download handler's connection pool (Twisted's, whose idle connections are bounded here), and
the scheduler's per-slot queues (taken in turn, not by a scan of every site); and in
:mod:`.playwright`, scrapy-playwright's handler's (imported only by a crawl that renders).
Components call the functions and base classes here and nothing private of Scrapy's elsewhere;
``tests/test_scrapy_internals.py`` checks each by its behaviour on the installed Scrapy, and
``.ci/newest-scrapy`` runs those tests against the newest Scrapy release before the bound in
pyproject.toml is raised.
"""

from __future__ import annotations

import itertools
import logging
import signal
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader import Downloader
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.extensions.throttle import AutoThrottle
from scrapy.pqueues import DownloaderAwarePriorityQueue, _path_safe
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.httpobj import urlparse_cached
from scrapy_maintext.discovery.window import sites_at_once
from scrapy_maintext.open_files import crawl_budget
from scrapy_maintext.vocabulary.settings import setting
from twisted.internet.defer import Deferred
from twisted.web.client import HTTPConnectionPool

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)


def slot_key(crawler: Crawler, request: Request) -> str:
    """The download slot a request goes through (``download_slot`` meta, else its host)."""
    assert crawler.engine is not None
    return str(crawler.engine.downloader.get_slot_key(request))


def live_slot(crawler: Crawler, key: str) -> Slot | None:
    """The downloader's slot ``key`` if it exists now (``delay``, ``lastseen``, ``queue``)."""
    assert crawler.engine is not None
    return crawler.engine.downloader.slots.get(key)


def slot_settings(crawler: Crawler, key: str) -> dict[str, Any]:
    """The settings the downloader gives slot ``key`` when it (re)creates it; mutable."""
    assert crawler.engine is not None
    return crawler.engine.downloader.per_slot_settings.setdefault(key, {})


def when_request_done(crawler: Crawler, callback: Callable[[Request], None]) -> None:
    """Call ``callback(request)`` each time the engine is done with a request it took from
    the scheduler: downloaded or failed, its callback run and its items through every item
    pipeline (the engine slot's ``remove_request``, which has no signal). Call it once the
    spider is open."""
    assert crawler.engine is not None
    slot = crawler.engine._slot
    assert slot is not None
    remove = slot.remove_request

    def remove_request(request: Request) -> None:
        remove(request)
        callback(request)

    slot.remove_request = remove_request  # type: ignore[method-assign]


def cancel_slot_timer(slot: Slot) -> None:
    """Drop the timer of an idle slot (set for a longer delay than the slot has now)."""
    timer = getattr(slot, "latercall", None)
    if timer is not None and not slot.queue:
        timer.cancel()
        slot.latercall = None


def take_queued(crawler: Crawler) -> Iterator[Deferred]:
    """Remove every request waiting in a download slot's queue; yield their Deferreds."""
    downloader = getattr(crawler.engine, "downloader", None)
    for slot in list(getattr(downloader, "slots", {}).values()):
        queue = getattr(slot, "queue", None)
        while queue:
            _request, deferred = queue.popleft()
            yield deferred


def force_shutdown() -> bool:
    """Do what a second Ctrl-C does (stop the reactor without waiting for the crawl) if the
    process got a first one: Scrapy's crawler process then has its handler for the second
    installed. False when it has not (a crawl stopped by code, in a process of its own)."""
    handler = signal.getsignal(signal.SIGINT)
    if getattr(handler, "__name__", "") != "_signal_kill" or not callable(handler):
        return False
    handler(signal.SIGINT, None)
    return True


def explicit_encoding(response: Any) -> str | None:
    """The encoding a response was built with (``encoding=``), which Scrapy puts first."""
    return getattr(response, "_encoding", None)


def encode_request(queue: Any, request: Request) -> bytes:
    """scrapy-redis's serialisation of a request (its queue's codec)."""
    return queue._encode_request(request)


def decode_request(queue: Any, data: bytes) -> Request:
    """A request back from :func:`encode_request`'s bytes."""
    return queue._decode_request(data)


def crawl_is_drained(crawler: Crawler, held: int) -> bool:
    """Whether nothing but ``held`` items is left in the crawl: nothing downloading, no
    response waiting for the spider or in its callback, nothing scheduled that the engine
    is willing to send. A held item keeps its request in the engine's ``inprogress`` and
    its response in the scraper's ``active`` set, so more of either than ``held`` means
    something is still on its way."""
    engine = crawler.engine
    slot = getattr(getattr(engine, "scraper", None), "slot", None)
    if engine is None or slot is None or engine.downloader.active or slot.queue:
        return False
    inprogress = getattr(getattr(engine, "_slot", None), "inprogress", ())
    if max(slot.itemproc_size, len(slot.active), len(inprogress)) > held:
        return False
    if getattr(engine, "_start", None) is not None and not engine.needs_backout():
        return False
    scheduler = getattr(engine, "scheduler", None)
    if scheduler is None:  # the engine is closing
        return True
    return not scheduler.has_pending_requests() or engine.needs_backout()


class OneAtATimeDownloader(Downloader):
    """Scrapy's downloader keeping a slot's concurrency when the slot has no delay.

    With no delay, Scrapy starts every queued request its slot has room for in one loop,
    but on the asyncio reactor each download only begins (and takes its place in the slot's
    ``transferring`` set) on a later turn of the event loop: the loop sees the room
    unchanged and starts the whole queue at once (11 requests in flight to one site with
    CONCURRENT_REQUESTS_PER_DOMAIN=1). Pages then arrive in whatever order a loaded machine
    answers them, and what depends on their order (the site memory's warm-up) changes from
    run to run. Here a request takes its place before its download is scheduled.
    """

    def _process_queue(self, slot: Slot) -> None:
        if slot.latercall or slot.download_delay():
            super()._process_queue(slot)  # with a delay, Scrapy starts one request per call
            return
        while slot.queue and slot.free_transfer_slots() > 0:
            slot.lastseen = monotonic()
            request, queue_dfd = slot.queue.popleft()
            # _download() adds it again (a set) and removes it when the download ends.
            slot.transferring.add(request)
            deferred_from_coro(self._wait_for_download(slot, request, queue_dfd))


class RobotsTxtHooks(RobotsTxtMiddleware):
    """Scrapy's robots middleware with its private steps as named hooks."""

    def robots_received(self, response: Response, netloc: str) -> Response:
        """A robots.txt answer before it is parsed; returns the response to parse."""
        return response

    def robots_failed(self, exc: Exception, netloc: str) -> bool:
        """A robots.txt download error; True if handled (else Scrapy's handling runs)."""
        return False

    async def robots_kept(self, request: Request) -> Response | None:
        """A robots.txt answer to use instead of a download for the site of ``request`` (a
        copy kept between runs, or one another worker read), or None to download it."""
        return None

    async def robot_parser(self, request: Request) -> Any:
        """Scrapy's, asking :meth:`robots_kept` first. Requests of the site that come
        meanwhile wait for the same parser, as they wait for Scrapy's download."""
        netloc = urlparse_cached(request).netloc
        waiting = self.wait_for_robots(netloc)
        if waiting is None:
            return await super().robot_parser(request)
        if await self.settle_from_kept(request, netloc):
            return self._parsers[netloc]
        # Scrapy downloads it (its own entry in place of ours), then ours is settled too.
        del self._parsers[netloc]
        parser = await super().robot_parser(request)
        waiting.callback(parser)
        return parser

    async def settle_from_kept(self, request: Request, netloc: str) -> bool:
        """Whether :meth:`robots_kept` had a copy for ``netloc``, now its robots.txt."""
        try:
            kept = await self.robots_kept(request)
        except Exception:
            logger.warning("robots.txt of %s: no kept copy", netloc, exc_info=True)
            return False
        if kept is None:
            return False
        await self._parse_robots(kept, netloc, request)
        return True

    def wait_for_robots(self, netloc: str) -> Deferred[Any] | None:
        """What the site's requests wait on from now, or None: its robots.txt was asked."""
        if netloc in self._parsers:
            return None
        waiting: Deferred[Any] = Deferred()
        self._parsers[netloc] = waiting
        return waiting

    def settle_robots(self, netloc: str, parser: Any) -> None:
        """Make ``parser`` the robots.txt of ``netloc``, releasing requests waiting for it."""
        waiting = self._parsers.get(netloc)
        self._parsers[netloc] = parser
        if isinstance(waiting, Deferred):
            waiting.callback(parser)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        await super()._parse_robots(self.robots_received(response, netloc), netloc, request)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        if not self.robots_failed(exc, netloc):
            super()._robots_error(exc, netloc)


class AutoThrottleHooks(AutoThrottle):
    """Scrapy's AutoThrottle with a hook after each adjustment of a slot's delay."""

    def delay_adjusted(self, key: str, slot: Slot) -> None:
        """Called right after AutoThrottle set ``slot.delay`` from a response."""

    def _response_downloaded(self, response: Response, request: Request, spider: Spider) -> None:
        super()._response_downloaded(response, request, spider)
        key, slot = self._get_slot(request, spider)
        if key is not None and slot is not None:
            self.delay_adjusted(key, slot)


def fail_exit_status(crawler: Crawler) -> None:
    """Make the command that runs ``crawler`` exit with status 1, once its engine stopped.

    Scrapy's commands exit with 1 only when ``CrawlerProcess.bootstrap_failed``, which it
    sets for a crawler left without a spider when its crawl ends; nothing public lets an
    extension fail the exit status of a stock ``scrapy crawl`` (the add-on's case). Called
    at ``engine_stopped``, after everything that uses the spider.
    """
    crawler.spider = None


class BoundedConnectionPool(HTTPConnectionPool):
    """Twisted's connection pool keeping ``max_idle`` idle connections at most, all hosts
    together: the connection idle longest is closed first (Twisted bounds them per host
    only, and keeps each for ``cachedConnectionTimeout``)."""

    def __init__(self, reactor: Any, max_idle: int) -> None:
        super().__init__(reactor, persistent=True)
        self.max_idle = max_idle
        self._keys: dict[Any, Any] = {}

    def _putConnection(self, key: Any, connection: Any) -> None:
        super()._putConnection(key, connection)
        self._keys[connection] = key
        idle = self._timeouts  # connection -> its timeout, oldest first
        while len(idle) > self.max_idle:
            oldest = next(iter(idle))
            idle[oldest].cancel()
            self._removeConnection(self._keys.pop(oldest), oldest)
        if len(self._keys) > 2 * len(idle) + 64:  # taken again, or closed by Twisted
            self._keys = {c: k for c, k in self._keys.items() if c in idle}

    # Twisted keeps a host's list of idle connections once it is empty: with sites done one
    # after the other, a key and an empty list for every site ever crawled (issue 47).
    def getConnection(self, key: Any, endpoint: Any) -> Any:
        connection = super().getConnection(key, endpoint)
        self._drop_if_empty(key)
        return connection

    def _removeConnection(self, key: Any, connection: Any) -> None:
        super()._removeConnection(key, connection)
        self._drop_if_empty(key)

    def _drop_if_empty(self, key: Any) -> None:
        if key in self._connections and not self._connections[key]:
            del self._connections[key]


#: Idle connections kept per site of ``DISCOVERY_SITES_AT_ONCE`` (within ``KEEPALIVE_MAX_IDLE``).
IDLE_PER_SITE_AT_ONCE = 2


class BoundedHTTP11DownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 download handler whose idle keep-alive connections fit the crawl's
    open-file budget (:class:`scrapy_maintext.open_files.FileBudget`)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        from twisted.internet import reactor

        budget = crawl_budget(crawler.settings)
        idle = budget.idle
        at_once = sites_at_once(
            setting(crawler.settings, "DISCOVERY_SITES_AT_ONCE"),
            crawler.settings.getint("CONCURRENT_REQUESTS"),
        )
        # A shared queue (REDIS_URL) serves the pages of every site planned so far in
        # turn: a window's worth of connections would be closed before each site's next
        # page, and every page open a new one.
        if at_once > 0 and not setting(crawler.settings, "REDIS_URL"):
            # Sites start in turn: the connections of the sites under way are kept, those
            # of done sites closed (about 4 KB each; issue 47).
            idle = min(idle, IDLE_PER_SITE_AT_ONCE * at_once)
        old = self._pool
        pool = BoundedConnectionPool(reactor, idle)
        pool.maxPersistentPerHost = old.maxPersistentPerHost
        pool._factory = old._factory
        self._pool = pool


class SlotRingPriorityQueue(DownloaderAwarePriorityQueue):
    """Scrapy's downloader-aware queue (a queue per download slot; a slot with no download
    active goes first) without its scan of every slot per request: the slots with queued
    requests wait in a ring, and a pop takes the first of the next :attr:`SCAN` whose site has
    no download active (else the least busy of them) and sends it to the back. Scrapy's pop
    asked every slot for its downloads, so a crawl of 1,000 sites paid 1,000 lookups per
    request (issue 47); its length is kept as a count for the same reason."""

    SCAN = 64

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ring: deque[str] = deque(self.pqueues)
        self._count = sum(len(q) for q in self.pqueues.values())

    def push(self, request: Request) -> None:
        slot = self._downloader_interface.get_slot_key(request)
        if slot not in self.pqueues:
            self._ring.append(slot)
        super().push(request)
        self._count += 1

    def _choose(self) -> int:
        """The ring position of the slot to take from (the ring is not empty)."""
        active_of = self._downloader_interface._active_downloads
        best, fewest = 0, None
        for position, slot in enumerate(itertools.islice(self._ring, self.SCAN)):
            active = active_of(slot)
            if active == 0:
                return position
            if fewest is None or active < fewest:
                best, fewest = position, active
        return best

    def pop(self) -> Request | None:
        if not self._ring:
            return None
        # The slots passed over and the one taken go to the back, in turn.
        self._ring.rotate(-self._choose())
        slot = self._ring.popleft()
        queue = self.pqueues[slot]
        request = queue.pop()
        if len(queue):
            self._ring.append(slot)
        else:
            del self.pqueues[slot]
            queue.close()
            if self.key:
                with suppress(OSError):
                    Path(self.key, _path_safe(slot)).rmdir()
        if request is not None:
            self._count -= 1
        return request

    def peek(self) -> Request | None:
        if not self._ring:
            return None
        return self.pqueues[self._ring[self._choose()]].peek()

    def close(self) -> dict[str, list[int]]:
        self._ring.clear()
        self._count = 0
        return super().close()

    def __len__(self) -> int:
        return self._count


def robots_middleware(crawler: Crawler) -> Any:
    """The crawl's robots.txt middleware (Scrapy's or a subclass), or None when robots.txt
    is not obeyed: a rendered page's requests are checked with its parsers."""
    from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware

    assert crawler.engine is not None
    for middleware in crawler.engine.downloader.middleware.middlewares:
        if isinstance(middleware, RobotsTxtMiddleware):
            return middleware
    return None


def slot_sent_at(crawler: Crawler, key: str, when: float) -> None:
    """Count a request sent at ``when`` (``time.monotonic()``, the clock of Scrapy's
    ``Slot.lastseen``) outside the downloader against slot ``key``: its next request waits
    the slot's delay from then (a rendered page's own requests, sent while its render holds
    the slot)."""
    slot = live_slot(crawler, key)
    if slot is not None:
        slot.lastseen = max(slot.lastseen, when)
