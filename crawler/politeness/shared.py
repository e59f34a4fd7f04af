"""Politeness shared by every worker of a distributed crawl (``REDIS_URL`` set).

Each site's next allowed request time lives in Redis. Right before a request leaves for the
downloader, a Lua script reserves the site's next slot atomically: it returns how long to
wait and moves the site's next allowed time on by the site's delay. N workers together
therefore never send to a site more often than its delay, whatever their number. A
``Retry-After`` pause one worker sees moves the site's next allowed time for all of them.

The delay is the largest of ``DOWNLOAD_DELAY``, the site's robots.txt Crawl-delay (shared
in Redis, so a worker that has not read robots.txt yet still honours it) and this worker's
own slot delay (AutoThrottle). Times are Redis's clock, so machines need not agree on time.
A site's robots.txt is fetched by one worker: the others wait for its answer and take it
from Redis (with the Crawl-delay it sets), so no request leaves before the Crawl-delay is
known, and the site is asked once, not once per worker. A request that passed its turn here
is not held back by this worker's own download slot (its delay was reserved already): the
time Redis recorded is the time it leaves.
Within one worker, a site's requests are sent one at a time: the next one reserves its
slot only when the previous one is answered, so a reserved time is never spent waiting in
the downloader. Across workers too: a request holds the site's "in flight" key until its
answer comes, and the site's next request, any worker's, leaves its delay after that
answer. The server sees a request somewhere between its dispatch and its answer, so no two
reach it closer than the delay, however long one took on its way (a worker's first
connection, a loaded machine); a site's pace is thus its delay plus its answer time.
Round trips: the requests a worker takes from the shared queue together take their free
sites' turns together (:mod:`.ready_turns`); another request's reservation and dispatch are
one script when no wait is due; the answers a worker had since its last call go with its
next one (any site's; sent alone after :data:`ANSWER_HOLD` if none comes), with how long
ago each came: recorded at the moment it came, never earlier.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import time
from typing import TYPE_CHECKING, Any

from protego import Protego
from redis.exceptions import RedisError
from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy_maintext.distributed import lua
from scrapy_maintext.distributed.connection import crawl_client
from scrapy_maintext.distributed.settings import DistributedSettings
from scrapy_maintext.distributed.worker import DistributedWorker
from scrapy_maintext.politeness.ready_turns import ReadyTurns
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
#: How often at most a worker whose turn came while another worker's request to the site
#: is still unanswered looks again (ms; 0.9 x the site's delay when that is longer).
IN_FLIGHT_POLL_MS = 20
#: A site's "request in flight" key outlives the request's download timeout by this (s): a
#: worker killed mid-request holds the site no longer.
IN_FLIGHT_MARGIN = 5.0
#: How long at most an answer waits for this worker's next call to go with (s). It is
#: recorded at the moment it came whenever it is sent; until then the site looks in flight
#: to the other workers, which wait the site's delay after the answer anyway.
ANSWER_HOLD = 0.02


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
        self._reserve_dispatch = server.register_script(lua.RESERVE_DISPATCH)
        self._pause = server.register_script(lua.PAUSE)
        self._dispatch = server.register_script(lua.DISPATCH)
        self._answers_script = server.register_script(lua.ANSWERS)
        #: Each request sent holds the site's "in flight" key with a token until answered.
        self._tokens: dict[Request, str] = {}
        #: Answers not sent yet, by site (the request's token, the site's delay in ms, when
        #: it came: monotonic s): sent with the next call, or by ``_flush``.
        self._answers: dict[str, tuple[str, int, float]] = {}
        self._flush: Any = None
        self._sequence = itertools.count()
        timeout = crawler.settings.getfloat("DOWNLOAD_TIMEOUT")
        self.inflight_lease_ms = int((timeout + IN_FLIGHT_MARGIN) * 1000)
        self.key_lifetime_ms = KEY_LIFETIME_MS
        self.ready = ReadyTurns(self)
        self._robots_gate = server.register_script(lua.ROBOTS_GATE)
        self._robots_read = server.register_script(lua.ROBOTS_READ)
        self._robots_shared = server.register_script(lua.ROBOTS_SHARED)
        self._locks: dict[str, defer.DeferredLock] = {}
        self._holding: dict[Request, str] = {}
        crawler.signals.connect(self.response_downloaded, signal=signals.response_downloaded)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)

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
        token = self.ready.claim(request, key)
        if token is not None:
            self._tokens[request] = token
            self._drop_stale_timer(key)
            return
        try:
            if is_robots_txt(request):
                await self._robots_turn(key)
            await self._wait_for_turn(key, request)
        except RedisError:
            # Redis stopped answering (said once; the crawl stops): not sent, left undone.
            self._release(request)
            raise Stopping("Redis stopped answering") from None
        except BaseException:
            self._release(request)
            raise

    async def _wait_for_turn(self, key: str, request: Request) -> None:
        """Reserve the site's next time and wait for it; a Retry-After pause that began
        meanwhile (another worker's 429) voids the reservation: wait it out, reserve again.
        Then record the send, or wait more if this worker woke up too late for its turn.
        When no wait is due, the reservation and the send are one call."""
        token = self.token()
        wait, start, answer = self._reserve_slot(key, token)
        while True:
            if answer is None:
                if wait > 0:
                    await sleep(wait)
                    self.inc(Stat.SHARED_WAITS)
                token = self.token()
                # The pause is looked for inside the dispatch: one round trip, not two.
                answer = self._dispatch_slot(key, token, start)
            if answer == 0:
                self._tokens[request] = token
                self._drop_stale_timer(key)
                return
            if answer < 0:
                self.inc(Stat.SHARED_PAUSED_WAITS)
                await sleep(-answer / 1000)
                token = self.token()
                wait, start, answer = self._reserve_slot(key, token)
                continue
            wait, answer = answer / 1000, None
            self.inc(Stat.SHARED_LATE_WAITS)

    def token(self) -> str:
        return f"{self.worker_id}:{next(self._sequence)}"

    def _drop_stale_timer(self, key: str) -> None:
        """The downloader slot may still hold a timer set after its last request (or when
        its delay was longer: the AutoThrottle start delay), and would hold the request for
        its own (randomised) delay: the request would leave later than the time recorded
        here, and the next worker's turn could come right after it. The turn was reserved
        with this slot's delay, so the slot lets it go at once."""
        slot = live_slot(self.crawler, key)
        if slot is not None:
            cancel_slot_timer(slot)
            slot.lastseen = float("-inf")

    def _dispatch_slot(self, key: str, token: str, start: int) -> int:
        delay, _floor = self.delays(key)
        args = [int(delay * 1000), KEY_LIFETIME_MS, self.inflight_lease_ms, IN_FLIGHT_POLL_MS]
        return int(self._dispatch(self.dispatch_keys(key), [*args, token, start]))

    def dispatch_keys(self, key: str) -> list[str]:
        return [*self._pace_keys(key), *(self._key(key, n) for n in ("inflight", "turn", "pause"))]

    def _pace_keys(self, key: str) -> list[str]:
        return [self._key(key, "next"), self._key(key, "sent"), self._key(key, "floor")]

    def _answered(self, request: Request) -> None:
        """The site's request in flight was answered (or failed): the next one, any
        worker's, leaves the site's delay after the answer. Sent with this worker's next call
        (any site's), or alone after :data:`ANSWER_HOLD`, with its age. A request that never
        came here gives its batch's turn back."""
        token = self._tokens.pop(request, None)
        if token is not None:
            self.hold_answer(slot_key(self.crawler, request), token)
        else:
            self.ready.give_back(request)

    def hold_answer(self, key: str, token: str) -> None:
        """The answer to the request ``token`` of site ``key``, sent with the next call."""
        delay, _floor = self.delays(key)
        self._answers[key] = (token, int(delay * 1000), time.monotonic())
        if self._flush is None or not self._flush.active():
            from twisted.internet import reactor

            self._flush = reactor.callLater(ANSWER_HOLD, self._send_answers)  # type: ignore[arg-type]

    def held_answers(self) -> tuple[list[str], list[int | str]]:
        """The keys and arguments of the answers held (``ANSWERED``'s four keys; the token,
        the delay and the answer's age in ms), taken to be sent now."""
        answers, self._answers = self._answers, {}
        now = time.monotonic()
        keys: list[str] = []
        args: list[int | str] = []
        for key, (token, delay, came) in answers.items():
            keys += [*self._pace_keys(key), self._key(key, "inflight")]
            args += [token, delay, max(0, int((now - came) * 1000))]
        return keys, args

    def _send_answers(self) -> None:
        """The answers no other call took, sent now (one round trip)."""
        keys, args = self.held_answers()
        if not keys:
            return
        with contextlib.suppress(RedisError):  # the crawl stops (said once)
            self._answers_script(keys, [KEY_LIFETIME_MS, *args])

    def _closed(self) -> None:
        """The turns of requests that never left (still in the scheduler), given back."""
        self.ready.give_back_all()
        self._send_answers()

    def _robots_keys(self, key: str) -> list[str]:
        """The site's "robots.txt read" key (holding the answer) and "being fetched" key, of
        this run of the crawl: each run reads robots.txt anew (or from the crawl state)."""
        worker = self._worker()
        run = worker.run if worker is not None else ""
        return [self._key(key, f"robots:{run}"), self._key(key, f"robots:{run}:fetching")]

    async def _robots_turn(self, key: str) -> None:
        keys = self._robots_keys(key)
        while not self._robots_gate(keys, [self.worker_id, ROBOTS_FETCH_LEASE_MS]):
            await sleep(ROBOTS_POLL)

    async def robots_of_others(self, request: Request) -> Response | None:
        """The robots.txt of the site of ``request`` as another worker read it, or None when
        this worker is to fetch it (the others wait for its answer meanwhile)."""
        site = slot_key(self.crawler, request)
        keys = self._robots_keys(site)
        while True:
            try:
                found = self._robots_shared(keys, [self.worker_id, ROBOTS_FETCH_LEASE_MS])
            except RedisError:
                return None  # the crawl stops (said once); Scrapy's download is refused
            if int(found[0]) == 0:
                return None
            if int(found[0]) == 1:
                self.ready.robots_known.add(urlparse_cached(request).netloc)
                self.inc(Stat.ROBOTS_SHARED)
                return shared_answer(request, found[1])
            await sleep(ROBOTS_POLL)

    def robots_read(self, response: Response) -> None:
        """A robots.txt answer this worker has (fetched, or kept from an earlier run): its
        Crawl-delay, as the robots middleware applies it (``ROBOTSTXT_CRAWL_DELAY_*``), and
        the answer itself, for the other workers."""
        if response.request is None:
            return
        key = slot_key(self.crawler, response.request)
        self.ready.robots_known.add(urlparse_cached(response.request).netloc)
        floor = self.min_delay
        if response.status < 400 and self.robots.obey_crawl_delay:
            parser = Protego.parse(response.body.decode("utf-8", "replace"))
            delay = parser.crawl_delay(self.user_agent)
            if delay:
                floor = max(floor, min(float(delay), self.robots.max_crawl_delay))
        keys = [self._key(key, "floor"), self._robots_keys(key)[0]]
        answer = b"%d\n" % response.status + response.body
        with contextlib.suppress(RedisError):  # the crawl stops (said once)
            self._robots_read(keys, [int(floor * 1000), KEY_LIFETIME_MS, answer])

    def _key(self, site: str, name: str) -> str:
        return f"{self.prefix}:{site}:{name}"

    def _reserve_slot(self, key: str, token: str) -> tuple[float, int, int | None]:
        """How long to wait for the site's next reserved time (s), and that time (ms, Redis's
        clock: the reservation's place in the queue); when no wait is due, the request is
        dispatched in the same call (``token``): what the dispatch answered, else None."""
        delay, floor = self.delays(key)
        local = int(self.local_wait(key) * 1000)
        args: list[int | str] = [int(delay * 1000), int(floor * 1000), KEY_LIFETIME_MS, local]
        args += [self.inflight_lease_ms, IN_FLIGHT_POLL_MS, token]
        answer_keys, answer_args = self.held_answers()
        found = self._reserve_dispatch(self.dispatch_keys(key) + answer_keys, args + answer_args)
        answer = int(found[2]) if len(found) > 2 else None
        return int(found[0]) / 1000, int(found[1]), answer

    def local_wait(self, key: str) -> float:
        """How long this worker's own download slot would still hold a request (its delay
        may have grown since the last reservation: AutoThrottle, a local Retry-After
        pause). The reservation starts no earlier, so no time reserved is lost there."""
        slot = live_slot(self.crawler, key)
        if slot is None:
            return 0.0
        return max(0.0, slot.lastseen + slot.download_delay() - time.monotonic())

    def delays(self, key: str) -> tuple[float, float]:
        """(this worker's delay for the site, its robots.txt floor)."""
        configured = slot_settings(self.crawler, key)
        floor = max(self.min_delay, float(configured.get(FLOOR_KEY) or 0.0))
        slot = live_slot(self.crawler, key)
        delay = max(floor, float(configured.get("delay") or 0.0), slot.delay if slot else 0.0)
        return delay, floor

    def process_response(self, request: Request, response: Response) -> Response:
        self._answered(request)
        self._release(request)
        worker = self._worker()
        if worker is not None:
            worker.left_downloader(request)
        return response

    def process_exception(self, request: Request, exception: BaseException) -> None:
        self._answered(request)
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
        self.inc(Stat.SHARED_RETRY_AFTER_PAUSES)
        logger.info("Paused %s for every worker: %.1fs", key, float(pause))

    def inc(self, key: str) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(key)


async def sleep(seconds: float) -> None:
    from twisted.internet import reactor

    await maybe_deferred_to_future(task.deferLater(reactor, seconds, lambda: None))


def shared_answer(request: Request, answer: bytes) -> Response:
    """The robots.txt answer another worker kept in Redis (``<status>\n<body>``)."""
    from scrapy.http import TextResponse
    from scrapy_maintext.politeness.robots_kept import ROBOTS_FROM_WORKERS, copy_request

    status, _, body = answer.partition(b"\n")
    asked = copy_request(request, ROBOTS_FROM_WORKERS)
    return TextResponse(
        url=asked.url,
        status=int(status) if status.isdigit() else 200,
        body=body,
        encoding="utf-8",
        request=asked,
    )


def is_robots_txt(request: Request) -> bool:
    return urlparse_cached(request).path == "/robots.txt"
