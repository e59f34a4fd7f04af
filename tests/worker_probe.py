"""Run in an extraction worker process by ``tests/test_pipeline_workers.py``: what it holds."""

from __future__ import annotations

import sys


def loaded() -> dict[str, bool]:
    from scrapy_maintext.neural import NeuralExtractor

    return {
        "model": bool(NeuralExtractor._cache),
        "scrapy": "scrapy" in sys.modules,
        "twisted": "twisted" in sys.modules,
    }
