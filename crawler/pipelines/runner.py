"""Extraction off the reactor thread: a pool of worker processes (pebble), or threads.

The pool is replaced when it breaks, and the pages it held are extracted again by the new
one: pebble gives up a whole pool when a worker cannot be started (no file descriptor left,
no memory) or dies while no page is running, fails the pages it had taken with
``BrokenProcessPool`` and may never answer those still on their way to it. A page whose
worker died under it (killed, out of memory) goes to another worker, up to
:data:`PAGE_ATTEMPTS` times. When the crawl stops, pages not yet started are failed at once
and those being extracted get :data:`STOP_GRACE` seconds: whatever the workers do, the
pipeline is empty within seconds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from pebble import ProcessExpired, ProcessPool
from scrapy_maintext.extraction.core import extract_page
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.extraction.worker import (
    init_worker,
    warm_up,
    worker_context,
    worker_extract_page,
)
from scrapy_maintext.pipelines.config import ExtractConfig
from scrapy_maintext.vocabulary.names import Stat
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall
from twisted.internet.threads import deferToThread

logger = logging.getLogger(__name__)

#: Workers are recycled after this many pages to bound memory growth in lxml/onnxruntime.
MAX_TASKS_PER_WORKER = 500
#: Times a page is given to a worker: a page whose worker died under it twice more (a page
#: that kills its worker) is failed.
PAGE_ATTEMPTS = 3
#: Seconds a stopping crawl waits for the pages being extracted before it fails them.
STOP_GRACE = 2.0
#: Seconds between two warnings of a replaced pool (the others are logged at DEBUG).
WARN_INTERVAL = 60.0
#: How often the pool is checked for having broken with nothing to tell it by (seconds).
CHECK_INTERVAL = 1.0


@dataclass(frozen=True)
class PageTask:
    """What an extraction worker gets of an item."""

    html: str | bytes
    url: str | None
    #: Known encoding of a bytes ``html`` (decoded as Scrapy's ``response.text``).
    encoding: str | None = None


class ExtractionStopped(Exception):
    """The crawl stopped before the page was extracted (a resumed crawl extracts it)."""


@dataclass(eq=False)
class _Job:
    """A page on its way through the pool, with the Deferred its item waits on."""

    function: Callable[..., Any]
    args: tuple[Any, ...]
    #: pebble's per-task limit (None: none, for the warm-up, which loads the model).
    timeout: float | None
    deferred: Deferred = field(default_factory=Deferred)
    attempts: int = 0
    #: The pool generation it was last given to, and the future it got there.
    generation: int = -1
    future: Future | None = None


def _in_reactor(function: Callable[..., Any], *args: Any) -> None:
    from twisted.internet import reactor

    reactor.callFromThread(function, *args)


class ExtractionRunner:
    """Runs :func:`extract_page` in worker processes (or threads when ``workers`` is 0).

    ``call_in_reactor`` hands a pool thread's news to the reactor thread (Twisted's
    ``callFromThread``; a test without a running reactor may call at once).
    """

    def __init__(
        self,
        config: ExtractConfig,
        stats: Any = None,
        call_in_reactor: Callable[..., None] = _in_reactor,
    ) -> None:
        self.config = config
        self.timeout = config.timeout
        self.options = config.options
        self.stats = stats
        self.call_in_reactor = call_in_reactor
        self.generation = 0
        self.stopping = False
        self._jobs: set[_Job] = set()
        #: When a replaced pool was last logged at WARNING (one a minute at most).
        self._warned = -WARN_INTERVAL
        self._check = LoopingCall(self.check_pool)
        self.pool: ProcessPool | None = self._new_pool() if config.workers > 0 else None

    def _new_pool(self) -> ProcessPool:
        return ProcessPool(
            max_workers=self.config.workers,
            max_tasks=MAX_TASKS_PER_WORKER,
            context=worker_context(),
            initializer=init_worker,
            initargs=(self.config.options,),
        )

    def start(self) -> Deferred:
        """Start the workers now (each loads the model), not with the first page; fires
        with a :class:`WorkerStatus`."""
        if self.pool is None:
            return deferToThread(warm_up, self.options)
        self._check.start(CHECK_INTERVAL, now=False)
        return self._submit(_Job(warm_up, (self.options,), None))

    def submit(self, page: PageTask, options: ExtractOptions, signatures: bool) -> Deferred:
        """Fires with a :class:`PageResult` (with block signatures when asked for)."""
        args = (page.html, page.url, options, signatures, page.encoding)
        if self.pool is None:
            return deferToThread(extract_page, *args)
        # A worker process does nothing else: its collector is paused for each page.
        return self._submit(_Job(worker_extract_page, args, self.timeout))

    def _submit(self, job: _Job) -> Deferred:
        self._jobs.add(job)
        self._dispatch(job)
        return job.deferred

    @property
    def pending(self) -> int:
        """Pages (and the warm-up) submitted and not settled yet."""
        return len(self._jobs)

    @property
    def busy(self) -> int:
        """Pages (and the warm-up) a worker is extracting now."""
        return sum(1 for job in self._jobs if job.future is not None and job.future.running())

    def _dispatch(self, job: _Job) -> None:
        if self.stopping:
            self._fail(job, ExtractionStopped("the crawl is stopping"))
            return
        assert self.pool is not None
        job.attempts += 1
        job.generation = self.generation
        job.future = None
        try:
            future = self.pool.schedule(job.function, args=job.args, timeout=job.timeout)
        except (RuntimeError, OSError) as exc:  # pebble: the pool broke, or cannot start
            self._replace(_why(exc))
            return
        job.future = future
        future.add_done_callback(lambda f: self.call_in_reactor(self._settled, job, f))

    def _settled(self, job: _Job, future: Future) -> None:
        """A future of ``job`` is done (on the reactor thread)."""
        if job.future is not future or job.deferred.called:
            return  # given to a newer pool meanwhile, or failed by a stop
        try:
            error = future.exception()
        except CancelledError as exc:
            error = exc
        if error is None:
            self._jobs.discard(job)
            job.deferred.callback(future.result())
        elif isinstance(error, BrokenProcessPool):
            if job.generation == self.generation:
                self._replace(_why(error))  # gives every page of it again
            else:
                self._again(job, error)
        elif isinstance(error, ProcessExpired) and not self.stopping:
            self._inc(Stat.EXTRACT_WORKER_DIED)
            self._again(job, error)
        else:
            self._fail(job, error)

    def _again(self, job: _Job, error: BaseException) -> None:
        if job.deferred.called:
            return
        if job.attempts >= PAGE_ATTEMPTS:
            self._fail(job, error)
            return
        self._inc(Stat.EXTRACT_RETRIED)
        self._dispatch(job)

    def _replace(self, why: str) -> None:
        """A new pool for the broken one; every page given to the old one goes to it."""
        if self.stopping or self.pool is None:
            return
        old, self.pool = self.pool, self._new_pool()
        self.generation += 1
        stranded = [job for job in self._jobs if job.generation < self.generation]
        self._inc(Stat.EXTRACT_POOL_REPLACED)
        now = time.monotonic()
        quiet = now - self._warned < WARN_INTERVAL
        self._warned = self._warned if quiet else now
        (logger.debug if quiet else logger.warning)(
            "Extraction workers failed (%s): new workers started, %d pages given to them",
            why,
            len(stranded),
        )
        _stop_in_background(old)
        for job in stranded:
            future, job.future = job.future, None
            if future is not None:
                future.cancel()
            # Next turn: a pool that cannot start either is not retried from in here.
            self.call_in_reactor(self._again, job, BrokenProcessPool(why))

    def check_pool(self) -> None:
        """Replace a pool that broke without failing a page (pebble may not tell)."""
        if self.pool is not None and not self.stopping and not self.pool.active:
            self._replace("the pool stopped")

    def stop(self) -> Deferred:
        """The crawl is stopping: fail the pages not started at once, and those being
        extracted after :data:`STOP_GRACE` seconds; fires when none is left."""
        from twisted.internet import reactor

        clock: Any = reactor
        self.stopping = True
        for job in list(self._jobs):
            future = job.future
            if future is None or not future.running():
                self._fail(job, ExtractionStopped("the crawl is stopping"))
                if future is not None:
                    future.cancel()
        done: Deferred = Deferred()
        clock.callLater(STOP_GRACE, self._stop_running, done)
        return done

    def _stop_running(self, done: Deferred) -> None:
        for job in list(self._jobs):
            self._fail(job, ExtractionStopped("the crawl stopped while it was extracted"))
            if job.future is not None:
                job.future.cancel()  # pebble stops its worker
        done.callback(None)

    def _fail(self, job: _Job, error: BaseException) -> None:
        self._jobs.discard(job)
        if not job.deferred.called:
            job.deferred.errback(error)

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)

    def close(self) -> Deferred | None:
        """Stop the workers (killing those still busy); fires once they are gone, in a
        thread of its own, so the reactor never waits on a worker."""
        if self._check.running:
            self._check.stop()
        self.stopping = True
        for job in list(self._jobs):
            self._fail(job, ExtractionStopped("the crawl stopped"))
        if self.pool is None:
            return None
        # pebble gives a worker that ignores SIGTERM 3 s before SIGKILL: not waited for here
        # (pebble stops what is left when the process exits).
        return _stop_in_background(self.pool)


def _why(error: BaseException) -> str:
    """What broke a pool, in a few words (pebble's own error, or the OS error under it)."""
    cause = error.__cause__ or error
    return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__


def _stop_in_background(pool: ProcessPool) -> Deferred:
    """Stop ``pool`` and join its workers in a daemon thread; fires (on the reactor thread
    when it runs) once they are gone."""
    done: Deferred = Deferred()

    def stop() -> None:
        pool.stop()
        try:
            pool.join()
        except Exception as exc:  # a worker that cannot be stopped: the process ends anyway
            logger.debug("Extraction workers did not stop cleanly: %s", exc)
        _in_reactor_or_now(done.callback, None)

    threading.Thread(target=stop, name="extraction-pool-stop", daemon=True).start()
    return done


def _in_reactor_or_now(function: Callable[..., Any], *args: Any) -> None:
    from twisted.internet import reactor

    if reactor.running:
        reactor.callFromThread(function, *args)
    else:
        function(*args)
