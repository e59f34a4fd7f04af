"""The keys of a crawl state kept in Redis, and what each must hold (Scrapy-free).

Under ``maintext:state:NAME`` (``P``; the layout is described in
:mod:`~scrapy_maintext.state.redis.state`). Every key is checked before it is used: ``P:meta``
and the counters when the state opens (refused in one line: :class:`CrawlStateError`),
rows and listings as they are read (a damaged one is skipped and counted, never a
traceback).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy_maintext.state.store import CrawlStateError, RobotsCopy, UrlRecord, Visit
from scrapy_maintext.state.validators import Validators

if TYPE_CHECKING:
    from redis import Redis
    from redis.exceptions import RedisError

KIND = "scrapy-maintext crawl state"
#: 2: a row is a JSON array in :data:`FIELDS` order (small numbers as numbers, ``""`` for
#: none, trailing ones left out) and names its sitemap by a number (``P:src``); 1: a JSON
#: object of every field, the sitemap's URL in it and in its listing's key.
SCHEMA = 2
KEY_PREFIX = "maintext:state:"
#: What a state's name may hold: a name, not a path (a file path here is a mistake).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
#: A row's fields: url, ETag, Last-Modified, listed date, text hash, first and last export,
#: revision, gone ("1"), a sitemap or feed ("1"), the sitemap that listed it, fingerprint;
#: its schedule: due, interval, checked, changed, body digest.
FIELDS = ("u", "e", "m", "l", "h", "f", "x", "r", "g", "d", "s", "p", "du", "iv", "ck", "ch", "dg")
#: The fields that hold numbers (as text).
_NUMBERS = ("m", "l", "h", "f", "x", "r", "du", "iv", "ck", "ch", "dg")
_NUMBER_FIELDS = frozenset(_NUMBERS)
#: The fields stored as JSON numbers when they fit in 14 digits (Lua's ``cjson`` writes
#: 14 significant digits): times, counts, flags and sitemap numbers; the text hash and the
#: body digest are 64-bit (text).
SMALL_NUMBERS = frozenset(("m", "l", "f", "x", "r", "g", "d", "s", "du", "iv", "ck", "ch"))
#: The counters beside the rows: a key of another type, or text that is no number, is
#: refused when the state opens (Redis's INCR would fail on every commit).
COUNTERS = ("pages", "near:count")

#: The keys of one state past its prefix (names may hold ':': ``news:de`` is another state,
#: and none of its keys matches this after ``news:``). ``held:<worker>``: a crawl holds it.
#: ``src``: the sitemaps' numbers, ``srcid`` their URLs, ``src:<number>`` a listing
#: (``src:<sitemap URL>``: a listing of schema 1, before ``maintext state --upgrade``).
_OWN_KEYS = (
    r"(meta|pages|u:-?[0-9]+|src|srcid|src:[0-9]+|src:[a-z]+://.*|held:.+|robots:-?[0-9]+"
    r"|near:count|near:[0-9]+:(h?[0-9]+:[0-9a-f]+|v2))"
)


def check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise CrawlStateError(
            f"crawl state {name!r}: with REDIS_URL, CRAWL_STATE names a state kept in Redis "
            "(letters, digits and . _ : -, not a file path)"
        )


def state_prefix(name: str) -> str:
    return f"{KEY_PREFIX}{name}"


def key_pattern(name: str) -> re.Pattern[str]:
    """The keys of the state ``name``, exactly (docs/crawling.md has it for ``grep -E``)."""
    return re.compile(f"^{re.escape(KEY_PREFIX + name)}:{_OWN_KEYS}$")


def state_keys(client: Redis, name: str) -> list[str]:
    """Every key of the state ``name`` (none of a state whose name only begins with it)."""
    pattern = key_pattern(name)
    found = (text(k) or "" for k in client.scan_iter(match=f"{KEY_PREFIX}{name}:*", count=1000))
    return [key for key in found if pattern.match(key)]


def text(value: bytes | str | None) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value


def check_meta(
    client: Redis, prefix: str, path: str, create: bool = True, older: bool = False
) -> bool:
    """Refuse keys that are not a crawl state of ours, or of another schema (one line; an
    older one is read with ``older``, by the upgrade); the counters are checked too. Whether
    the state exists (with ``create``, it does now)."""
    meta = f"{prefix}:meta"
    kind = text(client.type(meta))
    if kind not in ("none", "hash"):
        raise CrawlStateError(f"crawl state {path}: {meta} is not a crawl state")
    found = client.hgetall(meta)
    if not found:
        if create:
            client.hset(meta, mapping={"kind": KIND, "schema": SCHEMA})
        return create
    if found.get(b"kind") != KIND.encode():
        raise CrawlStateError(f"crawl state {path}: {meta} is not a crawl state")
    try:
        schema = int(found.get(b"schema", b"0"))
    except ValueError:
        raise CrawlStateError(f"crawl state {path}: the schema in {meta} is not a number") from None
    for counter in COUNTERS:
        check_counter(client, f"{prefix}:{counter}", path)
    if schema > SCHEMA:
        raise CrawlStateError(
            f"crawl state {path} has schema {schema}, newer than this version of "
            f"scrapy-maintext reads ({SCHEMA}); upgrade, or use another name"
        )
    if schema < SCHEMA and not older:
        raise CrawlStateError(
            f"crawl state {path} has schema {schema}, written by an earlier version: "
            f"bring it to schema {SCHEMA} with `maintext state {path.split(' ')[0]} "
            "--upgrade` and the crawl's -s REDIS_URL (no crawl may hold it meanwhile)"
        )
    return True


def check_counter(client: Redis, key: str, path: str) -> None:
    kind = text(client.type(key))
    value = client.get(key) if kind == "string" else b"0"
    if kind in ("none", "string") and (text(value) or "").lstrip("-").isdigit():
        return
    raise CrawlStateError(
        f"crawl state {path}: {key} is not a count; delete that key (or use another name)"
    )


def decode(value: bytes | str) -> dict[str, str] | None:
    """A row, or None when ``value`` is none (not a JSON array of :data:`FIELDS`, a value
    that is no text or whole number, a number field that is no number, a schedule without
    its interval)."""
    try:
        found = json.loads(value)
    except ValueError:
        return None
    if not isinstance(found, list) or not 0 < len(found) <= len(FIELDS):
        return None
    row = {}
    for field, item in zip(FIELDS, found, strict=False):
        if type(item) is int:
            row[field] = str(item)
        elif type(item) is not str:
            return None
        elif item:
            # A whole number given as a number needs no look; one given as text does.
            if field in _NUMBER_FIELDS and not item.lstrip("-").isdigit():
                return None
            row[field] = item
    return row if "du" not in row or ("iv" in row and "ck" in row) else None


def _valid(row: dict[str, str]) -> bool:
    if not all(row[f].lstrip("-").isdigit() for f in _NUMBERS if f in row):
        return False
    return "du" not in row or ("iv" in row and "ck" in row)


def decode_v1(value: bytes | str) -> dict[str, str] | None:
    """A row of schema 1 (a JSON object of text fields), or None (as :func:`decode`)."""
    try:
        row = json.loads(value)
    except ValueError:
        return None
    if not isinstance(row, dict) or not all(isinstance(v, str) for v in row.values()):
        return None
    return row if set(row) <= set(FIELDS) and _valid(row) else None


def encode(row: dict[str, str]) -> str:
    """A row as schema 2 stores it (what the scripts' ``save`` writes)."""
    items: list[str | int] = []
    for field in FIELDS:
        value = row.get(field)
        if value is None or value == "":
            items.append("")
        elif field in SMALL_NUMBERS and len(value) <= 14 and value.lstrip("-").isdigit():
            items.append(int(value))
        else:
            items.append(value)
    while len(items) > 1 and items[-1] == "":
        items.pop()
    return json.dumps(items, ensure_ascii=False, separators=(",", ":"))


def _int(value: str | None) -> int | None:
    return None if value is None else int(value)


def visit_of(row: dict[str, str]) -> Visit:
    due, interval, checked = int(row["du"]), int(row["iv"]), int(row["ck"])
    return Visit(due, interval, checked, _int(row.get("ch")), _int(row.get("dg")))


def record_of(row: dict[str, str], source: str | None) -> UrlRecord:
    """The row's record; ``source``: the URL of the sitemap its ``s`` numbers."""
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
        source,
        row.get("p"),
    )


def robots_copy_of(found: dict[Any, Any], url: str) -> RobotsCopy | None:
    """The kept robots.txt in a hash, None when there is none or it is damaged."""
    try:
        if text(found.get(b"u")) != url:
            return None
        etag = text(found.get(b"e")) or None
        modified = found.get(b"m") or None
        validators = Validators(etag, int(modified) if modified else None)
        status, checked, fresh_for = (int(found[k]) for k in (b"st", b"ck", b"ff"))
        return RobotsCopy(url, status, bytes(found[b"b"]), validators, checked, fresh_for)
    except (KeyError, ValueError):
        return None


class SitemapNumbers:
    """The numbers of a state's sitemaps and feeds (``P:src``; ``P:srcid`` back to their
    URLs), read once each: a number, once given (by the scripts), never changes. A Redis
    error is raised as ``fail`` makes it."""

    def __init__(self, client: Redis, prefix: str, fail: Callable[[RedisError], Exception]) -> None:
        self.client = client
        self.prefix = prefix
        self.fail = fail
        self._numbers: dict[str, str] = {}
        self._urls: dict[str, str] = {}

    def url(self, number: str | None) -> str | None:
        """The URL of the sitemap numbered ``number``."""
        if number is None:
            return None
        return self._looked_up(self._urls, self._numbers, f"{self.prefix}:srcid", number)

    def number(self, url: str) -> str | None:
        """The number of the sitemap ``url``; None while it listed nothing."""
        return self._looked_up(self._numbers, self._urls, f"{self.prefix}:src", url)

    def _looked_up(
        self, known: dict[str, str], back: dict[str, str], key: str, field: str
    ) -> str | None:
        """``field`` of the hash ``key``, kept in ``known`` with its way back in ``back``."""
        found = known.get(field)
        if found is None:
            found = self._read(key, field)
            if found is not None:
                known[field], back[found] = found, field
        return found

    def _read(self, key: str, field: str) -> str | None:
        from redis.exceptions import RedisError

        try:
            return text(self.client.hget(key, field))
        except RedisError as exc:
            raise self.fail(exc) from exc
