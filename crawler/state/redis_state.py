"""A crawl state kept in Redis (``REDIS_URL`` with ``CRAWL_STATE=NAME``), shared by the
workers of a distributed recurring crawl.

Scrapy-free. The same rows as the SQLite file (:mod:`~scrapy_maintext.state.crawl_state`),
under ``maintext:state:NAME`` (``P``):

- ``P:meta`` what the keys are (``kind``, ``schema``): keys of anything else are refused;
- ``P:u:<key>`` one string per URL (``key`` as in the SQLite file), a JSON object of text
  fields (:data:`FIELDS`; 64-bit numbers do not survive Lua's doubles): about 300 bytes of
  Redis memory a URL where one hash of them took 1.5 kB (its URL is longer than a compact
  hash's 64-byte values);
- ``P:src:<sitemap URL>`` the keys of the URLs that sitemap listed last;
- ``P:pages`` how many rows are pages (not sitemaps or feeds);
- ``P:near:count``, ``P:near:<distance>:<band>:<value>`` the near-duplicate fingerprints
  (:mod:`scrapy_maintext.distributed.fingerprints`).

A name may hold ':', so ``P:*`` also matches the keys of a state named ``NAME:de``;
:func:`state_keys` finds one state's keys exactly.

Writes are buffered and applied at :meth:`RedisCrawlState.commit` in one ``MULTI``/``EXEC``
of Lua scripts (each reads, changes and writes a row inside Redis), all or none: a killed
worker loses at most its uncommitted window and never claims an export it did not make. Two
workers may write the same URL: the last one wins, and revisions only go up (counted inside
the script). Reads see what is committed.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
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

logger = logging.getLogger(__name__)

KIND = "scrapy-maintext crawl state"
SCHEMA = 1
KEY_PREFIX = "maintext:state:"
#: What a state's name may hold: a name, not a path (a file path here is a mistake).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
_CHUNK = 500
#: A row's fields: url, ETag, Last-Modified, listed date, text hash, first and last export,
#: revision, gone ("1"), a sitemap or feed ("1"), the sitemap that listed it, fingerprint;
#: its schedule: due, interval, checked, changed, body digest.
FIELDS = ("u", "e", "m", "l", "h", "f", "x", "r", "g", "d", "s", "p", "du", "iv", "ck", "ch", "dg")
#: The fields that hold numbers (as text).
_NUMBERS = ("m", "l", "h", "f", "x", "r", "du", "iv", "ck", "ch", "dg")
#: The counters beside the rows: a key of another type, or text that is no number, is
#: refused when the state opens (Redis's INCR would fail on every commit).
COUNTERS = ("pages", "near:count")

#: Lua helpers: a row read and written, a field set or deleted (``''`` is none), a URL
#: moved to the sitemap that lists it now.
_LIB = """
local function load(k)
  local v = redis.pcall('GET', k)
  if type(v) ~= 'string' then return {}, type(v) == 'table' end
  local ok, r = pcall(cjson.decode, v)
  if not ok or type(r) ~= 'table' then return {}, true end
  for _, x in pairs(r) do if type(x) ~= 'string' then return {}, true end end
  return r, false
end
local function save(k, r) redis.call('SET', k, cjson.encode(r)) end
local function put(r, f, v) if v == '' then r[f] = nil else r[f] = v end end
local function source(r, key, new, prefix)
  if new == '' then return end
  if r.s and r.s ~= new then redis.call('SREM', prefix .. r.s, key) end
  r.s = new
  redis.call('SADD', prefix .. new, key)
end
"""


def _on_row(change: str) -> str:
    """A script that reads the row ``KEYS[1]`` as ``r``, runs ``change`` and writes it back
    (a ``change`` that returns writes nothing); ``damaged``: the key held no row (a row
    damaged by hand, counted in ``pages`` before, is not counted again)."""
    return f"{_LIB}\nlocal r, damaged = load(KEYS[1])\n{change}\nsave(KEYS[1], r)\n"


#: KEYS: the URL's row, the page count. ARGV: key, url, etag, last-modified, listed, text
#: hash, now, source, fingerprint, sitemap-set prefix.
_EXPORT = _on_row("""
if (not r.u and not damaged) or r.d then redis.call('INCR', KEYS[2]) end
r.u = ARGV[2]; r.h = ARGV[6]; r.x = ARGV[7]; r.g = nil; r.d = nil
put(r, 'e', ARGV[3]); put(r, 'm', ARGV[4]); put(r, 'l', ARGV[5]); put(r, 'p', ARGV[9])
if not r.f then r.f = ARGV[7] end
r.r = tostring((tonumber(r.r) or 0) + 1)
source(r, ARGV[1], ARGV[8], ARGV[10])""")
#: KEYS: the URL's row, the page count. ARGV: key, url, etag, last-modified, listed, '1' =
#: a document, source, sitemap-set prefix. Keeps what is not given (``coalesce``).
_SEEN = _on_row("""
if not r.u then
  r.u = ARGV[2]; r.r = '0'
  if ARGV[6] == '1' then r.d = '1' elseif not damaged then redis.call('INCR', KEYS[2]) end
end
for i, f in ipairs({'e', 'm', 'l'}) do if ARGV[i + 2] ~= '' then r[f] = ARGV[i + 2] end end
r.g = nil
source(r, ARGV[1], ARGV[7], ARGV[8])""")
#: KEYS: the URL's row (a URL not remembered stays so).
_GONE = _on_row("if not r.u then return end\nr.g = '1'")
#: KEYS: a sitemap's row: its validators and listed date are forgotten (read again).
_REREAD = _on_row("if not r.u then return end\nr.e = nil; r.m = nil; r.l = nil")
#: KEYS: the URL's row. ARGV: due, interval, checked, changed, digest (replaced).
_VISIT = _on_row("""
r.du = ARGV[1]; r.iv = ARGV[2]; r.ck = ARGV[3]
put(r, 'ch', ARGV[4]); put(r, 'dg', ARGV[5])""")
#: KEYS: rows. ARGV: sitemap-set prefix, then the rows' keys.
_UNLIST = (
    _LIB
    + """
for i, k in ipairs(KEYS) do
  local r = load(k)
  if r.s then
    redis.call('SREM', ARGV[1] .. r.s, ARGV[i + 1])
    r.s = nil
    save(k, r)
  end
end
"""
)


def _arg(value: object) -> str:
    return "" if value is None else str(value)


def _int(value: str | None) -> int | None:
    return None if value is None else int(value)


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
        #: What a Redis that stopped answering is called (as the crawl's breaker names it).
        self.server = f"Redis {where}" if where else "Redis"
        #: Keys of rows that are not rows (damaged by hand): skipped, their URLs new.
        self.skipped: set[str] = set()
        #: Sitemaps whose listing held such a row: the next run reads them whole.
        self._reread: set[str] = set()
        self._pending: list[tuple[Any, list[str], list[str]]] = []
        self._export = client.register_script(_EXPORT)
        self._seen = client.register_script(_SEEN)
        self._gone = client.register_script(_GONE)
        self._unlist = client.register_script(_UNLIST)
        self._visit = client.register_script(_VISIT)
        self._reread_script = client.register_script(_REREAD)
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
        try:
            schema = int(found.get(b"schema", b"0"))
        except ValueError:
            raise CrawlStateError(
                f"crawl state {self.path}: the schema in {meta} is not a number"
            ) from None
        for counter in COUNTERS:
            self._check_counter(f"{self.prefix}:{counter}")
        if schema > SCHEMA:
            raise CrawlStateError(
                f"crawl state {self.path} has schema {schema}, newer than this version of "
                f"scrapy-maintext reads ({SCHEMA}); upgrade, or use another name"
            )

    def _check_counter(self, key: str) -> None:
        kind = _text(self.client.type(key))
        value = self.client.get(key) if kind == "string" else b"0"
        if kind in ("none", "string") and (_text(value) or "").lstrip("-").isdigit():
            return
        raise CrawlStateError(
            f"crawl state {self.path}: {key} is not a count; delete that key (or use another name)"
        )

    def _row(self, url: str) -> str:
        return f"{self.prefix}:u:{url_key(url)}"

    # Reading: what is committed.

    def _fail(self, exc: RedisError) -> StateUnavailable:
        """``exc`` as the state's failure; a Redis that stopped answering is named as such."""
        lost = isinstance(exc, (RedisConnectionError, RedisTimeoutError))
        what = self.server if lost else ""
        return StateUnavailable(f"crawl state {self.path}: {exc}", str(exc), what)

    def _rows(self, keys: list[str]) -> Iterator[dict[str, str] | None]:
        """The rows of ``keys`` (None where there is none, or what is no row), a round trip
        per 500."""
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            try:
                values = self.client.mget(chunk)
            except RedisError as exc:
                raise self._fail(exc) from exc
            for key, value in zip(chunk, values, strict=True):
                row = _decode(value) if value is not None else None
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

    def get(self, url: str) -> UrlRecord | None:
        return self.get_many([url]).get(url)

    def _rows_of(self, urls: Iterable[str]) -> Iterator[tuple[str, dict[str, str]]]:
        """Each of ``urls`` that has a row, with it."""
        wanted = list(dict.fromkeys(urls))
        for url, row in zip(wanted, self._rows([self._row(u) for u in wanted]), strict=True):
            if row is not None:
                yield url, row

    def get_many(self, urls: Iterable[str]) -> dict[str, UrlRecord]:
        return {url: _record(row) for url, row in self._rows_of(urls) if row.get("u") == url}

    def listed_by(
        self, source_url: str, documents: bool = False, undated: bool = False
    ) -> list[str]:
        try:
            keys = sorted(self.client.smembers(f"{self.prefix}:src:{source_url}"))
        except RedisError as exc:
            raise self._fail(exc) from exc
        found = []
        skipped = len(self.skipped)
        for row in self._rows([f"{self.prefix}:u:{_text(k)}" for k in keys]):
            if row is None or "u" not in row or "g" in row or ("d" in row) != documents:
                continue
            if not undated or "l" not in row:
                found.append(row["u"])
        if len(self.skipped) > skipped:
            # A damaged row hides a URL it listed: the next run reads it whole again.
            self._reread.add(source_url)
            self._pending.append((self._reread_script, [self._row(source_url)], []))
        return found

    def fingerprints(self) -> Iterator[str]:
        """Every page row is read (a distributed crawl keeps its fingerprints in the shared
        index instead, and does not call this)."""
        try:
            keys = [
                _text(k) or ""
                for k in self.client.scan_iter(match=f"{self.prefix}:u:*", count=1000)
            ]
        except RedisError as exc:
            raise self._fail(exc) from exc
        for row in self._rows(keys):
            if row is not None and "p" in row:
                yield row["p"]

    def known_pages(self) -> int:
        try:
            return int(self.client.get(f"{self.prefix}:pages") or 0)
        except RedisError as exc:
            raise self._fail(exc) from exc

    def visit(self, url: str) -> Visit | None:
        return self.visits([url]).get(url)

    def visits(self, urls: Iterable[str]) -> dict[str, Visit]:
        return {url: _visit(row) for url, row in self._rows_of(urls) if "du" in row}

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
        keys = [self._row(url), f"{self.prefix}:pages"]
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
        if url in self._reread:
            validators = listed = None  # not remembered: the next run reads it whole
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
        values = (visit.due, visit.interval, visit.checked, visit.changed, visit.digest)
        self._pending.append((self._visit, [self._row(url)], [_arg(v) for v in values]))

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
                script(keys=keys, args=args, client=pipe)
            pipe.execute()
        except RedisError as exc:
            raise self._fail(exc) from exc

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


#: The keys of one state past its prefix (names may hold ':': ``news:de`` is another state,
#: and none of its keys matches this after ``news:``).
_OWN_KEYS = r"(meta|pages|u:-?[0-9]+|src:[a-z]+://.*|near:count|near:[0-9]+:[0-9]+:[0-9a-f]+)"


def key_pattern(name: str) -> re.Pattern[str]:
    """The keys of the state ``name``, exactly (docs/crawling.md has it for ``grep -E``)."""
    return re.compile(f"^{re.escape(KEY_PREFIX + name)}:{_OWN_KEYS}$")


def state_keys(client: Redis, name: str) -> list[str]:
    """Every key of the state ``name`` (none of a state whose name only begins with it)."""
    pattern = key_pattern(name)
    found = (_text(k) or "" for k in client.scan_iter(match=f"{KEY_PREFIX}{name}:*", count=1000))
    return [key for key in found if pattern.match(key)]


def _text(value: bytes | str | None) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value


def _decode(value: bytes | str) -> dict[str, str] | None:
    """A row, or None when ``value`` is none (not JSON, a field that is no text, a number
    field that is no number, a schedule without its interval)."""
    try:
        row = json.loads(value)
    except ValueError:
        return None
    if not isinstance(row, dict) or not all(isinstance(v, str) for v in row.values()):
        return None
    if not all(row[f].lstrip("-").isdigit() for f in _NUMBERS if f in row):
        return None
    if "du" in row and not ("iv" in row and "ck" in row):
        return None
    return row


def _visit(row: dict[str, str]) -> Visit:
    due, interval, checked = int(row["du"]), int(row["iv"]), int(row["ck"])
    return Visit(due, interval, checked, _int(row.get("ch")), _int(row.get("dg")))


def _record(row: dict[str, str]) -> UrlRecord:
    return UrlRecord(
        row["u"],
        row.get("e"),
        _int(row.get("m")),
        _int(row.get("l")),
        _int(row.get("h")),
        _int(row.get("f")),
        _int(row.get("x")),
        int(row.get("r", 0)),
        "g" in row,
        row.get("s"),
        row.get("p"),
    )
