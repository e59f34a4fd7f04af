"""``DistributedScheduler``: scrapy-redis's scheduler, fitted to a polite shared crawl.

Built on ``scrapy_redis.scheduler.Scheduler`` (Redis connection settings, request
serialization through ``scrapy_redis.queue.Base`` and ``picklecompat``, the duplicate
filter's key and logging), with what a shared polite crawl on Scrapy 2.19 needs on top:

- one FIFO queue per site, served in turns (scrapy-redis's ``PriorityQueue`` is one sorted
  set, which orders equal priorities by their pickled bytes, and lets one big site fill
  every worker);
- leases: a popped request stays in Redis until its worker finishes it; a killed worker's
  requests go back to the queue (scrapy-redis deletes a request when it is popped);
- the queue and the duplicate filter persist whatever ``SCHEDULER_PERSIST`` says: one
  worker stopping must not flush the queue the other workers still crawl;
- discovery requests (robots.txt, sitemaps, feeds) stay in this process, which holds the
  site's plan; never a blocking pop on the reactor thread;
- request fingerprints from Scrapy's ``REQUEST_FINGERPRINTER`` (scrapy-redis hashes the URL
  its own way);
- requests popped :data:`POP_BATCH` at a time, each of another site (one round trip for
  several pages): each is leased when popped, so a worker killed with some still waiting
  here has them fetched by another, as with a request in its downloader; their rows in the
  crawl state are read then, together, and their sites' turns taken where free
  (``politeness.ready_turns``): one round trip for the batch, not one a request;
- the requests queued in one engine tick pushed in one round trip (a sitemap's pages): one
  the shared duplicate filter refuses is dropped afterwards, with Scrapy's
  ``request_dropped`` signal, as the engine drops one its scheduler refuses.
"""

from __future__ import annotations

import heapq
import inspect
import itertools
import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.reactor import CallLaterOnce
from scrapy_maintext.distributed.state import Push
from scrapy_maintext.distributed.worker import DistributedWorker
from scrapy_maintext.scrapy_internals import decode_request, encode_request, slot_key
from scrapy_maintext.state.conditional import read_ahead
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_redis import picklecompat
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import Base as RedisQueueBase
from scrapy_redis.scheduler import Scheduler as RedisScheduler

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: Requests taken from the shared queue in one call at most (each of another site, and
#: none of a site this worker holds ``DISTRIBUTED_SITE_PREFETCH`` of).
POP_BATCH = 8


class SharedDupeFilter(RFPDupeFilter):
    """scrapy-redis's Redis set of request fingerprints, with Scrapy's fingerprints."""

    def __init__(self, crawler: Crawler, server: Any, key: str) -> None:
        super().__init__(server, key, debug=crawler.settings.getbool("DUPEFILTER_DEBUG"))
        self.fingerprinter = crawler.request_fingerprinter

    def request_fingerprint(self, request: Request) -> str:
        return self.fingerprinter.fingerprint(request).hex()


class RequestCodec(RedisQueueBase):
    """scrapy-redis's request (de)serialization; the queues themselves are Lua scripts.

    A request's callback and errback are named from a table of the spider's methods made
    once: Scrapy's ``Request.to_dict`` looks each up by ``inspect.getmembers`` of the whole
    spider, which was the largest cost of queueing a request. The rest of the dict is
    Scrapy's own (``to_dict`` of the request without them)."""

    _names: dict[Any, str] | None = None

    def _encode_request(self, request: Request) -> bytes:
        callback, errback = request.callback, request.errback
        named = {"callback": self._name(callback), "errback": self._name(errback)}
        # Taken off for to_dict (which would look them up) and put back: no copy made.
        request.callback = request.errback = None
        try:
            found = request.to_dict(spider=self.spider)
        finally:
            request.callback, request.errback = callback, errback
        found.update(named)
        return bytes(self.serializer.dumps(found))

    def _name(self, method: Any) -> Any:
        """The spider's method name of ``method`` (as Scrapy's ``_find_method`` finds it:
        the first of the spider's methods by name whose function it is), or ``method``
        itself when it is no callable (None, or a name already)."""
        if not callable(method):
            return method
        function = getattr(method, "__func__", None)
        if function is not None:
            if self._names is None or function not in self._names:
                self._names = self._methods()  # a method set on the spider since
            if function in self._names:
                return self._names[function]
        raise ValueError(f"Function {method} is not an instance method in: {self.spider}")

    def _methods(self) -> dict[Any, str]:
        names: dict[Any, str] = {}
        for name, bound in inspect.getmembers(self.spider, predicate=inspect.ismethod):
            names.setdefault(bound.__func__, name)
        return names


class DistributedScheduler(RedisScheduler):
    """The shared crawl's scheduler (set by the add-on when ``REDIS_URL`` is set)."""

    def __init__(self, crawler: Crawler, worker: DistributedWorker) -> None:
        super().__init__(worker.server, persist=True, idle_before_close=0)
        self.crawler = crawler
        self.worker = worker
        self.stats = crawler.stats
        self._local: list[tuple[int, int, Request]] = []
        self._order = itertools.count()
        #: Popped and leased, not handed to the engine yet.
        self._popped: deque[Request] = deque()
        #: Requests for the shared queue not sent yet: sent together at the end of the
        #: engine's tick, or before the scheduler is asked what it holds.
        self._pushing: list[tuple[Request, Push]] = []
        self._push_later = CallLaterOnce(self._push)
        #: The shared politeness and the extraction backpressure (looked up at open).
        self._pace: Any = None
        self._backpressure: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        worker = crawler.get_extension(DistributedWorker)
        if worker is None:
            raise ValueError("DistributedScheduler needs REDIS_URL (the DistributedWorker)")
        return cls(crawler, worker)

    def open(self, spider: Spider) -> None:
        self.spider = spider
        state = self.worker.state
        self.queue = RequestCodec(self.server, spider, state.queue_key(""), picklecompat)
        self.df = SharedDupeFilter(self.crawler, self.server, state.key("seen"))
        self.worker.join(spider)
        from scrapy_maintext.pipelines.backpressure import ExtractionBackpressure
        from scrapy_maintext.politeness.shared import SharedPolitenessMiddleware

        self._pace = self.crawler.get_downloader_middleware(SharedPolitenessMiddleware)
        self._backpressure = self.crawler.get_downloader_middleware(ExtractionBackpressure)

    def close(self, reason: str) -> None:
        """Keeps the shared queue and duplicate filter (see the module docstring)."""
        self._push()

    def __len__(self) -> int:
        return len(self._local) + len(self._popped) + self._shared_queued()

    def has_pending_requests(self) -> bool:
        return bool(self._local) or bool(self._popped) or self._shared_queued() > 0

    def _shared_queued(self) -> int:
        """Sites with requests in the shared queue (none once Redis stopped answering)."""
        self._push()
        if not self.worker.joined:
            return 0
        return self.worker.ask(self.worker.state.queued, default=0) or 0

    def enqueue_request(self, request: Request) -> bool:
        if is_local(request):
            heapq.heappush(self._local, (-request.priority, next(self._order), request))
            self._inc(Stat.SCHEDULER_ENQUEUED_LOCAL)
            return True
        lease = self.worker.replaced_lease(request)
        try:
            data = encode_request(self.queue, request)
        except ValueError:
            # Not serializable (a callback that is no spider method): this worker keeps it,
            # as Scrapy keeps such requests in memory when its disk queue cannot take them.
            if lease:
                request.meta[Meta.DISTRIBUTED_LEASE] = lease
            self._inc(Stat.SCHEDULER_UNSERIALIZABLE)
            heapq.heappush(self._local, (-request.priority, next(self._order), request))
            return True
        if self.worker.breaker.down:
            return False  # Redis stopped answering: the request stays undone
        fingerprint = "" if request.dont_filter else self.df.request_fingerprint(request)
        push = Push(data, self._site_key(request), fingerprint, request.priority > 0, lease)
        self._pushing.append((request, push))
        self._push_later.schedule()
        return True

    def _push(self) -> None:
        """The requests queued since the last push, sent in one round trip (the pages a
        sitemap lists come in one engine tick). One the shared queue refuses (seen) is
        dropped as Scrapy drops a request its scheduler refuses: logged by the duplicate
        filter, and the ``request_dropped`` signal."""
        self._push_later.cancel()
        pushing, self._pushing = self._pushing, []
        if not pushing:
            return
        added = self.worker.ask(self.worker.state.push_many, [push for _, push in pushing])
        for index, (request, push) in enumerate(pushing):
            if added is None:
                # Redis stopped answering (the crawl stops): the request stays undone, and
                # its site's discovery unfinished, for the next worker or run.
                self._dropped(request)
                continue
            self.worker.handed_on(push.lease)
            if added[index]:
                self._inc(Stat.SCHEDULER_ENQUEUED_REDIS)
            else:
                self.df.log(request, self.spider)
                self._dropped(request)

    def _dropped(self, request: Request) -> None:
        self.crawler.signals.send_catch_log(
            signal=signals.request_dropped, request=request, spider=self.spider
        )

    def next_request(self) -> Request | None:
        self._push()
        if self._local:
            self._inc(Stat.SCHEDULER_DEQUEUED_LOCAL)
            return heapq.heappop(self._local)[2]
        if not self._popped and not self._pop():
            return None
        self._inc(Stat.SCHEDULER_DEQUEUED_REDIS)
        return self._popped.popleft()

    def _pop(self) -> bool:
        """Requests of the shared queue leased, up to :data:`POP_BATCH`: whether any."""
        if not self.worker.joined:
            return False
        prefetch = self.worker.config.site_prefetch
        skip = [site for site, count in self.worker.held.items() if count >= prefetch]
        leases = self.worker.ask(self.worker.state.pop_many, skip, POP_BATCH)
        popped = []
        for lease in leases or ():
            self.worker.leased(lease.id, lease.site)
            request = decode_request(self.queue, lease.data)
            request.meta[Meta.DISTRIBUTED_LEASE] = lease.id
            popped.append(request)
        self._popped.extend(popped)
        # Their rows in the crawl state, for the conditional requests: one round trip.
        read_ahead(self.crawler, popped)
        if self._pace is not None and popped:
            room = len(popped) if self._backpressure is None else self._backpressure.room()
            self.worker.ask(self._pace.ready.take, popped, room)
        return bool(leases)

    def _site_key(self, request: Request) -> str:
        # The downloader's slot key: the unit of politeness is also the unit of fairness.
        return slot_key(self.crawler, request)

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)


def is_local(request: Request) -> bool:
    """Discovery requests stay with the worker holding their site's plan."""
    meta = request.meta
    return bool(
        meta.get(Meta.DISTRIBUTED_LOCAL) or (meta.get(Meta.SKIP_URL_FILTER) and Meta.SITE in meta)
    )
