"""A crawl state kept in Redis (``REDIS_URL`` with ``CRAWL_STATE=NAME``), shared by the
workers of a distributed recurring crawl.

Scrapy-free. The same rows as the SQLite file (:mod:`~scrapy_maintext.state.crawl_state`),
under ``maintext:state:NAME`` (``P``):

- ``P:meta`` what the keys are (``kind``, ``schema``): keys of anything else are refused;
- ``P:u:<key>`` one string per URL (``key`` as in the SQLite file), a JSON array of its
  fields in a fixed order (:data:`FIELDS`, :func:`~scrapy_maintext.state.redis.keys.encode`:
  times and counts as numbers, 64-bit hashes as text, which Lua's doubles would not keep);
  a hash per URL, or per bucket of URLs, would be kept by Redis as a table (a row with its
  URL is longer than a compact hash's 64-byte values) and cost more;
- ``P:src`` a number for each sitemap or feed that listed URLs (``P:srcid``: back to its
  URL), which the rows hold instead of its URL;
- ``P:src:<number>`` the keys of the URLs that sitemap listed last;
- ``P:pages`` how many rows are pages (not sitemaps or feeds);
- ``P:near:count``, ``P:near:<distance>:h<band>:<bucket>`` the near-duplicate fingerprints
  and ``P:near:<distance>:v2`` their layout (:mod:`scrapy_maintext.distributed.fingerprints`;
  the sets ``P:near:<distance>:<band>:<value>`` of earlier versions are moved into them);
- ``P:held:<worker>`` a worker of a crawl holds the state (expires after
  ``DISTRIBUTED_WORKER_TIMEOUT``): ``maintext state --forget`` refuses meanwhile.

What each key must hold, and the checks, are in :mod:`~scrapy_maintext.state.redis.keys`;
the scripts that write rows in :mod:`~scrapy_maintext.state.redis.scripts`; the reads across
rows (listings, scans) in :mod:`~scrapy_maintext.state.redis.reads`.

A name may hold ':', so ``P:*`` also matches the keys of a state named ``NAME:de``;
:func:`state_keys` finds one state's keys exactly.

Writes are buffered and applied at :meth:`RedisCrawlState.commit` in one ``MULTI``/``EXEC``
of Lua scripts (each write reads, changes and writes a row inside Redis; the writes of rows
go 500 to a call), all or none: a killed
worker loses at most its uncommitted window and never claims an export it did not make. Two
workers may write the same URL: the last one wins, and revisions only go up (counted inside
the script). Reads see what is committed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError, ResponseError
from scrapy_maintext.state.redis import scripts as lua
from scrapy_maintext.state.redis.keys import (
    KEY_PREFIX,
    KIND,
    SCHEMA,
    check_meta,
    key_pattern,
    record_of,
    robots_copy_of,
    state_keys,
    text,
    visit_of,
)
from scrapy_maintext.state.redis.reads import CHUNK, StateReads, redis_cause
from scrapy_maintext.state.store import CrawlStateError, RobotsCopy, UrlRecord, Visit, url_key
from scrapy_maintext.state.validators import Validators

if TYPE_CHECKING:
    from redis import Redis

logger = logging.getLogger(__name__)

__all__ = [
    "KEY_PREFIX",
    "KIND",
    "SCHEMA",
    "RedisCrawlState",
    "key_pattern",
    "redis_cause",
    "state_keys",
]


#: Visits kept from :meth:`RedisCrawlState.get` at most (the requests in flight, and more).
_VISITS_KEPT = 10_000
_UNREAD = object()


def _arg(value: object) -> str:
    return "" if value is None else str(value)


class RedisCrawlState(StateReads):
    """The named crawl state ``name`` in the Redis server of ``client``: its rows read by
    URL (one round trip for the requests taken from the shared queue together), and its
    writes, buffered until :meth:`commit`."""

    def __init__(self, client: Redis, name: str, where: str = "") -> None:
        super().__init__(client, name, where)
        #: The visit read with a URL's row by :meth:`get`, until :meth:`visits` takes it.
        self._visit_read: dict[str, Visit | None] = {}
        #: Rows read by :meth:`read_ahead` for requests about to be sent, until :meth:`get`
        #: takes each (or a write of this state to its URL drops it).
        self._ahead: dict[str, dict[str, str] | None] = {}
        self._writes = client.register_script(lua.WRITES)
        self._robots_write = client.register_script(lua.ROBOTS)
        try:
            check_meta(client, self.prefix, self.path)
        except RedisError as exc:
            raise CrawlStateError(f"crawl state {self.path}: {redis_cause(exc)}") from None

    # Reading: what is committed.

    def get(self, url: str) -> UrlRecord | None:
        """The row of ``url``; its visit is kept for the one :meth:`visits` that asks for
        it next (a page's row is read when it is requested, its visit once it is answered:
        one round trip, not two)."""
        ahead = url in self._ahead
        row = self._ahead.pop(url) if ahead else dict(self._rows_of([url])).get(url)
        if len(self._visit_read) >= _VISITS_KEPT:
            del self._visit_read[next(iter(self._visit_read))]  # a request never answered
        self._visit_read[url] = visit_of(row) if row is not None and "du" in row else None
        if row is None or row.get("u") != url:
            return None
        return record_of(row, self._sitemaps.url(row.get("s")))

    def read_ahead(self, urls: Iterable[str]) -> None:
        """The rows of ``urls`` read now, in one round trip, for the :meth:`get` of each
        that comes next (the requests a worker just took from the shared queue: one round
        trip for them all, not one each)."""
        wanted = list(dict.fromkeys(urls))
        if not wanted:
            return
        rows = self._rows([self._row(u) for u in wanted])
        self._ahead.update(zip(wanted, rows, strict=True))
        while len(self._ahead) > _VISITS_KEPT:
            del self._ahead[next(iter(self._ahead))]  # a request never sent

    def _rows_of(self, urls: Iterable[str]) -> Iterator[tuple[str, dict[str, str]]]:
        """Each of ``urls`` that has a row, with it."""
        wanted = list(dict.fromkeys(urls))
        for url, row in zip(wanted, self._rows([self._row(u) for u in wanted]), strict=True):
            if row is not None:
                yield url, row

    def get_many(self, urls: Iterable[str]) -> dict[str, UrlRecord]:
        """The rows of ``urls``; those the last listing read holds are taken from it (a
        sitemap's pages are looked up right after what it listed last was read)."""
        listed, urls = self._listed_urls(), list(urls)
        rows = [(url, listed[url]) for url in urls if url in listed]
        rows += self._rows_of(url for url in urls if url not in listed)
        return {
            url: record_of(row, self._sitemaps.url(row.get("s")))
            for url, row in rows
            if row.get("u") == url
        }

    def visit(self, url: str) -> Visit | None:
        return self.visits([url]).get(url)

    def visits(self, urls: Iterable[str]) -> dict[str, Visit]:
        found: dict[str, Visit] = {}
        unread = []
        for url in urls:
            kept = self._visit_read.pop(url, _UNREAD)
            if kept is _UNREAD:
                unread.append(url)
            elif isinstance(kept, Visit):
                found[url] = kept
        found.update((url, visit_of(row)) for url, row in self._rows_of(unread) if "du" in row)
        return found

    # Writing: buffered until :meth:`commit`.

    def record_export(
        self,
        url: str,
        hashed: int,
        when: int,
        validators: Validators,
        listed: int | None,
        source: str | None,
        fingerprint: str | None = None,
    ) -> None:
        self._ahead.pop(url, None)
        keys = [self._row(url), f"{self.prefix}:pages"]
        args = [url_key(url), url, validators.etag, validators.last_modified, listed, hashed]
        args += [when, source, fingerprint, self.prefix]
        self._pending.append(("export", keys, [_arg(a) for a in args]))

    def record_seen(
        self,
        url: str,
        validators: Validators | None,
        listed: int | None,
        source: str | None,
        document: bool = False,
    ) -> None:
        self._ahead.pop(url, None)
        if url in self._reread:
            validators = listed = None  # not remembered: the next run reads it whole
        etag = validators.etag if validators else None
        modified = validators.last_modified if validators else None
        keys = [self._row(url), f"{self.prefix}:pages"]
        args = [url_key(url), url, etag, modified, listed, int(document), source, self.prefix]
        self._pending.append(("seen", keys, [_arg(a) for a in args]))

    def mark_gone(self, url: str) -> None:
        self._ahead.pop(url, None)
        self._pending.append(("gone", [self._row(url)], []))

    def unlist(self, urls: Iterable[str]) -> None:
        urls = list(urls)
        for start in range(0, len(urls), CHUNK):
            chunk = urls[start : start + CHUNK]
            for url in chunk:
                self._ahead.pop(url, None)
            args = [self.prefix, *(str(url_key(u)) for u in chunk)]
            self._pending.append(("unlist", [self._row(u) for u in chunk], args))

    def record_visit(self, url: str, visit: Visit) -> None:
        self._visit_read.pop(url, None)
        self._ahead.pop(url, None)
        values = (visit.due, visit.interval, visit.checked, visit.changed, visit.digest)
        self._pending.append(("visit", [self._row(url)], [_arg(v) for v in values]))

    def robots(self, url: str) -> RobotsCopy | None:
        try:
            found = self.client.hgetall(self._robots_key(url))
        except ResponseError:
            return None  # not a hash (damaged by hand): asked again, and written again
        except RedisError as exc:
            raise self._fail(exc) from exc
        return robots_copy_of(dict(found), url)

    def keep_robots(self, copy: RobotsCopy) -> None:
        fields = {
            "u": copy.url,
            "st": copy.status,
            "b": copy.body,
            "e": copy.validators.etag or "",
            "m": "" if copy.validators.last_modified is None else copy.validators.last_modified,
            "ck": copy.checked,
            "ff": copy.fresh_for,
        }
        args = [str(v) if isinstance(v, int) else v for pair in fields.items() for v in pair]
        self._pending.append((self._robots_write, [self._robots_key(copy.url)], args))

    def _robots_key(self, url: str) -> str:
        return f"{self.prefix}:robots:{url_key(url)}"

    @property
    def pending(self) -> int:
        return len(self._pending)

    def commit(self) -> None:
        """Apply the buffered writes in one ``MULTI``/``EXEC``: all of them, or none. The
        writes of rows go :data:`CHUNK` to a script call (:data:`lua.WRITES`), in order."""
        self._listing = self._listed = None  # read again after the writes
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        try:
            pipe = self.client.pipeline(transaction=True)
            rows: list[tuple[str, list[str], list[Any]]] = []
            for script, keys, args in pending:
                if isinstance(script, str):
                    rows.append((script, keys, args))
                    if len(rows) < CHUNK:
                        continue
                if rows:
                    self._writes(args=[json.dumps(rows, ensure_ascii=False)], client=pipe)
                    rows = []
                if not isinstance(script, str):
                    script(keys=keys, args=args, client=pipe)
            if rows:
                self._writes(args=[json.dumps(rows, ensure_ascii=False)], client=pipe)
            answers = pipe.execute()
        except RedisError as exc:
            raise self._fail(exc) from exc
        replaced = [k for a in answers for k in (a if isinstance(a, list) else [a]) if k]
        prefix = f"{self.prefix}:src:"
        for key in {text(k) or "" for k in replaced}:
            # Replaced by a write: what else it listed is found again from the rows.
            self._skip_listing(key)
            source = self._sitemaps.url(key.removeprefix(prefix))
            if source is not None:
                self._rebuild_listing(source)

    def abandon(self) -> None:
        self._pending = []

    def close(self) -> None:
        try:
            self.commit()
        finally:
            self.client.close()

    def __enter__(self) -> RedisCrawlState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
