"""What a crawl state holds, per site, and dropping a site's rows (``maintext state``).

Scrapy-free. A site is a URL's scheme and host (``https://example.org``, with its port if
any). Looking never writes: the file is opened read-only, so it can be read while a crawl
runs on it, and in a folder (or a file) that cannot be written. A file of another schema is
not read (an older one is migrated by the next crawl that opens it); forgetting a site takes
the file's lock, as a crawl does. Due counts follow the rule of a run
(:func:`~scrapy_maintext.state.schedule.due_at`, under the crawl's schedule settings).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from scrapy_maintext.state.crawl_state import CrawlState, CrawlStateError, check_state_file
from scrapy_maintext.state.schedule import SchedulePolicy, due_at
from scrapy_maintext.state.sqlite_file import check_head, unreadable
from scrapy_maintext.state.sqlite_schema import APPLICATION_ID, SCHEMA_VERSION
from scrapy_maintext.state.store import url_key

DAY = 86_400


@dataclass(frozen=True)
class SiteOverview:
    """One site's rows. Due counts are of the URLs revisited on a schedule (sitemaps and
    feeds, and pages listed without a date); a page listed with a date is requested when
    its sitemap or feed lists it with a newer one."""

    site: str
    #: URLs remembered: pages, and sitemaps and feeds (``listings``).
    known: int
    listings: int
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


#: ``due(s.due, s.checked, t)``: :func:`due_at` of the overview's policy (registered on the
#: connection), so that the counts are what runs at ``now`` and within a day request.
_QUERY = """
SELECT n.name,
    count(*),
    sum(u.document),
    sum(u.gone = 0 AND u.listed IS NULL AND due(s.due, s.checked, :now)),
    sum(u.gone = 0 AND u.listed IS NULL AND NOT due(s.due, s.checked, :now)
        AND due(s.due, s.checked, :now + 86400)),
    sum(CASE WHEN u.document THEN s.changed >= :now - 86400
        ELSE u.last_export >= :now - 86400 END),
    sum(u.gone),
    sum(u.revision),
    max(s.checked)
FROM urls u JOIN names n ON n.id = u.host LEFT JOIN schedule s ON s.key = u.key
GROUP BY u.host ORDER BY n.name
"""


_SITES = "SELECT name FROM names WHERE id IN (SELECT DISTINCT host FROM urls) ORDER BY name"


@contextlib.contextmanager
def reading(path: str | Path) -> Iterator[sqlite3.Connection]:
    """The state file, open read-only; :class:`CrawlStateError` (one line) when it is
    missing, cannot be read, is not ours, corrupt, or of another schema."""
    path = Path(path)
    _check_file(path)
    check_header(path)
    db = _open_read_only(path)
    try:
        check_schema(path, db)
        yield db
    except sqlite3.DatabaseError as exc:
        raise CrawlStateError(f"crawl state {path} is corrupt: {exc}") from None
    finally:
        db.close()


def _check_file(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise CrawlStateError(f"crawl state {path} does not exist") from None
    except OSError as exc:  # a folder on the way that this user cannot enter
        raise CrawlStateError(f"crawl state {path} cannot be read: {exc.strerror}") from None
    if stat.S_ISDIR(mode):
        raise CrawlStateError(f"crawl state {path} is a folder")
    if not stat.S_ISREG(mode):
        raise CrawlStateError(f"crawl state {path} is not a regular file")


def _open_read_only(path: Path) -> sqlite3.Connection:
    """``path`` open read-only. In a folder that cannot be written SQLite cannot create the
    WAL index it reads through: a file closed cleanly (no log beside it) is read as it is
    (``immutable``: no crawl can be writing it there)."""
    uri = path.resolve().as_uri()
    try:
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        try:
            db.execute("PRAGMA user_version").fetchone()
        except sqlite3.Error:
            db.close()
            raise
        return db
    except sqlite3.Error as exc:
        name = getattr(exc, "sqlite_errorname", "")
        if name not in _NO_INDEX or os.access(path.parent, os.W_OK | os.X_OK):
            raise CrawlStateError(f"crawl state {path} {unreadable(exc)}") from None
    if _has_log(path):
        raise CrawlStateError(
            f"crawl state {path} cannot be read: its folder {path.parent} is read-only and "
            f"{path}-wal holds writes of a crawl that did not close it (the file is intact; "
            "make the folder writable)"
        )
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True)


#: SQLite's errors when it cannot create the WAL index (``-shm``) beside the file.
_NO_INDEX = ("SQLITE_READONLY_DIRECTORY", "SQLITE_CANTOPEN")


def _has_log(path: Path) -> bool:
    try:
        return Path(f"{path}-wal").stat().st_size > 0
    except FileNotFoundError:
        return False
    except OSError:
        return True


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


def overview(
    db: sqlite3.Connection, now: int, policy: SchedulePolicy | None = None
) -> list[SiteOverview]:
    """Every site of the state, in name order; due counts under ``policy`` (the schedule
    settings' defaults when None)."""
    policy = policy or SchedulePolicy()
    db.create_function(
        "due", 3, lambda due, checked, at: due_at(policy, due, checked, at), deterministic=True
    )
    rows = db.execute(_QUERY, {"now": now}).fetchall()
    return [site_overview(row[0], [int(n or 0) for n in row[1:8]], row[8]) for row in rows]


def total(sites: list[SiteOverview]) -> SiteOverview:
    """The sites' sums (the last visit: the latest)."""
    names = [f.name for f in fields(SiteOverview)][1:-1]
    sums = [sum(getattr(s, name) for s in sites) for name in names]
    last = max((s.last_visit for s in sites if s.last_visit is not None), default=None)
    return site_overview(f"total ({len(sites)} site{'' if len(sites) == 1 else 's'})", sums, last)


def site_overview(name: str, counts: list[int], last: int | None) -> SiteOverview:
    known, listings, due_now, due_24h, changed, gone, revisions = counts
    return SiteOverview(name, known, listings, due_now, due_24h, changed, gone, revisions, last)


def matching_sites(names: list[str], site: str) -> list[str]:
    """The sites named by ``site``: a base URL (``https://example.org``), or a host with its
    port if the site has one (``example.org``, ``127.0.0.1:8080``; any scheme). Exactly:
    ``127.0.0.1`` names no ``127.0.0.1:8080``."""
    wanted = site.strip().rstrip("/").lower()
    if "://" not in wanted:
        return [name for name in names if name.split("://", 1)[-1].lower() == wanted]
    return [name for name in names if name.lower() == wanted]


def forget(path: str | Path, site: str) -> tuple[list[str], int]:
    """Drop the rows of ``site``'s URLs (their schedule too): the sites matched, and the
    URLs dropped. Raises :class:`CrawlStateError` when the file cannot be used (in use by a
    crawl: one at a time) and ValueError naming the known sites when none matches."""
    with reading(path) as db:
        names = [row[0] for row in db.execute(_SITES)]
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
        # Its robots.txt too: the next run asks the site as a new one.
        robots = [(url_key(f"{name}/robots.txt"),) for name in matched]
        state.db.executemany("DELETE FROM robots WHERE key=?", robots)
        state.wrote()
        state.commit()
    return matched, dropped
