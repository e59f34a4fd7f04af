"""Near-duplicate fingerprints shared by every worker of a crawl (``EXTRACT_DEDUP_STORE``).

The same banded index as :class:`~scrapy_maintext.extraction.FingerprintIndex` (within
``max_distance`` bits, two 64-bit fingerprints agree on at least one of ``max_distance + 1``
bands), kept in Redis sets, one per band value; a Lua script looks for a near-duplicate and
adds the fingerprint in one atomic step, so of two near-duplicates extracted by two workers
at the same moment exactly one is kept. Each member is ``fingerprint url``: a page fetched
again after its worker died is not a duplicate of its own earlier copy. In a recurring crawl
(``CRAWL_STATE`` with ``REDIS_URL``) they are kept with the crawl state and span its runs:
a page is never a duplicate of its own earlier export.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError
from scrapy_maintext.distributed import lua
from scrapy_maintext.distributed.connection import Breaker, breaker_of, crawl_client
from scrapy_maintext.distributed.settings import DistributedSettings
from scrapy_maintext.extraction.fingerprint import BITS
from scrapy_maintext.state.redis_state import KEY_PREFIX
from scrapy_maintext.vocabulary.names import Stat
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from typing import Self

    from redis import Redis
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


def band_keys(prefix: str, fp: str, max_distance: int) -> list[str]:
    """The Redis sets a fingerprint belongs to (as ``FingerprintIndex`` bands it)."""
    value = int(fp, 16)
    bands = max_distance + 1
    width = -(-BITS // bands)
    mask = (1 << width) - 1
    return [f"{prefix}:{max_distance}:{i}:{value >> (i * width) & mask:x}" for i in range(bands)]


class RedisFingerprints:
    """The fingerprints of every document kept by any worker of the crawl."""

    def __init__(
        self, server: Redis, prefix: str, max_distance: int, breaker: Breaker | None = None
    ) -> None:
        self.server = server
        self.breaker = breaker or Breaker()
        self.prefix = prefix
        self.max_distance = max_distance
        self._check = server.register_script(lua.FINGERPRINT)
        #: Damaged band keys and members dropped; the crawl's stats count them too.
        self.skipped = 0
        self.stats: StatsCollector | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler, max_distance: int) -> Self:
        config = DistributedSettings.from_settings(crawler.settings)
        spider = crawler.spider
        name = spider.name if spider is not None else "crawl"
        prefix = config.prefix(name) + ":fp"
        state = setting(crawler.settings, "CRAWL_STATE")
        if state:
            # A recurring crawl: kept with its crawl state, so that the filter spans runs.
            prefix = f"{KEY_PREFIX}{state}:near"
        found = cls(crawl_client(crawler), prefix, max_distance, breaker_of(crawler))
        found.stats = crawler.stats
        return found

    def __len__(self) -> int:
        try:
            return int(self.server.get(f"{self.prefix}:count") or 0)
        except RedisError:
            return 0  # only logged; the worker reports an unreachable server itself

    def check_and_add(self, fp: str, url: str | None = None) -> str | None:
        """The fingerprint of a kept near-duplicate, or None (and ``fp`` is now known)."""
        if len(fp) != BITS // 4:
            return None
        keys = [*band_keys(self.prefix, fp, self.max_distance), f"{self.prefix}:count"]
        try:
            found, damaged = self._check(keys, [fp, url or "", self.max_distance])
        except RedisError as exc:
            # Never lose a page for want of Redis: keep it, even if it may be a duplicate
            # (a Redis that stopped answering is said once, and the crawl stops).
            if not self.breaker.down:
                logger.warning("Shared fingerprints unavailable (%s): %s kept unchecked", exc, url)
            return None
        if damaged:
            self._skipped(int(damaged))
        found = found.decode() if isinstance(found, bytes) else str(found or "")
        return found or None

    def _skipped(self, count: int) -> None:
        """Damaged band keys or members were dropped (said once, counted)."""
        if not self.skipped:
            logger.warning(
                "Shared fingerprints %s: a key or member that is no fingerprint was dropped "
                "(a near-duplicate of it may be kept once)",
                self.prefix,
            )
        self.skipped += count
        if self.stats is not None:
            self.stats.inc_value(Stat.DISTRIBUTED_FINGERPRINTS_SKIPPED, count)

    def confirm(self, fp: Any) -> None:
        """Kept on check: a page re-fetched after a crash is recognised by its URL."""

    def close(self) -> None:
        self.server.close()
