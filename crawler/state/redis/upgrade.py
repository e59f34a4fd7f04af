"""A crawl state kept in Redis brought from schema 1 to this version's (``maintext state NAME
--upgrade``; Scrapy-free).

Schema 1 kept each row as a JSON object of every field, the listing sitemap's URL in it, and
each listing under ``P:src:<sitemap URL>``; schema 2 keeps a row as a JSON array and numbers
the sitemaps (:mod:`~scrapy_maintext.state.redis.keys`). A crawl refuses a state of schema 1
in one line that names this command. The upgrade refuses while a crawl holds the state; it
can be run again after it was interrupted (a row or listing already moved is left as it is),
and the schema is set last.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from scrapy_maintext.state.redis.keys import SCHEMA, decode, decode_v1, encode, text
from scrapy_maintext.state.store import CrawlStateError

if TYPE_CHECKING:
    from redis import Redis

logger = logging.getLogger(__name__)

_CHUNK = 500
#: What follows ``P:u:`` and ``P:src:`` in this state's keys (not in those of a state whose
#: name begins with this one's and a ':').
_ROW = re.compile(r"-?[0-9]+")
_SITEMAP = re.compile(r"[a-z]+://.*", re.DOTALL)


class _Numbers:
    """The sitemaps' numbers of a state (``P:src``, ``P:srcid``), given as the scripts give
    them (the counter ``sources`` of ``P:meta``)."""

    def __init__(self, client: Redis, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.known: dict[str, str] = {}

    def of(self, url: str) -> str:
        found = self.known.get(url) or text(self.client.hget(f"{self.prefix}:src", url))
        if found is None:
            found = str(self.client.hincrby(f"{self.prefix}:meta", "sources", 1))
            self.client.hset(f"{self.prefix}:src", url, found)
            self.client.hset(f"{self.prefix}:srcid", found, url)
        self.known[url] = found
        return found


def upgrade(client: Redis, prefix: str, path: str, schema: int) -> int:
    """The state under ``prefix`` (of ``schema``) brought to :data:`SCHEMA`: the rows
    rewritten (a damaged row is left as it is: a crawl skips it and writes it again)."""
    if schema >= SCHEMA:
        return 0
    held = sum(1 for _ in client.scan_iter(match=f"{prefix}:held:*", count=1000))
    if held:
        raise CrawlStateError(
            f"crawl state {path} is in use by a crawl ({held} worker"
            f"{'' if held == 1 else 's'}); --upgrade waits for no crawl: run it after"
        )
    numbers = _Numbers(client, prefix)
    _move_listings(client, prefix, numbers)
    found = (text(k) or "" for k in client.scan_iter(match=f"{prefix}:u:*", count=1000))
    keys = [k for k in found if _ROW.fullmatch(k.removeprefix(f"{prefix}:u:"))]
    rewritten = 0
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start : start + _CHUNK]
        pipe = client.pipeline(transaction=True)
        for key, value in zip(chunk, client.mget(chunk), strict=True):
            if value is None or decode(value) is not None:
                continue  # gone meanwhile, or moved by an earlier try
            row = decode_v1(value)
            if row is None:
                continue
            if "s" in row:
                row["s"] = numbers.of(row["s"])
            pipe.set(key, encode(row))
            rewritten += 1
        pipe.execute()
    client.hset(f"{prefix}:meta", "schema", SCHEMA)
    logger.info("Crawl state %s: %d rows brought to schema %d", path, rewritten, SCHEMA)
    return rewritten


def _move_listings(client: Redis, prefix: str, numbers: _Numbers) -> None:
    """Each ``P:src:<sitemap URL>`` moved to ``P:src:<its number>`` (merged into one there)."""
    old = f"{prefix}:src:"
    for key in [text(k) or "" for k in client.scan_iter(match=f"{old}*://*", count=1000)]:
        url = key.removeprefix(old)
        if not _SITEMAP.fullmatch(url):
            continue
        new = f"{old}{numbers.of(url)}"
        if text(client.type(key)) != "set":
            client.delete(key)  # damaged: a crawl finds it again from the rows
        elif client.exists(new):
            client.sunionstore(new, [new, key])
            client.delete(key)
        else:
            client.rename(key, new)
