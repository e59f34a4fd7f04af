"""Run in an extraction worker process by ``tests/test_pipeline_workers.py``: what it holds."""

from __future__ import annotations

import sys


def loaded() -> dict[str, bool]:
    from scrapy_maintext.neural import NeuralExtractor

    return {
        "model": bool(NeuralExtractor._cache),
        "scrapy": "scrapy" in sys.modules,
        "twisted": "twisted" in sys.modules,
        "date_locales": date_locales_compiled() > MANY_LOCALES,
    }


#: dateparser 1.5 has 205 locales; the warm-up compiles the word regexes of each.
MANY_LOCALES = 100


def date_locales_compiled() -> int:
    """Locales whose word regexes dateparser has compiled in this process (its private,
    class-level cache: a version that moves it makes the probe say False)."""
    from dateparser.languages.dictionary import Dictionary

    cache = getattr(Dictionary, "_split_regex_cache", {})
    return sum(len(regexes) for regexes in cache.values())
