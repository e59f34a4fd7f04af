"""Test-only extension: writes the crawl's stats as JSON when the spider closes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler


class StatsDump:
    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.path = Path(crawler.settings["TEST_STATS_FILE"])
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StatsDump:
        return cls(crawler)

    def spider_closed(self, spider: Any, reason: str) -> None:
        assert self.crawler.stats is not None
        stats = self.crawler.stats.get_stats()
        plain = {k: v for k, v in stats.items() if isinstance(v, int | float | str)}
        self.path.write_text(json.dumps(plain, indent=1, sort_keys=True))
