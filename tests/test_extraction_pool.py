"""The extraction pool survives its workers: a worker killed under a page, a pool broken by
a worker killed while idle (pebble then gives up the whole pool). Real workers, really
killed; the runner's news reach the test without a reactor (``call_in_reactor``)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest
from scrapy_maintext.extraction import ExtractOptions
from scrapy_maintext.extraction.core import PageResult
from scrapy_maintext.pipelines.config import ExtractConfig
from scrapy_maintext.pipelines.runner import ExtractionRunner, PageTask
from scrapy_maintext.vocabulary.names import Stat

from tests.slow_page import slow_page

WAIT = 120
OPTIONS = ExtractOptions(engine="trafilatura")
PAGE = PageTask(
    "<html><body><article><h1>A page</h1><p>" + "A sentence of the page. " * 30 + "</p>"
    "</article></body></html>",
    "http://127.0.0.1/page.html",
)


class Stats(Counter[str]):
    def inc_value(self, key: str, count: int = 1) -> None:
        self[key] += count


def _now(function: Callable[..., Any], *args: Any) -> None:
    function(*args)


@pytest.fixture
def runner() -> Iterator[ExtractionRunner]:
    config = ExtractConfig.with_defaults(workers=1, options=OPTIONS, timeout=WAIT)
    runner = ExtractionRunner(config, Stats(), call_in_reactor=_now)
    yield runner
    runner.close()


def extract(runner: ExtractionRunner, page: PageTask) -> Callable[[], PageResult]:
    """Submit ``page``; returns a function that waits for its result."""
    done = threading.Event()
    outcome: list[Any] = []

    def settle(value: Any) -> None:
        outcome.append(value)
        done.set()

    runner.submit(page, OPTIONS, signatures=False).addBoth(settle)

    def result() -> PageResult:
        assert done.wait(WAIT), "the page never came back"
        value = outcome[0]
        if not isinstance(value, PageResult):
            value.raiseException()
        return value

    return result


def workers() -> list[psutil.Process]:
    """This process's extraction workers (children of its fork server)."""
    me = os.getpid()
    children = psutil.Process(me).children(recursive=True)
    return [p for p in children if p.ppid() != me and p.is_running()]


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.mark.slow  # the first test to start a fork server pays its imports (seconds)
def test_a_page_whose_worker_is_killed_goes_to_another(runner: ExtractionRunner) -> None:
    # A page of a fraction of a second: killed while its worker extracts it.
    html = slow_page()
    long_page = PageTask(html[: len(html) // 8] + "</body></html>", "http://127.0.0.1/long.html")
    first = extract(runner, long_page)
    queued = extract(runner, PAGE)
    wait_for(lambda: runner.busy > 0, "the page never started")
    (worker,) = workers()
    worker.send_signal(signal.SIGKILL)
    assert first().doc.text  # extracted by the worker that replaced it
    assert queued().doc.text
    assert runner.stats[Stat.EXTRACT_WORKER_DIED] == 1
    assert runner.stats[Stat.EXTRACT_RETRIED] == 1
    assert runner.stats[Stat.EXTRACT_POOL_REPLACED] == 0


@pytest.mark.slow  # as above, when it runs alone
def test_a_broken_pool_is_replaced_and_its_pages_extracted(runner: ExtractionRunner) -> None:
    assert extract(runner, PAGE)().doc.text
    old = runner.pool
    assert old is not None
    # A worker dying while no page runs: pebble takes the whole pool for broken, and fails
    # the pages it holds (given to it before it noticed, within its 0.1 s check).
    (worker,) = workers()
    worker.send_signal(signal.SIGKILL)
    pages = [extract(runner, PAGE) for _ in range(3)]
    wait_for(lambda: not old.active, "pebble did not give up the pool")
    assert all(page().doc.text for page in pages)
    assert runner.pool is not old
    assert runner.stats[Stat.EXTRACT_POOL_REPLACED] == 1
    # Every page it held went to the new pool.
    assert runner.stats[Stat.EXTRACT_RETRIED] == 3
    # And pages after it, to the new pool only.
    assert extract(runner, PAGE)().doc.text
    assert runner.stats[Stat.EXTRACT_POOL_REPLACED] == 1


class _LostSemaphore:
    """Unpickles as a worker's pool semaphore does once the crawl removed it."""

    def __reduce__(self) -> tuple[object, ...]:
        return (_LostSemaphore, (), {"name": "gone"})

    def __setstate__(self, state: object) -> None:
        raise FileNotFoundError(2, "No such file or directory")


def test_a_worker_started_for_a_pool_the_crawl_closed_is_left_behind_quietly() -> None:
    # The fork server's excepthook (extraction/preload.py, which freezes the heap when
    # imported: never in the test process) stays quiet exactly when this says so.
    import pickle
    import sys
    from multiprocessing import spawn

    from scrapy_maintext.extraction.worker import left_behind

    read, write = os.pipe()
    os.write(write, pickle.dumps(_LostSemaphore()))
    os.close(write)
    try:
        spawn._main(read, None)  # type: ignore[attr-defined]
    except OSError:
        kind, _, tb = sys.exc_info()
        assert kind is not None and left_behind(kind, tb)
    # The same error anywhere else is shown as ever.
    try:
        pickle.loads(pickle.dumps(_LostSemaphore()))
    except OSError:
        kind, _, tb = sys.exc_info()
        assert kind is not None and not left_behind(kind, tb)
    assert left_behind(EOFError, None) and not left_behind(ValueError, None)
