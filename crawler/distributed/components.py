"""What ``REDIS_URL`` switches on (called by the add-on; names only, so that a crawl without
Redis never imports scrapy-redis)."""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def apply_distributed(settings: BaseSettings) -> None:
    """With ``REDIS_URL``, this process is one worker of a shared crawl."""
    if not settings.get("REDIS_URL"):
        return
    from scrapy_maintext.addon import merge_components

    settings.set("SCHEDULER", SCHEDULER, priority=PRIORITY)
    settings.set("EXTRACT_DEDUP_STORE", DEDUP_STORE, priority=PRIORITY)
    merge_components(settings, "EXTENSIONS", EXTENSIONS)
    merge_components(settings, "SPIDER_MIDDLEWARES", SPIDER_MIDDLEWARES)
    merge_components(settings, "DOWNLOADER_MIDDLEWARES", DOWNLOADER_MIDDLEWARES)
