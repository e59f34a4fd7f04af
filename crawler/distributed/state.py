"""The shared state of one distributed crawl in Redis: queues, leases, workers, discovery.

Key layout (``P`` is ``DISTRIBUTED_KEY_PREFIX`` with the spider's name filled in):

- ``P:q:<site>`` request list of one site; ``P:ring``/``P:ring:set`` sites with requests;
- ``P:seen`` fingerprints of every request ever queued (the duplicate filter);
- ``P:leases:<worker>`` requests a worker took and has not finished;
- ``P:workers``, ``P:alive:<worker>`` (expires after ``DISTRIBUTED_WORKER_TIMEOUT``);
- ``P:discovery`` site -> worker discovering it, or ``done``; ``P:run`` the crawl's run id;
- ``P:incomplete`` sites a page of which failed on some worker (a recurring crawl's
  discoverer then does not remember their sitemaps);
- ``P:finished`` the run id, once a worker saw the whole crawl finished. A recurring crawl's
  worker started later clears the run's keys (``seen``, ``discovery``, ``run``,
  ``incomplete``, ``finished``, ``lease_seq``) and begins the next run;
- ``P:crawl_state`` the ``CRAWL_STATE`` of the crawl these keys belong to (empty: none). A
  recurring crawl's ``P`` ends in ``:state:NAME``, so that two crawl states never share a
  run; a worker of another state (a prefix set so) is refused (:class:`ForeignRun`).

Calls are synchronous (redis-py), like scrapy-redis's own: each is one round trip to a
server that answers in well under a millisecond on a LAN.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy_maintext.distributed import lua
from scrapy_maintext.state.redis.keys import state_prefix

if TYPE_CHECKING:
    from redis import Redis

logger = logging.getLogger(__name__)

DONE = "done"
#: The key naming the crawl state a run belongs to.
OWNER = "crawl_state"
#: A run's keys besides ``run`` and ``finished`` (the queue and leases are empty at its end).
RUN_KEYS = ("seen", "discovery", "incomplete", "lease_seq")


@dataclass(frozen=True)
class Push:
    """A request for the shared queue (:meth:`CrawlState.push`): its bytes, its site, its
    fingerprint ('' when not filtered), whether it goes first, the lease it replaces."""

    data: bytes
    site: str
    fingerprint: str
    front: bool
    lease: str


@dataclass(frozen=True)
class Lease:
    """A request taken from the shared queue by this worker."""

    id: str
    data: bytes
    site: str


class ForeignRun(Exception):
    """The shared crawl under a prefix belongs to another crawl state: one line (exit 2)."""

    def __init__(self, prefix: str, owner: str, mine: str) -> None:
        super().__init__(foreign_run_message(prefix, owner, mine))


def foreign_run_message(prefix: str, owner: str, mine: str) -> str:
    """Why a worker of crawl state ``mine`` may not join the run of ``owner``."""
    theirs = f"crawl state {owner!r}" if owner else "a crawl without CRAWL_STATE"
    ours = f"CRAWL_STATE={mine}" if mine else "a crawl without CRAWL_STATE"
    return (
        f"the shared crawl {prefix} in Redis belongs to {theirs}; {ours} does not join it "
        "(set another DISTRIBUTED_KEY_PREFIX)"
    )


def run_owner(server: Redis, prefix: str) -> str | None:
    """The crawl state whose run ``prefix`` holds ('' for none), None when no crawl does."""
    value = server.get(f"{prefix}:{OWNER}")
    return None if value is None else text(value)


def text(value: Any) -> str:
    """A Redis reply as text (the client returns bytes)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class CrawlState:
    """One worker's handle on the shared crawl."""

    def __init__(
        self, server: Redis, prefix: str, worker_id: str, timeout: float, crawl_state: str = ""
    ) -> None:
        self.server = server
        self.prefix = prefix
        #: This worker's ``CRAWL_STATE`` ('' for none): the run it joins must be of it.
        self.crawl_state = crawl_state
        self.worker_id = worker_id
        self.timeout_ms = int(timeout * 1000)
        self._enqueue = server.register_script(lua.ENQUEUE)
        self._pop = server.register_script(lua.POP)
        self._requeue = server.register_script(lua.REQUEUE)
        self._claim = server.register_script(lua.CLAIM)
        self._start_run = server.register_script(lua.START_RUN)
        self._finish = server.register_script(lua.FINISH)
        #: Leases finished and not acknowledged yet (:meth:`ack_later`).
        self._acks: list[str] = []

    # -- keys
    def key(self, name: str) -> str:
        return f"{self.prefix}:{name}"

    def queue_key(self, site: str) -> str:
        return f"{self.prefix}:q:{site}"

    def leases_key(self, worker: str | None = None) -> str:
        return f"{self.prefix}:leases:{worker or self.worker_id}"

    def alive_key(self, worker: str | None = None) -> str:
        return f"{self.prefix}:alive:{worker or self.worker_id}"

    # -- workers
    def held_key(self) -> str:
        """This worker holds its crawl state (``maintext state --forget`` refuses)."""
        return f"{state_prefix(self.crawl_state)}:held:{self.worker_id}"

    def heartbeat(self) -> None:
        pipe = self.server.pipeline()
        pipe.sadd(self.key("workers"), self.worker_id)
        pipe.set(self.alive_key(), "1", px=self.timeout_ms)
        if self.crawl_state:
            pipe.set(self.held_key(), self.prefix, px=self.timeout_ms)
        pipe.execute()

    def leave(self) -> int:
        """Clean shutdown: leased requests go back to the queue; this worker is gone."""
        self.flush_acks()  # finished leases are not put back
        count = self._requeue_of(self.worker_id, force=True)
        self.server.delete(self.alive_key())
        if self.crawl_state:
            self.server.delete(self.held_key())
        return count

    def reap(self) -> int:
        """Requeue the leases of every worker whose heartbeat expired; how many."""
        total = 0
        for raw in self.server.smembers(self.key("workers")):
            worker = text(raw)
            if worker == self.worker_id:
                continue
            count = self._requeue_of(worker, force=False)
            if count > 0:
                logger.warning("Worker %s is gone: %d of its requests re-queued", worker, count)
            total += max(count, 0)
        return total

    def _requeue_of(self, worker: str, force: bool) -> int:
        keys = [
            self.leases_key(worker),
            self.key("ring"),
            self.key("ring:set"),
            self.key("workers"),
            self.alive_key(worker),
        ]
        return int(self._requeue(keys, [self.queue_key(""), worker, "1" if force else "0"]))

    def live_workers(self) -> list[str]:
        workers = [text(w) for w in self.server.smembers(self.key("workers"))]
        alive = self.server.mget([self.alive_key(w) for w in workers]) if workers else []
        return [w for w, a in zip(workers, alive, strict=True) if a is not None]

    # -- queue
    def push(self, data: bytes, site: str, fingerprint: str, front: bool, lease: str) -> bool:
        """Queue a request unless its fingerprint was seen; ``lease`` ends the lease it replaces."""
        return self.push_many([Push(data, site, fingerprint, front, lease)])[0]

    def push_many(self, pushes: list[Push]) -> list[bool]:
        """:meth:`push` of each, in one round trip (a pipeline; each push is one script):
        whether each was queued."""
        pipe = self.server.pipeline(transaction=False)
        seen, ring, ring_set = (self.key(k) for k in ("seen", "ring", "ring:set"))
        leases = self.leases_key()
        for push in pushes:
            keys = [seen, ring, ring_set, self.queue_key(push.site), leases]
            args: list[Any] = [push.fingerprint, push.data, push.site, "1" if push.front else "0"]
            self._enqueue(keys, [*args, push.lease], client=pipe)
        return [bool(added) for added in pipe.execute()]

    def pop(self, skip_sites: list[str]) -> Lease | None:
        """The next request of the ring (None: none but of ``skip_sites``); the leases
        finished since the last pop are acknowledged in the same call."""
        found = self.pop_many(skip_sites, 1)
        return found[0] if found else None

    def pop_many(self, skip_sites: list[str], count: int) -> list[Lease]:
        """Up to ``count`` requests of the ring, each of another site (none of
        ``skip_sites``), each leased, in one call; the leases finished since the last pop
        are acknowledged in it."""
        keys = [self.key("ring"), self.key("ring:set"), self.leases_key(), self.key("lease_seq")]
        acks = self._acks
        args: list[str | int] = [self.queue_key(""), count, len(acks), *acks, *skip_sites]
        result = self._pop(keys, args)
        self._acks = []
        if not result:
            return []
        return [
            Lease(str(result[i]), result[i + 1], text(result[i + 2]))
            for i in range(0, len(result), 3)
        ]

    def ack(self, lease: str) -> None:
        self.server.hdel(self.leases_key(), lease)

    def ack_later(self, lease: str) -> None:
        """``lease`` is finished: acknowledged with the next pop (a busy worker pops again
        at once) or :meth:`flush_acks`. A worker killed in between has its page fetched
        again by another (never lost: its line was already out)."""
        self._acks.append(lease)

    def flush_acks(self) -> None:
        """The finished leases not acknowledged yet, acknowledged now (before idling or
        leaving: other workers wait for this worker's leases before they finish)."""
        if self._acks:
            self.server.hdel(self.leases_key(), *self._acks)
            self._acks = []

    def queued(self) -> int:
        """Sites with queued requests (0 means the queue is empty)."""
        return int(self.server.llen(self.key("ring")))

    def leased_elsewhere(self) -> int:
        """Requests held by live workers other than this one."""
        others = [w for w in self.live_workers() if w != self.worker_id]
        return sum(int(self.server.hlen(self.leases_key(w))) for w in others)

    # -- crawl-wide run id and discovery claims
    def run_id(self, proposed: str) -> str:
        """The crawl's run id: the first worker's, kept for every later worker and restart."""
        return self.start_run(proposed, renew=False)[0]

    def start_run(self, proposed: str, renew: bool) -> tuple[str, bool]:
        """The run id, and whether this call began a new run: with ``renew``, a finished
        run's keys are cleared first (atomically: of workers started together, one clears).
        :class:`ForeignRun` when the run belongs to another crawl state."""
        keys = [self.key(OWNER), self.key("run"), self.key("finished")]
        keys += [self.key(k) for k in RUN_KEYS]
        args = [proposed, "1" if renew else "0", self.crawl_state]
        run, renewed = self._start_run(keys, args)
        if renewed == -1:
            raise ForeignRun(self.prefix, text(run), self.crawl_state)
        return text(run), bool(renewed)

    def run_id_now(self) -> str | None:
        value = self.server.get(self.key("run"))
        return None if value is None else text(value)

    def finish(self, run: str) -> None:
        """This worker saw run ``run`` finished (unless a next run began meanwhile)."""
        self._finish([self.key("run"), self.key("finished")], [run])

    def is_finished(self) -> bool:
        return bool(self.server.exists(self.key("finished")))

    def claim(self, site: str) -> int:
        """1: this worker discovers ``site``; 2: it takes over from a dead worker; 0: not."""
        args = [site, self.worker_id, f"{self.prefix}:alive:"]
        return int(self._claim([self.key("discovery")], args))

    def discovery_done(self, site: str) -> None:
        self.server.hset(self.key("discovery"), site, DONE)

    def release_claim(self, site: str) -> None:
        """Discovery stopped half-way (clean shutdown): a later worker may claim it."""
        owner = self.server.hget(self.key("discovery"), site)
        if owner is not None and text(owner) == self.worker_id:
            self.server.hdel(self.key("discovery"), site)

    def mark_incomplete(self, site: str) -> None:
        """A page of ``site`` did not end cleanly (``P:incomplete``)."""
        self.server.sadd(self.key("incomplete"), site)

    def incomplete(self) -> set[str]:
        return {text(site) for site in self.server.smembers(self.key("incomplete"))}

    def discovering(self) -> dict[str, str]:
        """Sites whose discovery is not done, with the worker claiming each."""
        claims = self.server.hgetall(self.key("discovery"))
        return {text(k): text(v) for k, v in claims.items() if text(v) != DONE}
