"""What ``REDIS_URL`` switches on (called by the add-on; names only, so that a crawl without
Redis never imports scrapy-redis), and the one-line error when scrapy-redis is missing."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

PRIORITY = "addon"
SCHEDULER = "scrapy_maintext.distributed.scheduler.DistributedScheduler"
EXTENSIONS = {"scrapy_maintext.distributed.worker.DistributedWorker": 0}
#: Outermost spider middleware: it sees the output every other one let through.
SPIDER_MIDDLEWARES = {"scrapy_maintext.distributed.spidermw.DistributedSpiderMiddleware": 10}
#: Last before the downloader: the reserved time is spent right before sending.
DOWNLOADER_MIDDLEWARES = {"scrapy_maintext.politeness.shared.SharedPolitenessMiddleware": 950}
#: Near-duplicate fingerprints shared by every worker (see ``EXTRACT_DEDUP_STORE``).
DEDUP_STORE = "scrapy_maintext.distributed.fingerprints.RedisFingerprints"
#: The packages a distributed crawl imports, and what installs them.
DEPENDENCIES: Final = ("scrapy_redis", "redis")
INSTALL_EXTRA: Final = 'pip install "scrapy-maintext[distributed]"'


class DistributedUnavailable(ImportError):
    """``REDIS_URL`` is set but scrapy-redis or redis cannot be imported."""


def missing_dependency() -> str | None:
    """Why this Python cannot run a distributed crawl (one line naming the install
    command), or None when scrapy-redis and redis import."""
    for name in DEPENDENCIES:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            return f"REDIS_URL needs scrapy-redis and redis ({exc}): {INSTALL_EXTRA}"
    return None


def distributed_problem(settings: BaseSettings, spider: str = "") -> str | None:
    """Why this crawl cannot use its ``REDIS_URL`` (scrapy-redis missing, a malformed URL,
    a Redis that does not answer; with the ``spider``'s name, a shared run of another crawl
    state under its prefix), in one line; None when it can, or none is set."""
    if not setting(settings, "REDIS_URL"):
        return None
    missing = missing_dependency()
    if missing is not None:
        return missing
    from scrapy_maintext.distributed.connection import redis_problem, run_problem

    return redis_problem(settings) or (run_problem(settings, spider) if spider else None)


def apply_distributed(settings: BaseSettings) -> None:
    """With ``REDIS_URL``, this process is one worker of a shared crawl.

    Without scrapy-redis, :class:`DistributedUnavailable` says what to install before
    anything loads the scheduler (the crawl command turns it into one line, exit status 2).
    """
    if not setting(settings, "REDIS_URL"):
        return
    missing = missing_dependency()
    if missing is not None:
        raise DistributedUnavailable(missing)
    from scrapy_maintext.addon import merge_components

    settings.set("SCHEDULER", SCHEDULER, priority=PRIORITY)
    settings.set("EXTRACT_DEDUP_STORE", DEDUP_STORE, priority=PRIORITY)
    merge_components(settings, "EXTENSIONS", EXTENSIONS)
    merge_components(settings, "SPIDER_MIDDLEWARES", SPIDER_MIDDLEWARES)
    merge_components(settings, "DOWNLOADER_MIDDLEWARES", DOWNLOADER_MIDDLEWARES)
