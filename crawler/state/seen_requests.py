"""``BoundedDupeFilter``: Scrapy's duplicate filter, bounded in memory for huge plans.

Up to ``SEENSET_EXACT_MAX`` requests it is exact like Scrapy's ``RFPDupeFilter`` (the same
``requests.seen`` file in JOBDIR), but keeps the 20-byte fingerprints packed
(:class:`PackedFingerprints`: 34 bytes a request at 1M, ``python -m benchmarks.crawl_memory
--part exact``, where Scrapy's set of them took 98). Past it, the set becomes a scalable
Bloom filter (:mod:`.bloom`, under 4 bytes a request at the default rate): a new request is
then taken for seen, and not fetched, with probability at most ``SEENSET_ERROR_RATE``.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from scrapy.dupefilters import BaseDupeFilter
from scrapy.utils.job import job_dir
from scrapy_maintext.state.bloom import FIRST_STAGE_CAPACITY, ScalableBloomFilter
from scrapy_maintext.vocabulary.settings import default_of, setting

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Self

    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy.utils.request import RequestFingerprinterProtocol

logger = logging.getLogger(__name__)

#: Scrapy's file name and format (2-byte big-endian length, then the fingerprint), so that a
#: JOBDIR crawl can switch between Scrapy's filter and this one.
SEEN_FILE = "requests.seen"
_LENGTH_BYTES = 2
#: Requests kept exactly: 1M fingerprints are about 33 MiB packed.
DEFAULT_EXACT_MAX: int = default_of("SEENSET_EXACT_MAX")
#: One new request in a million wrongly taken for seen, past the exact part.
DEFAULT_ERROR_RATE: float = default_of("SEENSET_ERROR_RATE")


@dataclass(frozen=True)
class SeenSetSettings:
    """``SEENSET_*`` settings."""

    exact_max: int
    error_rate: float

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> SeenSetSettings:
        return cls(
            exact_max=setting(settings, "SEENSET_EXACT_MAX"),
            error_rate=setting(settings, "SEENSET_ERROR_RATE"),
        )


class BoundedDupeFilter(BaseDupeFilter):
    def __init__(
        self,
        fingerprinter: RequestFingerprinterProtocol,
        config: SeenSetSettings,
        path: str | None = None,
        debug: bool = False,
    ) -> None:
        self.fingerprinter = fingerprinter
        self.config = config
        self.debug = debug
        self.exact = PackedFingerprints()
        self.bloom: ScalableBloomFilter | None = None
        self.filtered = 0
        self.file: IO[bytes] | None = None
        if path:
            # Open for the crawl's lifetime (closed in close()), like Scrapy's own filter.
            self.file = Path(path, SEEN_FILE).open("a+b")  # noqa: SIM115
            self.file.seek(0)
            for fp in read_fingerprints(self.file.read()):
                self.add(fp)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        return cls(
            crawler.request_fingerprinter,
            SeenSetSettings.from_settings(settings),
            job_dir(settings),
            settings.getbool("DUPEFILTER_DEBUG"),
        )

    def __len__(self) -> int:
        return len(self.bloom) if self.bloom is not None else len(self.exact)

    def request_seen(self, request: Request) -> bool:
        fp = self.fingerprinter.fingerprint(request)
        if not self.add(fp):
            return True
        if self.file is not None:
            self.file.write(len(fp).to_bytes(_LENGTH_BYTES, "big") + fp)
        return False

    def add(self, fp: bytes) -> bool:
        """Record ``fp``; False when it was (or, past the exact part, looks) seen."""
        if self.bloom is not None:
            return self.bloom.add(fp)
        if fp in self.exact:
            return False
        self.exact.add(fp)
        if len(self.exact) > self.config.exact_max:
            self._to_bloom()
        return True

    def _to_bloom(self) -> None:
        capacity = max(FIRST_STAGE_CAPACITY, 2 * len(self.exact))
        bloom = ScalableBloomFilter(self.config.error_rate, capacity)
        for fp in self.exact:
            bloom.add(fp)
        self.exact = PackedFingerprints()
        self.bloom = bloom
        logger.warning(
            "Over %d requests seen: the duplicate filter is now a Bloom filter of %.1f MB "
            "(a new request is taken for seen with probability %g; SEENSET_EXACT_MAX)",
            self.config.exact_max,
            bloom.nbytes / 1e6,
            self.config.error_rate,
        )

    def close(self, reason: str) -> None:
        if self.file is not None:
            self.file.close()

    def log(self, request: Request, spider: Spider) -> None:
        if self.debug:
            logger.debug("Filtered duplicate request: %s", request)
        elif not self.filtered:
            logger.debug("Filtered duplicate request %s (no more shown: DUPEFILTER_DEBUG)", request)
        self.filtered += 1
        stats = getattr(getattr(spider, "crawler", None), "stats", None)
        if stats is not None:
            stats.inc_value("dupefilter/filtered")


def read_fingerprints(data: bytes) -> Iterator[bytes]:
    """Fingerprints of a ``requests.seen`` file; a truncated last one is skipped."""
    pos = 0
    while pos + _LENGTH_BYTES <= len(data):
        size = int.from_bytes(data[pos : pos + _LENGTH_BYTES], "big")
        pos += _LENGTH_BYTES
        if pos + size > len(data):
            return
        yield data[pos : pos + size]
        pos += size


#: Fingerprints a bucket of :class:`PackedFingerprints` holds on average before the buckets
#: double: an insert copies its bucket (about 1 kB), a bucket costs about 40 bytes.
_BUCKET_RECORDS = 48


class PackedFingerprints:
    """An exact set of fingerprints (bytes of one width, a request fingerprinter's digests)
    at about their own size: each bucket is one ``bytes`` of sorted records, the bucket
    chosen by the fingerprint's first bits (digests are uniform); the buckets double as the
    set grows, each split in two where its next bit changes. Fingerprints of another width
    (a custom fingerprinter's) go to a plain set beside it."""

    def __init__(self) -> None:
        self.width = 0
        self.bits = 0
        self.buckets: list[bytes] = [b""]
        self.count = 0
        self.others: set[bytes] = set()

    def __len__(self) -> int:
        return self.count + len(self.others)

    def __iter__(self) -> Iterator[bytes]:
        for bucket in self.buckets if self.width else ():
            for start in range(0, len(bucket), self.width):
                yield bucket[start : start + self.width]
        yield from self.others

    def __contains__(self, fp: bytes) -> bool:
        if len(fp) != self.width or len(fp) < 4:
            return fp in self.others
        bucket = self.buckets[self._bucket_of(fp)]
        index = self._index(bucket, fp)
        return bucket[index * self.width : (index + 1) * self.width] == fp

    def add(self, fp: bytes) -> None:
        if not self.width and len(fp) >= 4:
            self.width = len(fp)
        if len(fp) != self.width:
            self.others.add(fp)
            return
        number = self._bucket_of(fp)
        bucket = self.buckets[number]
        cut = self._index(bucket, fp) * self.width
        if bucket[cut : cut + self.width] == fp:
            return
        self.buckets[number] = b"".join((bucket[:cut], fp, bucket[cut:]))
        self.count += 1
        if self.count > _BUCKET_RECORDS * len(self.buckets) and self.bits < 24:
            self._double()

    def _bucket_of(self, fp: bytes) -> int:
        return int.from_bytes(fp[:4], "big") >> (32 - self.bits) if self.bits else 0

    def _index(self, bucket: bytes, fp: bytes) -> int:
        """Where ``fp`` is, or goes, in ``bucket`` (in records)."""
        return bisect_left(_Records(bucket, self.width), fp)

    def _double(self) -> None:
        """Each bucket split in two at its first record whose next bit is set (a bucket's
        records share their first bits and are sorted: those with it clear come first)."""
        self.bits += 1
        shift = 32 - self.bits

        def next_bit(fp: bytes) -> int:
            return (int.from_bytes(fp[:4], "big") >> shift) & 1

        split: list[bytes] = []
        for bucket in self.buckets:
            cut = bisect_left(_Records(bucket, self.width), 1, key=next_bit) * self.width
            split += (bucket[:cut], bucket[cut:])
        self.buckets = split


class _Records:
    """A bucket of :class:`PackedFingerprints` as a sequence of its records (for bisect)."""

    __slots__ = ("data", "width")

    def __init__(self, data: bytes, width: int) -> None:
        self.data = data
        self.width = width

    def __len__(self) -> int:
        return len(self.data) // self.width

    def __getitem__(self, index: int) -> bytes:
        return self.data[index * self.width : (index + 1) * self.width]
