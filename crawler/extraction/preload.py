"""Imported by the extraction workers' fork server (``worker.FORKSERVER_PRELOAD``) only.

Everything a worker needs, onnxruntime included, imported once before the workers are
forked. The fork server ignores an ImportError of a preload but would die of any other
error, so a failing neural module is left for the workers' warm-up to report.
"""

from __future__ import annotations

import contextlib

import scrapy_maintext.extraction.worker

with contextlib.suppress(Exception):
    import scrapy_maintext.neural  # noqa: F401
