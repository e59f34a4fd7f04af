"""What a crawl state kept in Redis reads across its rows (Scrapy-free): rows by the
hundred, what a sitemap or feed listed last (``P:src:<number>``, found again from the rows
when its listing was damaged by hand), every fingerprint, the count of pages; and a Redis
failure named by its cause. The reads and writes of single URLs are in
:mod:`~scrapy_maintext.state.redis.state`, which builds on this.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import OutOfMemoryError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from scrapy_maintext.state.redis import scripts as lua
from scrapy_maintext.state.redis.keys import SitemapNumbers, check_name, decode, state_prefix, text
from scrapy_maintext.state.store import StateUnavailable, url_key

if TYPE_CHECKING:
    from redis import Redis

logger = logging.getLogger(__name__)

#: Rows (or keys) in one round trip at most.
CHUNK = 500


class StateReads:
    """The named crawl state ``name`` in the Redis server of ``client``: its reads across
    rows (:class:`~scrapy_maintext.state.redis.state.RedisCrawlState` is the whole state)."""

    def __init__(self, client: Redis, name: str, where: str = "") -> None:
        check_name(name)
        self.client = client
        self.name = name
        self.prefix = state_prefix(name)
        self.path = f"{name} (Redis {where})" if where else name
        #: What a Redis that stopped answering is called (as the crawl's breaker names it).
        self.server = f"Redis {where}" if where else "Redis"
        #: Keys of rows that are not rows (damaged by hand): skipped, their URLs new.
        self.skipped: set[str] = set()
        #: Listings (``P:src:<sitemap>``) that are no set: skipped, written again.
        self.skipped_keys: set[str] = set()
        self._recounted = False
        #: Listings found again from the rows in this run, by sitemap.
        self._rebuilt: dict[str, list[str]] = {}
        #: Sitemaps whose listing held such a row: the next run reads them whole.
        self._reread: set[str] = set()
        #: Writes to apply at the next commit: a script, or the name of a write of rows
        #: (:data:`~scrapy_maintext.state.redis.scripts.WRITES`), with its keys and arguments.
        self._pending: list[tuple[Any, list[str], list[Any]]] = []
        self._sitemaps = SitemapNumbers(client, self.prefix, self._fail)
        #: The last listing read, with its rows, until the next commit.
        self._listing: tuple[str, list[dict[str, str] | None]] | None = None
        self._listed: dict[str, dict[str, str]] | None = None
        self._drop = client.register_script(lua.DROP)
        self._relist = client.register_script(lua.RELIST)

    def _row(self, url: str) -> str:
        return f"{self.prefix}:u:{url_key(url)}"

    def _fail(self, exc: RedisError) -> StateUnavailable:
        """``exc`` as the state's failure; a Redis that stopped answering is named as such."""
        lost = isinstance(exc, (RedisConnectionError, RedisTimeoutError))
        what = self.server if lost else ""
        return StateUnavailable(f"crawl state {self.path}: {redis_cause(exc)}", str(exc), what)

    def _rows(self, keys: list[str]) -> Iterator[dict[str, str] | None]:
        """The rows of ``keys`` (None where there is none, or what is no row), a round trip
        per 500."""
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start : start + CHUNK]
            try:
                values = self.client.mget(chunk)
            except RedisError as exc:
                raise self._fail(exc) from exc
            for key, value in zip(chunk, values, strict=True):
                row = decode(value) if value is not None else None
                if value is not None and row is None:
                    self._skip(key)
                yield row

    def _skip(self, key: str) -> None:
        """A damaged row is skipped (its URL is new to this run, and written again)."""
        if not self.skipped:
            logger.warning(
                "Crawl state %s: %s is not a row of a crawl state; skipped (its URL counts "
                "as new and is written again)",
                self.path,
                key,
            )
        self.skipped.add(key)

    # What the sitemaps and feeds listed; scans of every row.

    def listed_by(
        self, source_url: str, documents: bool = False, undated: bool = False
    ) -> list[str]:
        return [row["u"] for row in self._listed_rows(source_url, documents, undated)]

    def pages_listed_by(self, source_url: str) -> tuple[list[str], list[str]]:
        rows = self._listed_rows(source_url, documents=False, undated=False)
        dated = [row["u"] for row in rows if "l" in row]
        return dated, [row["u"] for row in rows if "l" not in row]

    def _listed_rows(self, source_url: str, documents: bool, undated: bool) -> list[dict[str, str]]:
        found = []
        for row in self._listing_rows(source_url):
            if row is None or "u" not in row or "g" in row or ("d" in row) != documents:
                continue
            if not undated or "l" not in row:
                found.append(row)
        return found

    def _listing_rows(self, source_url: str) -> list[dict[str, str] | None]:
        """The rows ``source_url`` listed last (None: a damaged one), read once until the
        next commit: the pages and the documents a sitemap listed are asked for one after
        the other."""
        if self._listing is not None and self._listing[0] == source_url:
            return self._listing[1]
        number = self._sitemaps.number(source_url)
        if number is None:
            return []
        listing = f"{self.prefix}:src:{number}"
        try:
            keys = sorted(text(k) or "" for k in self.client.smembers(listing))
        except ResponseError as exc:
            if "WRONGTYPE" not in str(exc):
                raise self._fail(exc) from exc
            self._skip_listing(listing)
            keys = self._rebuild_listing(source_url)
        except RedisError as exc:
            raise self._fail(exc) from exc
        skipped = len(self.skipped)
        rows = list(self._rows([f"{self.prefix}:u:{k}" for k in keys]))
        if len(self.skipped) > skipped:
            # A damaged row hides a URL it listed: the next run reads it whole again.
            self._reread_sitemap(source_url)
        self._listing = (source_url, rows)
        self._listed = None
        return rows

    def _listed_urls(self) -> dict[str, dict[str, str]]:
        """The rows of the last listing read (until the next commit), by URL."""
        if self._listing is None:
            return {}
        if self._listed is None:
            self._listed = {row["u"]: row for row in self._listing[1] if row and "u" in row}
        return self._listed

    def _rebuild_listing(self, source_url: str) -> list[str]:
        """The listing of ``source_url`` found again from the rows (each names the sitemap
        that listed it), and written again at the next commit (once a run)."""
        if source_url in self._rebuilt:
            return self._rebuilt[source_url]
        prefix = f"{self.prefix}:u:"
        number = self._sitemaps.number(source_url)
        keys = [
            key.removeprefix(prefix)
            for key, row in self._scan_rows()
            if row is not None and number is not None and row.get("s") == number
        ]
        listing = f"{self.prefix}:src:{number}"
        self._pending.append((self._drop, [listing], []))
        for start in range(0, len(keys), CHUNK):
            self._pending.append((self._relist, [listing], keys[start : start + CHUNK]))
        self._rebuilt[source_url] = sorted(keys)
        return self._rebuilt[source_url]

    def _scan_rows(self) -> Iterator[tuple[str, dict[str, str] | None]]:
        """Every row key of the state, with its row (None: damaged)."""
        try:
            keys = [
                text(k) or "" for k in self.client.scan_iter(match=f"{self.prefix}:u:*", count=1000)
            ]
        except RedisError as exc:
            raise self._fail(exc) from exc
        yield from zip(keys, self._rows(keys), strict=True)

    def _reread_sitemap(self, url: str) -> None:
        """The next run reads the sitemap ``url`` whole (its validators are forgotten)."""
        self._reread.add(url)
        self._pending.append(("reread", [self._row(url)], []))

    def _skip_listing(self, key: str) -> None:
        """A listing that is no set is skipped (counted) and written again."""
        if key not in self.skipped_keys:
            logger.warning(
                "Crawl state %s: %s is not a listing of a crawl state; skipped (found again "
                "from its rows, and written again)",
                self.path,
                key,
            )
        self.skipped_keys.add(key)

    def fingerprints(self) -> Iterator[str]:
        """Every page row is read (a distributed crawl keeps its fingerprints in the shared
        index instead, and does not call this)."""
        for _, row in self._scan_rows():
            if row is not None and "p" in row:
                yield row["p"]

    def known_pages(self) -> int:
        """``P:pages``; counted again from the rows once a damaged row was skipped (whether
        it was counted before is not known)."""
        try:
            if self.skipped and not self._pending and not self._recounted:
                self._recount()
            return int(self.client.get(f"{self.prefix}:pages") or 0)
        except RedisError as exc:
            raise self._fail(exc) from exc

    def _recount(self) -> None:
        """``P:pages`` set to the page rows there are (a write of another worker between
        the scan and the set is counted by the next recount, or lost to this one)."""
        rows = (row for _, row in self._scan_rows())
        pages = sum(row is not None and "u" in row and "d" not in row for row in rows)
        self.client.set(f"{self.prefix}:pages", pages)
        self._recounted = True


def redis_cause(exc: RedisError) -> str:
    """What went wrong with a Redis call, named by its cause: a Redis that does not answer,
    one that is full (``maxmemory``), or what it said."""
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError)):
        return f"Redis unreachable ({exc})"
    if isinstance(exc, OutOfMemoryError) or "maxmemory" in str(exc):
        return f"Redis is full: it refuses writes at its maxmemory ({exc})"
    return f"Redis refused a command ({exc})"
