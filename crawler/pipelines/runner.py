"""Extraction off the reactor thread: a pool of worker processes (pebble), or threads."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass

from pebble import ProcessPool
from scrapy_maintext.extraction.core import extract_page
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.extraction.worker import init_worker, warm_up, worker_context
from scrapy_maintext.pipelines.config import ExtractConfig
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread

#: Workers are recycled after this many pages to bound memory growth in lxml/onnxruntime.
MAX_TASKS_PER_WORKER = 500


@dataclass(frozen=True)
class PageTask:
    """What an extraction worker gets of an item."""

    html: str | bytes
    url: str | None
    #: Known encoding of a bytes ``html`` (decoded as Scrapy's ``response.text``).
    encoding: str | None = None


class ExtractionRunner:
    """Runs :func:`extract` in worker processes (or threads when ``workers`` is 0)."""

    def __init__(self, config: ExtractConfig) -> None:
        self.timeout = config.timeout
        self.options = config.options
        self.pool: ProcessPool | None = None
        if config.workers > 0:
            self.pool = ProcessPool(
                max_workers=config.workers,
                max_tasks=MAX_TASKS_PER_WORKER,
                context=worker_context(),
                initializer=init_worker,
                initargs=(config.options,),
            )

    def start(self) -> Deferred:
        """Start the workers now (each loads the model), not with the first page; fires
        with a :class:`WorkerStatus`."""
        if self.pool is None:
            return deferToThread(warm_up, self.options)
        return self._settled(self.pool.schedule(warm_up, args=(self.options,)))

    def submit(self, page: PageTask, options: ExtractOptions, signatures: bool) -> Deferred:
        """Fires with a :class:`PageResult` (with block signatures when asked for)."""
        args = (page.html, page.url, options, signatures, page.encoding)
        if self.pool is None:
            return deferToThread(extract_page, *args)
        return self._settled(self.pool.schedule(extract_page, args=args, timeout=self.timeout))

    @staticmethod
    def _settled(future: Future) -> Deferred:
        """A Deferred fired on the reactor thread with the future's outcome."""
        from twisted.internet import reactor

        deferred: Deferred = Deferred()
        future.add_done_callback(lambda f: reactor.callFromThread(_settle, deferred, f))
        return deferred

    def close(self) -> None:
        if self.pool is not None:
            self.pool.stop()
            self.pool.join()


def _settle(deferred: Deferred, future: Future) -> None:
    error = future.exception()
    if error is None:
        deferred.callback(future.result())
    else:
        deferred.errback(error)
