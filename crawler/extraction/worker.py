"""What the crawl's extraction worker processes import, load and report.

Scrapy-free, so a worker imports the extraction only, never Scrapy or Twisted. The crawl
starts its pool when the spider opens: :func:`init_worker` builds the model's session in
every worker before the first page arrives (and again in each worker that replaces a
recycled one), and :func:`warm_up`, the pool's first task, tells the crawl process whether
the model loaded, so that the crawl log says so once while the crawl process itself never
loads a model it does not run.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import multiprocessing
import os
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.context import BaseContext
from types import TracebackType
from typing import Any

from scrapy_maintext.extraction.core import extract_page
from scrapy_maintext.extraction.engines import NEURAL_UNAVAILABLE, neural_load
from scrapy_maintext.extraction.options import ExtractOptions

#: The package's root logger: workers have no logging set up, so Python's last-resort
#: handler would print their warnings to stderr; the crawl process logs what matters, once.
PACKAGE_LOGGER = "scrapy_maintext"
#: "forkserver" avoids forking the multi-threaded Scrapy process itself.
START_METHOD = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
#: Imported once by the fork server, so that every worker it forks (at the start and after
#: each recycling) starts with lxml, trafilatura and onnxruntime already imported (the crawl
#: process itself never imports onnxruntime). Not ``__main__`` (multiprocessing's default,
#: a no-op on Python 3.11), which for ``scrapy crawl`` would be Scrapy's command line, and
#: Scrapy with it.
FORKSERVER_PRELOAD = ["scrapy_maintext.extraction.preload"]


@dataclass(frozen=True)
class WorkerStatus:
    """What a worker reports once started."""

    #: Why the neural model could not be loaded (the engine then degrades to trafilatura),
    #: or None when it loaded or the engine does not use it.
    neural_error: str | None = None


def worker_context() -> BaseContext:
    """The multiprocessing context of the extraction pool.

    The preload takes effect only if this process has not started its fork server yet (if
    something else started it first, workers import the extraction themselves); it replaces
    a preload list set before it (multiprocessing keeps one per process).
    """
    context = multiprocessing.get_context(START_METHOD)
    if START_METHOD == "forkserver":
        context.set_forkserver_preload(FORKSERVER_PRELOAD)
    return context


#: Extracted once by every worker as it starts: the first real page then finds the lazy
#: imports and caches of extraction and metadata ready, and is not at risk of the timeout.
WARM_UP_PAGE = (
    "<html><head><title>Warm-up</title></head><body><article><h1>Warm-up</h1>"
    "<p>A short page that every extraction worker reads once before its first page.</p>"
    "</article></body></html>"
)


def init_worker(options: ExtractOptions) -> None:
    """Pool initializer: quiet logging, load the model the options' engine needs, extract
    one small page."""
    logging.getLogger(PACKAGE_LOGGER).addHandler(logging.NullHandler())
    _load_model(options)
    # An initializer that raises kills the worker, and the pool would start it again and
    # again: whatever fails here fails again on the pages, where it is counted.
    with contextlib.suppress(Exception):
        extract_page(WARM_UP_PAGE, "https://warm-up.invalid/", options)
    # What the worker loaded (the model's session, the caches the warm-up page filled)
    # leaves the collector's full passes, as the fork server's preloads do: each such pass
    # walked all of it (the collector's time per page more than halves:
    # ``python -m benchmarks.page_walk --gc``, docs/benchmarks.md).
    gc.collect()
    gc.freeze()


#: Pages between two full passes of the collector while it is paused page by page.
FULL_PASS_EVERY = 100
_pages_since_full_pass = [0]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The garbage collector off while one page is extracted, then one pass over the young
    generations (and a full pass every :data:`FULL_PASS_EVERY` pages), in a process that
    does nothing but extract pages one after the other: a worker, datatrove's sandbox.

    A page's objects (a Python proxy per element, its blocks and features) live as long as
    the page: passes during the page walked them again and again and moved them into the
    older generations, which the full passes walk; after the page they are gone, and the
    pass finds only what the page left behind in cycles. Where the collector is already off
    (someone turned it off), nothing changes.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        _pages_since_full_pass[0] += 1
        if _pages_since_full_pass[0] >= FULL_PASS_EVERY:
            _pages_since_full_pass[0] = 0
            gc.collect()
        else:
            gc.collect(1)


def worker_extract_page(*args: Any) -> Any:
    """``extract_page(*args)`` in a worker process, the collector paused for the page
    (:func:`collector_paused`)."""
    with collector_paused():
        return extract_page(*args)


def warm_up(options: ExtractOptions) -> WorkerStatus:
    """The first task: its result says whether the model is there (loaded once per worker)."""
    return WorkerStatus(neural_error=_load_model(options))


def report(status: WorkerStatus, log: logging.Logger) -> None:
    """Say in this process's log what the workers found when they started (they log
    nowhere)."""
    if status.neural_error is not None:
        log.warning(NEURAL_UNAVAILABLE, status.neural_error)


def _load_model(options: ExtractOptions) -> str | None:
    if options.engine == "trafilatura":
        return None
    return neural_load(options.model).error


__all__ = [
    "WorkerStatus",
    "collector_paused",
    "extract_page",
    "init_worker",
    "report",
    "warm_up",
    "worker_context",
    "worker_extract_page",
]


#: The module whose ``_main`` a new worker runs to read its start-up data.
SPAWN_MAIN = os.path.join("multiprocessing", "spawn.py")


def left_behind(kind: type[BaseException], tb: TracebackType | None) -> bool:
    """Whether an uncaught error in the fork server or a starting worker means only that the
    crawl process left in the middle of a request (it is stopping, or was killed): its
    connection closed, or a worker cannot read its start-up data (the pool's semaphore,
    already removed by a crawl that closed its pool). A pool that breaks while the crawl
    runs is said by the crawl itself (``pipelines.runner``)."""
    if issubclass(kind, (EOFError, ConnectionError)):
        return True
    return issubclass(kind, OSError) and _starting_a_worker(tb)


def _starting_a_worker(tb: TracebackType | None) -> bool:
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "_main" and code.co_filename.endswith(SPAWN_MAIN):
            return True
        tb = tb.tb_next
    return False
