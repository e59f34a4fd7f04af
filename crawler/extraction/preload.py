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
import sys
from types import TracebackType

import scrapy_maintext.extraction.worker
from scrapy_maintext.extraction.worker import left_behind
from scrapy_maintext.fields.language import identifier
from scrapy_maintext.fields.metadata import warm_date_parser

with contextlib.suppress(Exception):
    import scrapy_maintext.neural  # noqa: F401

with contextlib.suppress(Exception):
    warm_date_parser()

# The language model (~0.7 s to load) once, in the fork server, rather than in every worker.
with contextlib.suppress(Exception):
    identifier()

_default_hook = sys.excepthook


def _quiet_when_the_crawl_left(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    """The fork server, or a worker it is starting, ends without a traceback when the crawl
    left in the middle of a request (``worker.left_behind``)."""
    if not left_behind(kind, tb):
        _default_hook(kind, value, tb)


sys.excepthook = _quiet_when_the_crawl_left

# What the fork server holds now (modules, the compiled date data) stays out of the
# collector's passes in every worker it forks, so those passes do not write to, and copy,
# the pages the workers share with it.
gc.collect()
gc.freeze()
