"""``maintext state NAME -s REDIS_URL=...``: what a crawl state kept in Redis holds, per
site, and dropping a site's rows (Scrapy-free).

The same numbers as for a state file (:mod:`~scrapy_maintext.state.overview`), counted
from the rows (one ``SCAN`` and an ``MGET`` per 500 rows; nothing is written). Forgetting a
site is refused while a crawl holds the state (a worker's ``P:held:<worker>`` key, renewed
with its heartbeat): the crawl would write the rows again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING

from scrapy_maintext.state.overview import DAY, SiteOverview, matching_sites, site_overview
from scrapy_maintext.state.redis.keys import check_meta, check_name, decode, state_prefix, text
from scrapy_maintext.state.schedule import SchedulePolicy, due_at
from scrapy_maintext.state.sqlite_schema import prefix_length
from scrapy_maintext.state.store import CrawlStateError, url_key

if TYPE_CHECKING:
    from redis import Redis

_CHUNK = 500


class RedisStateView:
    """The state ``name`` in the Redis of ``client``, as ``maintext state`` reads it;
    :class:`CrawlStateError` (one line) when no such state is there, or its keys are no
    crawl state's."""

    def __init__(self, client: Redis, name: str, where: str, older: bool = False) -> None:
        check_name(name)
        self.client = client
        self.name = name
        self.prefix = state_prefix(name)
        self.path = f"{name} (Redis {where})"
        if not check_meta(client, self.prefix, self.path, create=False, older=older):
            raise CrawlStateError(f"crawl state {self.path} does not exist")

    def upgrade(self) -> int:
        """The state brought to this version's schema (``--upgrade``): the rows rewritten."""
        from scrapy_maintext.state.redis.upgrade import upgrade

        schema = int(self.client.hget(f"{self.prefix}:meta", "schema") or 0)
        return upgrade(self.client, self.prefix, self.path, schema)

    def rows(self) -> Iterator[tuple[str, dict[str, str]]]:
        """Every row (its key, its fields); damaged ones are left out."""
        keys = [
            text(k) or "" for k in self.client.scan_iter(match=f"{self.prefix}:u:*", count=1000)
        ]
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            for key, value in zip(chunk, self.client.mget(chunk), strict=True):
                row = decode(value) if value is not None else None
                if row is not None and "u" in row:
                    yield key, row

    def holders(self) -> int:
        """Workers of a crawl holding the state now."""
        return sum(1 for _ in self.client.scan_iter(match=f"{self.prefix}:held:*", count=1000))

    def overview(self, now: int, policy: SchedulePolicy | None = None) -> list[SiteOverview]:
        """Every site of the state, in name order (as :func:`overview` counts a file's)."""
        policy = policy or SchedulePolicy()
        counts: dict[str, list[int]] = defaultdict(lambda: [0] * 7)
        last: dict[str, int | None] = {}
        for _, row in self.rows():
            site = _site(row["u"])
            _count(counts[site], row, now, policy)
            checked = int(row["ck"]) if "ck" in row else None
            if checked is not None:
                last[site] = max(checked, last.get(site) or checked)
        return [site_overview(site, counts[site], last.get(site)) for site in sorted(counts)]

    def forget(self, site: str) -> tuple[list[str], int]:
        """Drop the rows of ``site``'s URLs (their schedule is in them): the sites matched,
        and the URLs dropped. :class:`CrawlStateError` while a crawl holds the state;
        ValueError naming the known sites when none matches."""
        rows = list(self.rows())
        names = sorted({_site(row["u"]) for _, row in rows})
        matched = matching_sites(names, site)
        if not matched:
            known = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            raise ValueError(f"no site {site} in {self.path} (its sites: {known or 'none'})")
        holders = self.holders()
        if holders:
            raise CrawlStateError(
                f"crawl state {self.path} is in use by a crawl ({holders} worker"
                f"{'' if holders == 1 else 's'}); --forget waits for no crawl: run it after"
            )
        dropped = [(key, row) for key, row in rows if _site(row["u"]) in matched]
        for start in range(0, len(dropped), _CHUNK):
            pipe = self.client.pipeline(transaction=True)
            for key, row in dropped[start : start + _CHUNK]:
                pipe.delete(key)
                if "s" in row:
                    pipe.srem(f"{self.prefix}:src:{row['s']}", str(url_key(row["u"])))
                if "d" not in row:
                    pipe.decr(f"{self.prefix}:pages")
            pipe.execute()
        # Its robots.txt too: the next run asks the site as a new one.
        for name in matched:
            self.client.delete(f"{self.prefix}:robots:{url_key(name + '/robots.txt')}")
        return matched, len(dropped)


def _site(url: str) -> str:
    return url[: prefix_length(url)]


def _count(counts: list[int], row: dict[str, str], now: int, policy: SchedulePolicy) -> None:
    """One row added to a site's counts (known, listings, due now, due in 24 h, changed in
    24 h, gone, revisions), by the rule of the file's query."""
    due = int(row["du"]) if "du" in row else None
    checked = int(row["ck"]) if "ck" in row else None
    scheduled = "g" not in row and "l" not in row
    due_now = scheduled and due_at(policy, due, checked, now)
    due_later = scheduled and not due_now and due_at(policy, due, checked, now + DAY)
    when = row.get("ch") if "d" in row else row.get("x")
    changed = when is not None and int(when) >= now - DAY
    added = (1, "d" in row, due_now, due_later, changed, "g" in row, int(row.get("r", 0)))
    for i, value in enumerate(added):
        counts[i] += int(value)
