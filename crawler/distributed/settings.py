"""``DISTRIBUTED_*`` settings of a shared crawl (active when ``REDIS_URL`` is set)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: A worker whose heartbeat is older than this is dead: its leased requests go back to the
#: queue and its discovery claims are free. Far above any reactor stall of a healthy worker.
DEFAULT_WORKER_TIMEOUT = 60.0
#: How often a worker refreshes its heartbeat, looks for dead peers and for new requests.
DEFAULT_POLL_INTERVAL = 1.0
#: Requests of one site a worker holds at once: one being sent, one waiting its turn. More
#: would only wait for the site's delay while other workers could not take them.
DEFAULT_SITE_PREFETCH = 2
#: Prefix of the shared crawl's Redis keys (``%(spider)s``: the spider's name).
DEFAULT_KEY_PREFIX = "maintext:%(spider)s"


@dataclass(frozen=True)
class DistributedSettings:
    """How this worker joins the shared crawl."""

    redis_url: str
    #: Prefix of every key of this crawl; ``%(spider)s`` is the spider's name.
    key_prefix: str = DEFAULT_KEY_PREFIX
    #: Prefix of the per-site politeness keys, shared by every crawl on this Redis server.
    politeness_prefix: str = "maintext:politeness"
    worker_timeout: float = DEFAULT_WORKER_TIMEOUT
    poll_interval: float = DEFAULT_POLL_INTERVAL
    site_prefetch: int = DEFAULT_SITE_PREFETCH

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> DistributedSettings:
        timeout = settings.getfloat("DISTRIBUTED_WORKER_TIMEOUT", DEFAULT_WORKER_TIMEOUT)
        return cls(
            redis_url=settings.get("REDIS_URL") or "",
            key_prefix=settings.get("DISTRIBUTED_KEY_PREFIX") or DEFAULT_KEY_PREFIX,
            politeness_prefix=(
                settings.get("DISTRIBUTED_POLITENESS_PREFIX") or "maintext:politeness"
            ),
            worker_timeout=timeout,
            poll_interval=min(
                settings.getfloat("DISTRIBUTED_POLL_INTERVAL", DEFAULT_POLL_INTERVAL), timeout / 3
            ),
            site_prefetch=max(
                1, settings.getint("DISTRIBUTED_SITE_PREFETCH", DEFAULT_SITE_PREFETCH)
            ),
        )
