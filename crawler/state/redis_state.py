"""A crawl state kept in Redis (``REDIS_URL`` with ``CRAWL_STATE=NAME``), shared by the
workers of a distributed recurring crawl.

Scrapy-free. The same rows as the SQLite file (:mod:`~scrapy_maintext.state.crawl_state`),
under ``maintext:state:NAME`` (``P``):

- ``P:meta`` what the keys are (``kind``, ``schema``): keys of anything else are refused;
- ``P:u:<key>`` one hash per URL (``key`` as in the SQLite file): ``url``, ``etag``, ``lm``
  (Last-Modified), ``listed``, ``hash`` (of the exported text), ``first``/``last`` export,
  ``rev``, ``gone``, ``doc`` (a sitemap or feed), ``src`` (the sitemap that listed it),
  ``fp`` (near-duplicate fingerprint), and its schedule: ``due``, ``interval``, ``checked``,
  ``changed``, ``digest``;
- ``P:src:<sitemap URL>`` the keys of the URLs that sitemap listed last;
- ``P:fp`` key -> fingerprint of every page exported with one; ``P:pages`` keys of pages.

Writes are buffered and applied at :meth:`RedisCrawlState.commit` in one ``MULTI``/``EXEC``
of Lua scripts, all or none: a killed worker loses at most its uncommitted window and never
claims an export it did not make. Two workers may write the same URL: the last one wins,
and revisions only go up (``HINCRBY``). Reads see what is committed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError
from scrapy_maintext.state.store import (
    CrawlStateError,
    StateUnavailable,
    UrlRecord,
    Visit,
    url_key,
)
from scrapy_maintext.state.validators import Validators

if TYPE_CHECKING:
    from redis import Redis

KIND = "scrapy-maintext crawl state"
SCHEMA = 1
KEY_PREFIX = "maintext:state:"
#: What a state's name may hold: a name, not a path (a file path here is a mistake).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
_CHUNK = 500
_RECORD_FIELDS = ("url", "etag", "lm", "listed", "hash", "first", "last", "rev", "gone", "src")
_VISIT_FIELDS = ("due", "interval", "checked", "changed", "digest")

#: Lua helpers: set or delete a field (``''`` is none), and move a URL to its new sitemap.
_LIB = """
local function put(row, field, value)
  if value == '' then redis.call('HDEL', row, field) else redis.call('HSET', row, field, value) end
end
local function source(row, key, new, prefix)
  if new == '' then return end
  local old = redis.call('HGET', row, 'src')
  if old and old ~= new then redis.call('SREM', prefix .. old, key) end
  redis.call('HSET', row, 'src', new)
  redis.call('SADD', prefix .. new, key)
end
"""
#: KEYS: the URL's row, fingerprints, pages. ARGV: key, url, etag, last-modified, listed,
#: text hash, now, source, fingerprint, sitemap-set prefix.
_EXPORT = (
    _LIB
    + """
local row, key = KEYS[1], ARGV[1]
redis.call('HSET', row, 'url', ARGV[2], 'hash', ARGV[6], 'last', ARGV[7], 'gone', 0, 'doc', 0)
put(row, 'etag', ARGV[3]); put(row, 'lm', ARGV[4]); put(row, 'listed', ARGV[5])
put(row, 'fp', ARGV[9])
redis.call('HSETNX', row, 'first', ARGV[7])
redis.call('HINCRBY', row, 'rev', 1)
put(KEYS[2], key, ARGV[9])
redis.call('SADD', KEYS[3], key)
source(row, key, ARGV[8], ARGV[10])
"""
)
#: KEYS: the URL's row, pages. ARGV: key, url, etag, last-modified, listed, '1' = a
#: document, source, sitemap-set prefix. Keeps what is not given (``coalesce``).
_SEEN = (
    _LIB
    + """
local row, key = KEYS[1], ARGV[1]
if redis.call('HEXISTS', row, 'url') == 0 then
  redis.call('HSET', row, 'url', ARGV[2], 'rev', 0, 'doc', ARGV[6])
  if ARGV[6] == '0' then redis.call('SADD', KEYS[2], key) end
end
for i, field in ipairs({'etag', 'lm', 'listed'}) do
  if ARGV[i + 2] ~= '' then redis.call('HSET', row, field, ARGV[i + 2]) end
end
redis.call('HSET', row, 'gone', 0)
source(row, key, ARGV[7], ARGV[8])
"""
)
#: KEYS: the URL's row.
_GONE = """
if redis.call('HEXISTS', KEYS[1], 'url') == 1 then redis.call('HSET', KEYS[1], 'gone', 1) end
"""
#: KEYS: rows. ARGV: sitemap-set prefix, then the rows' keys.
_UNLIST = """
for i, row in ipairs(KEYS) do
  local old = redis.call('HGET', row, 'src')
  if old then redis.call('SREM', ARGV[1] .. old, ARGV[i + 1]) end
  redis.call('HDEL', row, 'src')
end
"""


def _arg(value: object) -> str:
    return "" if value is None else str(value)


def _int(value: bytes | None) -> int | None:
    return None if value is None else int(value)


def _text(value: bytes | str | None) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value


class RedisCrawlState:
    """The named crawl state ``name`` in the Redis server of ``client``."""

    def __init__(self, client: Redis, name: str, where: str = "") -> None:
        if not _NAME.fullmatch(name):
            raise CrawlStateError(
                f"crawl state {name!r}: with REDIS_URL, CRAWL_STATE names a state kept in Redis "
                "(letters, digits and . _ : -, not a file path)"
            )
        self.client = client
        self.name = name
        self.prefix = f"{KEY_PREFIX}{name}"
        self.path = f"{name} (Redis {where})" if where else name
        self._pending: list[tuple[Any, list[str], list[str]]] = []
        self._export = client.register_script(_EXPORT)
        self._seen = client.register_script(_SEEN)
        self._gone = client.register_script(_GONE)
        self._unlist = client.register_script(_UNLIST)
        try:
            self._check()
        except RedisError as exc:
            raise CrawlStateError(f"crawl state {self.path}: Redis unreachable ({exc})") from None

    def _check(self) -> None:
        """Refuse keys that are not a crawl state of ours, or of a newer schema."""
        meta = f"{self.prefix}:meta"
        kind = self.client.type(meta)
        if kind not in (b"none", b"hash", "none", "hash"):
            raise CrawlStateError(f"crawl state {self.path}: {meta} is not a crawl state")
        found = self.client.hgetall(meta)
        if not found:
            self.client.hset(meta, mapping={"kind": KIND, "schema": SCHEMA})
            return
        if found.get(b"kind") != KIND.encode():
            raise CrawlStateError(f"crawl state {self.path}: {meta} is not a crawl state")
        schema = int(found.get(b"schema", b"0"))
        if schema > SCHEMA:
            raise CrawlStateError(
                f"crawl state {self.path} has schema {schema}, newer than this version of "
                f"scrapy-maintext reads ({SCHEMA}); upgrade, or use another name"
            )

    def _row(self, url: str) -> str:
        return f"{self.prefix}:u:{url_key(url)}"

    # Reading: what is committed.

    def _read(self, rows: list[str], fields: tuple[str, ...]) -> list[list[bytes | None]]:
        try:
            pipe = self.client.pipeline(transaction=False)
            for row in rows:
                pipe.hmget(row, fields)
            return list(pipe.execute())
        except RedisError as exc:
            raise StateUnavailable(f"crawl state {self.path}: {exc}") from exc

    def get(self, url: str) -> UrlRecord | None:
        return self.get_many([url]).get(url)

    def _fields_of(
        self, urls: Iterable[str], fields: tuple[str, ...]
    ) -> Iterator[tuple[str, list[bytes | None]]]:
        """``fields`` of each of ``urls``' rows, a round trip per 500."""
        wanted = list(dict.fromkeys(urls))
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            rows = self._read([self._row(u) for u in chunk], fields)
            yield from zip(chunk, rows, strict=True)

    def get_many(self, urls: Iterable[str]) -> dict[str, UrlRecord]:
        found: dict[str, UrlRecord] = {}
        for url, values in self._fields_of(urls, (*_RECORD_FIELDS, "fp")):
            record = _record(values)
            if record is not None and record.url == url:
                found[url] = record
        return found

    def listed_by(
        self, source_url: str, documents: bool = False, undated: bool = False
    ) -> list[str]:
        try:
            keys = sorted(self.client.smembers(f"{self.prefix}:src:{source_url}"))
        except RedisError as exc:
            raise StateUnavailable(f"crawl state {self.path}: {exc}") from exc
        rows = [f"{self.prefix}:u:{_text(k)}" for k in keys]
        found = []
        for url, gone, doc, listed in self._read(rows, ("url", "gone", "doc", "listed")):
            if url is None or gone == b"1" or (doc == b"1") != documents:
                continue
            if not undated or listed is None:
                found.append(url.decode("utf-8", "surrogatepass"))
        return found

    def fingerprints(self) -> Iterator[str]:
        try:
            for _, value in self.client.hscan_iter(f"{self.prefix}:fp", count=1000):
                yield value.decode()
        except RedisError as exc:
            raise StateUnavailable(f"crawl state {self.path}: {exc}") from exc

    def known_pages(self) -> int:
        try:
            return int(self.client.scard(f"{self.prefix}:pages"))
        except RedisError as exc:
            raise StateUnavailable(f"crawl state {self.path}: {exc}") from exc

    def visit(self, url: str) -> Visit | None:
        return self.visits([url]).get(url)

    def visits(self, urls: Iterable[str]) -> dict[str, Visit]:
        found: dict[str, Visit] = {}
        for url, values in self._fields_of(urls, _VISIT_FIELDS):
            due, interval, checked, changed, digest = (_int(v) for v in values)
            if due is not None and interval is not None and checked is not None:
                found[url] = Visit(due, interval, checked, changed, digest)
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
        keys = [self._row(url), f"{self.prefix}:fp", f"{self.prefix}:pages"]
        args = [url_key(url), url, validators.etag, validators.last_modified, listed, hashed]
        args += [when, source, fingerprint, f"{self.prefix}:src:"]
        self._pending.append((self._export, keys, [_arg(a) for a in args]))

    def record_seen(
        self,
        url: str,
        validators: Validators | None,
        listed: int | None,
        source: str | None,
        document: bool = False,
    ) -> None:
        etag = validators.etag if validators else None
        modified = validators.last_modified if validators else None
        keys = [self._row(url), f"{self.prefix}:pages"]
        args = [url_key(url), url, etag, modified, listed, int(document), source]
        args.append(f"{self.prefix}:src:")
        self._pending.append((self._seen, keys, [_arg(a) for a in args]))

    def mark_gone(self, url: str) -> None:
        self._pending.append((self._gone, [self._row(url)], []))

    def unlist(self, urls: Iterable[str]) -> None:
        urls = list(urls)
        for start in range(0, len(urls), _CHUNK):
            chunk = urls[start : start + _CHUNK]
            args = [f"{self.prefix}:src:", *(str(url_key(u)) for u in chunk)]
            self._pending.append((self._unlist, [self._row(u) for u in chunk], args))

    def record_visit(self, url: str, visit: Visit) -> None:
        self._pending.append((None, [self._row(url)], [_arg(v) for v in _visit_values(visit)]))

    @property
    def pending(self) -> int:
        return len(self._pending)

    def commit(self) -> None:
        """Apply the buffered writes in one ``MULTI``/``EXEC``: all of them, or none."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        try:
            pipe = self.client.pipeline(transaction=True)
            for script, keys, args in pending:
                if script is None:
                    _queue_visit(pipe, keys[0], args)
                else:
                    script(keys=keys, args=args, client=pipe)
            pipe.execute()
        except RedisError as exc:
            raise StateUnavailable(f"crawl state {self.path}: {exc}") from exc

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


def _visit_values(visit: Visit) -> tuple[int | None, ...]:
    return (visit.due, visit.interval, visit.checked, visit.changed, visit.digest)


def _queue_visit(pipe: Any, row: str, args: list[str]) -> None:
    """A schedule row replaced (``INSERT OR REPLACE``): fields without a value deleted."""
    values = dict(zip(_VISIT_FIELDS, args, strict=True))
    pipe.hset(row, mapping={f: v for f, v in values.items() if v != ""})
    empty = [f for f, v in values.items() if v == ""]
    if empty:
        pipe.hdel(row, *empty)


def _record(values: list[bytes | None]) -> UrlRecord | None:
    url, etag, lm, listed, hashed, first, last, rev, gone, src, fp = values
    if url is None:
        return None
    return UrlRecord(
        url.decode("utf-8", "surrogatepass"),
        _text(etag),
        _int(lm),
        _int(listed),
        _int(hashed),
        _int(first),
        _int(last),
        _int(rev) or 0,
        gone == b"1",
        _text(src),
        _text(fp),
    )
