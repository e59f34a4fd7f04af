"""The keys of a crawl state kept in Redis, and what each must hold (Scrapy-free).

Under ``maintext:state:NAME`` (``P``; the layout is described in
:mod:`~scrapy_maintext.state.redis_state`). Every key is checked before it is used: ``P:meta``
and the counters when the state opens (refused in one line: :class:`CrawlStateError`),
rows and listings as they are read (a damaged one is skipped and counted, never a
traceback).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from scrapy_maintext.state.store import CrawlStateError, RobotsCopy, UrlRecord, Visit
from scrapy_maintext.state.validators import Validators

if TYPE_CHECKING:
    from redis import Redis

KIND = "scrapy-maintext crawl state"
SCHEMA = 1
KEY_PREFIX = "maintext:state:"
#: What a state's name may hold: a name, not a path (a file path here is a mistake).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
#: A row's fields: url, ETag, Last-Modified, listed date, text hash, first and last export,
#: revision, gone ("1"), a sitemap or feed ("1"), the sitemap that listed it, fingerprint;
#: its schedule: due, interval, checked, changed, body digest.
FIELDS = ("u", "e", "m", "l", "h", "f", "x", "r", "g", "d", "s", "p", "du", "iv", "ck", "ch", "dg")
#: The fields that hold numbers (as text).
_NUMBERS = ("m", "l", "h", "f", "x", "r", "du", "iv", "ck", "ch", "dg")
#: The counters beside the rows: a key of another type, or text that is no number, is
#: refused when the state opens (Redis's INCR would fail on every commit).
COUNTERS = ("pages", "near:count")

#: The keys of one state past its prefix (names may hold ':': ``news:de`` is another state,
#: and none of its keys matches this after ``news:``). ``held:<worker>``: a crawl holds it.
_OWN_KEYS = (
    r"(meta|pages|u:-?[0-9]+|src:[a-z]+://.*|held:.+|robots:-?[0-9]+|near:count"
    r"|near:[0-9]+:(h?[0-9]+:[0-9a-f]+|v2))"
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


def check_meta(client: Redis, prefix: str, path: str, create: bool = True) -> bool:
    """Refuse keys that are not a crawl state of ours, or of a newer schema (one line); the
    counters are checked too. Whether the state exists (with ``create``, it does now)."""
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


def _int(value: str | None) -> int | None:
    return None if value is None else int(value)


def visit_of(row: dict[str, str]) -> Visit:
    due, interval, checked = int(row["du"]), int(row["iv"]), int(row["ck"])
    return Visit(due, interval, checked, _int(row.get("ch")), _int(row.get("dg")))


def record_of(row: dict[str, str]) -> UrlRecord:
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
