"""What a crawl state holds, per site, and dropping a site's rows (``maintext state``).

Scrapy-free. A site is a URL's scheme and host (``https://example.org``, with its port if
any). Looking never writes: the file is opened read-only, so it can be read while a crawl
runs on it. A file of another schema is not read (an older one is migrated by the next
crawl that opens it); forgetting a site takes the file's lock, as a crawl does.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from scrapy_maintext.state.crawl_state import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    CrawlState,
    CrawlStateError,
    check_head,
    check_state_file,
)

DAY = 86_400


@dataclass(frozen=True)
class SiteOverview:
    """One site's rows. Due counts are of the URLs revisited on a schedule (sitemaps and
    feeds, and pages listed without a date); a page listed with a date is requested when
    its sitemap or feed lists it with a newer one."""

    site: str
    #: URLs remembered: pages, and sitemaps and feeds (``documents``).
    known: int
    documents: int
    due_now: int
    due_24h: int
    #: Pages exported (new or changed), sitemaps and feeds read changed, in the last day.
    changed_24h: int
    gone: int
    #: Documents exported over all runs (a page's revisions summed).
    revisions: int
    #: The last visit of any of its URLs (epoch s), if any.
    last_visit: int | None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


_QUERY = """
SELECT n.name,
    count(*),
    sum(u.document),
    sum(u.gone = 0 AND u.listed IS NULL AND (s.due IS NULL OR s.due <= :now)),
    sum(u.gone = 0 AND u.listed IS NULL AND s.due > :now AND s.due <= :now + 86400),
    sum(CASE WHEN u.document THEN s.changed >= :now - 86400
        ELSE u.last_export >= :now - 86400 END),
    sum(u.gone),
    sum(u.revision),
    max(s.checked)
FROM urls u JOIN names n ON n.id = u.host LEFT JOIN schedule s ON s.key = u.key
GROUP BY u.host ORDER BY n.name
"""


@contextlib.contextmanager
def reading(path: str | Path) -> Iterator[sqlite3.Connection]:
    """The state file, open read-only; :class:`CrawlStateError` (one line) when it is
    missing, not ours, corrupt, or of another schema."""
    path = Path(path)
    if path.is_dir():
        raise CrawlStateError(f"crawl state {path} is a folder")
    if not path.exists():
        raise CrawlStateError(f"crawl state {path} does not exist")
    if not path.is_file():
        raise CrawlStateError(f"crawl state {path} is not a regular file")
    check_header(path)
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise CrawlStateError(f"crawl state {path} cannot be read: {exc}") from None
    try:
        check_schema(path, db)
        yield db
    except sqlite3.DatabaseError as exc:
        raise CrawlStateError(f"crawl state {path} is corrupt: {exc}") from None
    finally:
        db.close()


def check_header(path: Path) -> None:
    try:
        with path.open("rb") as f:
            head = f.read(16)
    except OSError as exc:
        raise CrawlStateError(f"crawl state {path} cannot be read: {exc}") from None
    check_head(path, head)


def check_schema(path: Path, db: sqlite3.Connection) -> None:
    """Ours, and of this version's schema (an older one is migrated by a crawl, not here)."""
    try:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise CrawlStateError(f"crawl state {path} is corrupt: {exc}") from None
    if app_id != APPLICATION_ID:
        raise CrawlStateError(f"crawl state {path} is not a crawl state file")
    if version > SCHEMA_VERSION:
        raise CrawlStateError(
            f"crawl state {path} has schema {version}, newer than this version of "
            f"scrapy-maintext reads ({SCHEMA_VERSION}); upgrade scrapy-maintext"
        )
    if version < SCHEMA_VERSION:
        raise CrawlStateError(
            f"crawl state {path} has schema {version}, of an older scrapy-maintext: the next "
            f"crawl with CRAWL_STATE={path} upgrades it to schema {SCHEMA_VERSION}"
        )


def overview(db: sqlite3.Connection, now: int) -> list[SiteOverview]:
    """Every site of the state, in name order."""
    rows = db.execute(_QUERY, {"now": now}).fetchall()
    return [_site(row[0], [int(n or 0) for n in row[1:8]], row[8]) for row in rows]


def total(sites: list[SiteOverview]) -> SiteOverview:
    """The sites' sums (the last visit: the latest)."""
    names = [f.name for f in fields(SiteOverview)][1:-1]
    sums = [sum(getattr(s, name) for s in sites) for name in names]
    last = max((s.last_visit for s in sites if s.last_visit is not None), default=None)
    return _site(f"total ({len(sites)} site{'' if len(sites) == 1 else 's'})", sums, last)


def _site(name: str, counts: list[int], last: int | None) -> SiteOverview:
    known, documents, due_now, due_24h, changed, gone, revisions = counts
    return SiteOverview(name, known, documents, due_now, due_24h, changed, gone, revisions, last)


def matching_sites(names: list[str], site: str) -> list[str]:
    """The sites named by ``site``: a base URL (``https://example.org``), or a host
    (``example.org``, any scheme and port)."""
    wanted = site.strip().rstrip("/")
    if "://" in wanted:
        return [name for name in names if name == wanted]
    return [n for n in names if n.split("://", 1)[-1].split(":")[0] == wanted.split(":")[0]]


def forget(path: str | Path, site: str) -> tuple[list[str], int]:
    """Drop the rows of ``site``'s URLs (their schedule too): the sites matched, and the
    URLs dropped. Raises :class:`CrawlStateError` when the file cannot be used (in use by a
    crawl: one at a time) and ValueError naming the known sites when none matches."""
    with reading(path) as db:
        names = [s.site for s in overview(db, 0)]
    matched = matching_sites(names, site)
    if not matched:
        known = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise ValueError(f"no site {site} in {path} (its sites: {known or 'none'})")
    check_state_file(path)
    with CrawlState(path) as state:
        marks = ",".join("?" * len(matched))
        hosts = f"(SELECT id FROM names WHERE name IN ({marks}))"
        state.db.execute(
            f"DELETE FROM schedule WHERE key IN (SELECT key FROM urls WHERE host IN {hosts})",
            matched,
        )
        dropped = state.db.execute(f"DELETE FROM urls WHERE host IN {hosts}", matched).rowcount
        state.wrote()
        state.commit()
    return matched, dropped
