"""Near-duplicate fingerprints shared by every worker of a crawl (``EXTRACT_DEDUP_STORE``).

The same banded index as :class:`~scrapy_maintext.extraction.FingerprintIndex` (within
``max_distance`` bits, two 64-bit fingerprints agree on at least one of ``max_distance + 1``
bands), kept in Redis hashes: a band value's top :data:`BUCKET_BITS` bits name the hash
(``P:<distance>:h<band>:<bucket>``), the rest its field, whose value holds the entries of
that band value, 12 bytes each (the fingerprint's 8, and 4 of the page's URL). The keys are
a fixed number per band, not several per document: Redis keeps a small hash in one compact
block (while its values stay under 64 bytes: 5 entries), so a document costs about four
entries of 12 bytes (issue 47; the sets of earlier versions, one per band value with the
whole URL in every member, took about 885 bytes per document). A Lua script looks for a
near-duplicate and adds the fingerprint in one atomic step, so of two near-duplicates
extracted by two workers at the same moment exactly one is kept. The URL's tag says that a
page fetched again after its worker died is not a duplicate of its own earlier copy. In a
recurring crawl (``CRAWL_STATE`` with ``REDIS_URL``) they are kept with the crawl state and
span its runs: a page is never a duplicate of its own earlier export. An index of the
earlier sets is moved into the hashes when a crawl opens it
(:meth:`RedisFingerprints.migrate`).
"""

from __future__ import annotations

import hashlib
import logging
import re
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError
from scrapy_maintext.distributed import lua
from scrapy_maintext.distributed.connection import Breaker, breaker_of, crawl_client
from scrapy_maintext.distributed.settings import DistributedSettings
from scrapy_maintext.fields.fingerprint import BITS
from scrapy_maintext.state.redis.state import KEY_PREFIX
from scrapy_maintext.vocabulary.names import Stat
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from typing import Self

    from redis import Redis
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)


#: A band value's top bits that name its hash: at most 2**9 hashes per band, whatever the
#: number of documents (a 16-bit band leaves 7 bits of field: 128 fields, a compact hash).
BUCKET_BITS = 9
#: The marker of an index in hashes (absent: the sets of earlier versions may be there);
#: "migrating" while a worker moves them.
LAYOUT = "v2"


def url_tag(url: str) -> bytes:
    """4 bytes of the URL: enough to tell a page from another near-duplicate."""
    return hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=4).digest()


def band_slots(prefix: str, fp: str, max_distance: int) -> list[tuple[str, str]]:
    """The (hash, field) of each band of a fingerprint (as ``FingerprintIndex`` bands it)."""
    value = int(fp, 16)
    bands = max_distance + 1
    width = -(-BITS // bands)
    mask = (1 << width) - 1
    low = max(width - BUCKET_BITS, 0)
    slots = []
    for i in range(bands):
        band = value >> (i * width) & mask
        slots.append(
            (f"{prefix}:{max_distance}:h{i}:{band >> low:x}", f"{band & ((1 << low) - 1):x}")
        )
    return slots


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def old_band_keys(prefix: str, fp: str, max_distance: int) -> list[str]:
    """The sets of earlier versions a fingerprint was in (one per band value)."""
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
        try:
            found.migrate()
        except RedisError as exc:
            logger.warning("Near-duplicate index %s not migrated: %s", prefix, exc)
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
        try:
            found, damaged = self._run(fp, url_tag(url or ""), self.max_distance, counted=True)
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

    def _run(self, fp: str, tag: bytes, limit: int, counted: bool) -> Any:
        slots = band_slots(self.prefix, fp, self.max_distance)
        keys = [key for key, _ in slots] + [f"{self.prefix}:count"]
        fields = [field for _, field in slots]
        entry = bytes.fromhex(fp) + tag
        return self._check(keys, [fp, entry, limit, "1" if counted else "", *fields])

    def migrate(self) -> int:
        """Move an index of earlier versions (a set per band value, ``fingerprint url``
        members) into the hashes, once: the first worker to open it does, the others go on
        meanwhile (a near-duplicate of a page not moved yet may be kept once). Returns the
        fingerprints moved."""
        marker = f"{self.prefix}:{self.max_distance}:{LAYOUT}"
        if not self.server.set(marker, "migrating", nx=True):
            return 0
        moved = 0
        keys = self._old_keys()
        # Every fingerprint is a member of one set of band 0.
        first_band = f"{self.prefix}:{self.max_distance}:0:"
        for key in keys:
            if not key.startswith(first_band) or _text(self.server.type(key)) != "set":
                continue
            for member in self.server.smembers(key):
                fp, _, url = _text(member).partition(" ")
                if len(fp) == BITS // 4 and all(c in "0123456789abcdef" for c in fp):
                    # Distance -1 finds nothing: added as it is.
                    self._run(fp, url_tag(url), -1, counted=False)
                    moved += 1
        for start in range(0, len(keys), 500):
            self.server.delete(*keys[start : start + 500])
        self.server.set(marker, "done")
        if moved:
            logger.info(
                "Near-duplicate index %s: %d fingerprints moved to hashes", self.prefix, moved
            )
        return moved

    def _old_keys(self) -> list[str]:
        """The sets of earlier versions, exactly: another state's name may begin with this
        one's (``news`` and ``news:near:3:1``)."""
        own = re.compile(re.escape(f"{self.prefix}:{self.max_distance}:") + "[0-9]+:[0-9a-f]+")
        found = self.server.scan_iter(
            match=f"{self.prefix}:{self.max_distance}:[0-9]*:*", count=1000
        )
        return [key for key in map(_text, found) if own.fullmatch(key)]

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
