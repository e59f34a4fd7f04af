"""Resuming a discovery crawl (JOBDIR): the old queue goes, the spider re-plans.

Scrapy writes a JOBDIR queue's bookkeeping only at a clean shutdown; after a SIGKILL the
queue files hold the killed run's requests under a fresh, empty index, so the resumed run
pops old requests in place of its own. A discovery spider does not need the old queue at
all: it re-plans every page its page journal (``scrapy_maintext.state.page_journal``) does
not list as done. This middleware clears the queue before the scheduler opens it and drops
any request of an earlier run that still arrives. Other spiders (no ``run_id``) are left
alone.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy_maintext.logformatter import PROGRESS
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import EarlierRun

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Request

logger = logging.getLogger(__name__)

#: The scheduler's disk queue directory inside JOBDIR (scrapy.core.scheduler).
QUEUE_DIR = "requests.queue"


class ResumeMiddleware:
    """Downloader middleware: a discovery crawl resumes from its own plan, not the queue."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        jobdir = crawler.settings.get("JOBDIR")
        # Built with the engine, after the spider and before the scheduler opens its queue.
        if jobdir and getattr(crawler.spider, "run_id", None):
            clear_queue(Path(jobdir) / QUEUE_DIR)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        run = request.meta.get(Meta.RUN)
        current = getattr(self.crawler.spider, "run_id", None)
        if run is None or current is None or run == current:
            return
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(Stat.STALE_REQUESTS)
        logger.debug("Dropped %s: queued by an earlier run", request.url)
        raise EarlierRun("queued by an earlier run")


def clear_queue(path: Path) -> None:
    if path.is_dir():
        logger.info(
            "Resuming: the page plan is rebuilt; old queue %s cleared", path, extra=PROGRESS
        )
        shutil.rmtree(path)
