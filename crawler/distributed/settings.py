"""``DISTRIBUTED_*`` settings of a shared crawl (active when ``REDIS_URL`` is set)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy_maintext.vocabulary.settings import default_of, setting

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: A worker whose heartbeat is older than this is dead: its leased requests go back to the
#: queue and its discovery claims are free. Far above any reactor stall of a healthy worker.
DEFAULT_WORKER_TIMEOUT: float = default_of("DISTRIBUTED_WORKER_TIMEOUT")
#: How often a worker refreshes its heartbeat, looks for dead peers and for new requests.
DEFAULT_POLL_INTERVAL: float = default_of("DISTRIBUTED_POLL_INTERVAL")
#: Requests of one site a worker holds at once: one being sent, one waiting its turn. More
#: would only wait for the site's delay while other workers could not take them.
DEFAULT_SITE_PREFETCH: int = default_of("DISTRIBUTED_SITE_PREFETCH")
#: Prefix of the shared crawl's Redis keys (``%(spider)s``: the spider's name).
DEFAULT_KEY_PREFIX: str = default_of("DISTRIBUTED_KEY_PREFIX")


@dataclass(frozen=True)
class DistributedSettings:
    """How this worker joins the shared crawl."""

    redis_url: str
    #: Prefix of every key of this crawl; ``%(spider)s`` is the spider's name.
    key_prefix: str
    #: Prefix of the per-site politeness keys, shared by every crawl on this Redis server.
    politeness_prefix: str
    worker_timeout: float
    poll_interval: float
    site_prefetch: int
    #: ``CRAWL_STATE`` (a recurring crawl): its run is its own, under :meth:`prefix`.
    crawl_state: str = ""

    def prefix(self, spider: str) -> str:
        """The prefix of this crawl's run keys: ``DISTRIBUTED_KEY_PREFIX`` with the
        spider's name, and for a recurring crawl ``:state:NAME`` after it, so that two
        crawls of two crawl states never share a run, whatever the prefix."""
        prefix = self.key_prefix % {"spider": spider}
        return f"{prefix}:state:{self.crawl_state}" if self.crawl_state else prefix

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> DistributedSettings:
        timeout = setting(settings, "DISTRIBUTED_WORKER_TIMEOUT")
        return cls(
            redis_url=setting(settings, "REDIS_URL"),
            key_prefix=setting(settings, "DISTRIBUTED_KEY_PREFIX"),
            politeness_prefix=(setting(settings, "DISTRIBUTED_POLITENESS_PREFIX")),
            worker_timeout=timeout,
            poll_interval=min(setting(settings, "DISTRIBUTED_POLL_INTERVAL"), timeout / 3),
            site_prefetch=max(1, setting(settings, "DISTRIBUTED_SITE_PREFETCH")),
            crawl_state=setting(settings, "CRAWL_STATE"),
        )
