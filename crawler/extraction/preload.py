"""Imported by the extraction workers' fork server (``worker.FORKSERVER_PRELOAD``) only.

Everything a worker needs, onnxruntime included, imported once before the workers are
forked, dateparser's locale data compiled (``metadata.warm_date_parser``) and the language
model loaded (``language.identifier``): every
worker, also each one that replaces a recycled worker, starts with it. The fork server
ignores an ImportError of a preload but would die of any other error, so a failing neural
module is left for the workers' warm-up to report, and a failing warm-up is left to the
pages.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from types import TracebackType

import scrapy_maintext.extraction.worker
from scrapy_maintext.extraction.language import identifier
from scrapy_maintext.extraction.metadata import warm_date_parser

with contextlib.suppress(Exception):
    import scrapy_maintext.neural  # noqa: F401

with contextlib.suppress(Exception):
    warm_date_parser()

# The language model (~0.7 s to load) once, in the fork server, rather than in every worker.
with contextlib.suppress(Exception):
    identifier()

_default_hook = sys.excepthook
#: The module whose ``_main`` a new worker runs to read its start-up data.
SPAWN_MAIN = os.path.join("multiprocessing", "spawn.py")


def _quiet_when_the_crawl_left(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    """The crawl process left in the middle of a request to the fork server (it is
    stopping, or was killed): the fork server, or the worker it was starting, ends without
    a traceback. A worker that cannot read its start-up data (the pool's semaphore, already
    removed by a crawl that closed its pool) is the same case; a pool that breaks while the
    crawl runs is said by the crawl itself (``pipelines.runner``)."""
    if issubclass(kind, (EOFError, ConnectionError)):
        return
    if issubclass(kind, OSError) and _starting_a_worker(tb):
        return
    _default_hook(kind, value, tb)


def _starting_a_worker(tb: TracebackType | None) -> bool:
    """Whether the error arose while a new worker read what its pool sent it."""
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "_main" and code.co_filename.endswith(SPAWN_MAIN):
            return True
        tb = tb.tb_next
    return False


sys.excepthook = _quiet_when_the_crawl_left

# What the fork server holds now (modules, the compiled date data) stays out of the
# collector's passes in every worker it forks, so those passes do not write to, and copy,
# the pages the workers share with it.
gc.collect()
gc.freeze()
