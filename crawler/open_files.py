"""Open files budgeted: a broad crawl never runs out of file descriptors.

Every site of a crawl keeps its connection open between requests (keep-alive) and Twisted
keeps an idle connection for minutes: a crawl of 1,000 sites held 1,000 sockets, and at the
usual limit of 1,024 open files the extraction pool could not start a worker any more. Here
the soft limit is raised to the hard one when the crawl starts, and the idle connections the
download handler keeps are bounded by what the limit leaves once the crawl's own files (log,
outputs, state, archive, the extraction workers' pipes) and ``CONCURRENT_REQUESTS``
connections in flight are counted (``KEEPALIVE_MAX_IDLE`` at most). A limit that leaves no
room for the requests in flight is said in one line before the crawl starts
(:func:`limit_problem`).

Scrapy-free but for :class:`OpenFiles`, the extension that logs the budget and records the
most files the crawl held (``files/open_max``).
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy_maintext.vocabulary.names import Stat
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

if sys.platform != "win32":  # Windows has no such limit
    import resource

#: Files the crawl process holds besides its connections: Python's and Twisted's own (about
#: 30), the log, the outputs, JOBDIR, CRAWL_STATE, the WARC being written, the workers' fork
#: server, with room to spare.
BASE_RESERVE = 96
#: The crawl process's files per extraction worker (its pipes and process handle, and those
#: of the worker replacing it while it exits).
PER_WORKER = 4
#: How often the files held are counted for ``files/open_max`` (seconds).
SAMPLE_INTERVAL = 2.0
#: Where Linux lists a process's open files.
FD_FOLDER = "/proc/self/fd"


def raise_soft_limit() -> tuple[int, int]:
    """Raise this process's soft limit of open files to its hard limit; (soft, hard) after.

    An infinite hard limit raises the soft one to the kernel's ceiling (``nr_open``); a
    limit that cannot be raised is left as it is; (-1, -1) on Windows, which has none.
    """
    if sys.platform == "win32":
        return -1, -1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else _kernel_ceiling()
    if target is not None and (soft == resource.RLIM_INFINITY or soft >= target):
        return soft, hard
    if target is not None:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft, hard
        return target, hard
    return soft, hard


def _kernel_ceiling() -> int | None:
    try:
        with open("/proc/sys/fs/nr_open", encoding="ascii") as file:
            return int(file.read().strip())
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class FileBudget:
    """How the open-file limit is shared: the crawl's own files, requests in flight, idle
    keep-alive connections."""

    #: The soft limit (after raising it); None when there is none.
    limit: int | None
    #: Files the crawl keeps for itself (:data:`BASE_RESERVE`, the extraction workers).
    reserved: int
    #: Connections in flight at most (``CONCURRENT_REQUESTS``).
    in_flight: int
    #: Idle keep-alive connections kept at most, all sites together.
    idle: int

    @classmethod
    def from_settings(cls, settings: BaseSettings, limit: int | None) -> FileBudget:
        from scrapy_maintext.pipelines.config import extract_workers

        workers = extract_workers(settings) if setting(settings, "EXTRACT_ENABLED") else 0
        reserved = BASE_RESERVE + PER_WORKER * workers
        in_flight = settings.getint("CONCURRENT_REQUESTS")
        wanted = max(setting(settings, "KEEPALIVE_MAX_IDLE"), 0)
        if limit is None:
            return cls(None, reserved, in_flight, wanted)
        return cls(limit, reserved, in_flight, max(min(wanted, limit - reserved - in_flight), 0))

    @property
    def needed(self) -> int:
        """The least limit the crawl runs with (no idle connection kept)."""
        return self.reserved + self.in_flight

    def problem(self) -> str | None:
        """Why the limit is too low for this crawl, in one line; None when it is not."""
        if self.limit is None or self.limit >= self.needed:
            return None
        return (
            f"the open-file limit is {self.limit} (ulimit -n), too low for "
            f"CONCURRENT_REQUESTS={self.in_flight} with the crawl's own files "
            f"({self.reserved}): raise it to at least {self.needed} (ulimit -n "
            f"{self.needed}) or lower CONCURRENT_REQUESTS"
        )


def soft_limit() -> int | None:
    """This process's soft limit of open files (None: unlimited)."""
    if sys.platform == "win32":
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def crawl_budget(settings: BaseSettings) -> FileBudget:
    """Raise the soft limit to the hard one; the budget of a crawl with ``settings``."""
    raise_soft_limit()
    return FileBudget.from_settings(settings, soft_limit())


def limit_problem(settings: BaseSettings) -> str | None:
    """The one line that says the open-file limit is too low for a crawl, or None (raises
    the soft limit first)."""
    return crawl_budget(settings).problem()


def open_count() -> int | None:
    """Files this process holds now (Linux; None elsewhere)."""
    try:
        return len(os.listdir(FD_FOLDER))
    except OSError:
        return None


class OpenFiles:
    """Extension: the soft limit raised at start, the budget logged once, the most files
    held recorded as ``files/open_max``, and a warning when the limit is too low."""

    def __init__(self, crawler: Crawler) -> None:
        from scrapy import signals
        from twisted.internet.task import LoopingCall

        self.stats = crawler.stats
        self.budget = crawl_budget(crawler.settings)
        self.most = 0
        self.loop = LoopingCall(self.sample)
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OpenFiles:
        return cls(crawler)

    def engine_started(self) -> None:
        budget = self.budget
        problem = budget.problem()
        if problem is not None:
            logger.warning("Open files: %s", problem)
        else:
            logger.info(
                "Open files: limit %s, %d for the crawl, %d requests in flight, up to %d "
                "idle keep-alive connections",
                budget.limit or "none",
                budget.reserved,
                budget.in_flight,
                budget.idle,
            )
        if open_count() is not None:
            self.loop.start(SAMPLE_INTERVAL, now=True)

    def sample(self) -> None:
        count = open_count()
        if count is not None and count > self.most:
            self.most = count
            if self.stats is not None:
                self.stats.set_value(Stat.FILES_OPEN_MAX, count)

    def spider_closed(self) -> None:
        if self.loop.running:
            self.sample()
            self.loop.stop()
