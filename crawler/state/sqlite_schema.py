"""The schema of a crawl state file (``CRAWL_STATE``): its tables, its identity and how a
file of an older schema is brought up to this one; how values are stored in its columns.
Scrapy-free.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from scrapy_maintext.state.sqlite_file import unreadable
from scrapy_maintext.state.store import CrawlStateError

#: ``PRAGMA application_id`` of our files ("mTxS"): a SQLite file of anything else is refused.
APPLICATION_ID = 0x6D547853
#: ``PRAGMA user_version``: the schema this code writes; a newer file is refused, an older
#: one migrated when opened (:data:`MIGRATIONS`).
SCHEMA_VERSION = 4

#: When each URL is due again (:mod:`scrapy_maintext.state.schedule`), keyed as ``urls``.
SCHEDULE = """
CREATE TABLE schedule (
    key INTEGER PRIMARY KEY,
    due INTEGER NOT NULL,
    interval INTEGER NOT NULL,
    checked INTEGER NOT NULL,
    changed INTEGER,
    digest INTEGER
);
"""
#: Each site's robots.txt, kept between runs (:class:`~scrapy_maintext.state.store.RobotsCopy`).
ROBOTS = """
CREATE TABLE robots (
    key INTEGER PRIMARY KEY,
    url TEXT NOT NULL,
    status INTEGER NOT NULL,
    body BLOB NOT NULL,
    etag TEXT,
    last_modified INTEGER,
    checked INTEGER NOT NULL,
    fresh_for INTEGER NOT NULL
);
"""
SCHEMA = """
CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE urls (
    key INTEGER PRIMARY KEY,
    host INTEGER NOT NULL,
    path TEXT NOT NULL,
    etag TEXT,
    last_modified INTEGER,
    listed INTEGER,
    text_hash INTEGER,
    first_export INTEGER,
    last_export INTEGER,
    revision INTEGER NOT NULL DEFAULT 0,
    gone INTEGER NOT NULL DEFAULT 0,
    document INTEGER NOT NULL DEFAULT 0,
    source INTEGER,
    fingerprint INTEGER
);
CREATE INDEX urls_source ON urls(source) WHERE source IS NOT NULL;
"""
#: The statements that bring schema ``n`` to ``n + 1``, by ``n``. Adding a column rewrites
#: nothing: a large file migrates at once.
MIGRATIONS = {
    # 2: the fingerprint of the exported text (the near-duplicate filter spans runs); files
    # of schema 1 have none, so their pages count as duplicates only from their next export.
    1: "ALTER TABLE urls ADD COLUMN fingerprint INTEGER;",
    # 3: adaptive revisits; files of schema 2 have no schedule, so every URL is due once.
    2: SCHEDULE,
    # 4: robots.txt kept between runs; files of schema 3 have none: each site's is asked once.
    3: ROBOTS,
}


def connect(path: Path) -> sqlite3.Connection:
    """The state file at ``path`` opened in a transaction: created when empty, migrated when
    older; :class:`CrawlStateError` when it is not ours or newer than this code."""
    # Autocommit off in Python's sense: we open transactions ourselves.
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        db.close()
        raise CrawlStateError(f"crawl state {path} {unreadable(exc)}") from None
    if app_id == 0 and tables == 0:
        try:
            _create(db)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise CrawlStateError(f"crawl state {path} cannot be created: {exc}") from None
    elif app_id != APPLICATION_ID:
        db.close()
        raise CrawlStateError(f"crawl state {path} is not a crawl state file")
    elif version > SCHEMA_VERSION:
        db.close()
        raise CrawlStateError(
            f"crawl state {path} has schema {version}, newer than this version "
            f"of scrapy-maintext reads ({SCHEMA_VERSION}); upgrade, or start over with "
            "another file"
        )
    elif version < SCHEMA_VERSION:
        _migrate(path, db, version)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("BEGIN")
    return db


def _migrate(path: Path, db: sqlite3.Connection, version: int) -> None:
    """Bring a file of an older schema to this one, in one transaction."""
    steps = [MIGRATIONS.get(v) for v in range(version, SCHEMA_VERSION)]
    if version < 1 or None in steps:
        db.close()
        raise CrawlStateError(
            f"crawl state {path} has schema {version}, which this version of "
            "scrapy-maintext cannot migrate; start over with another file"
        )
    try:
        db.executescript(
            f"BEGIN; {' '.join(str(s) for s in steps)} "
            f"PRAGMA user_version={SCHEMA_VERSION}; COMMIT;"
        )
    except sqlite3.DatabaseError as exc:
        db.close()
        raise CrawlStateError(f"crawl state {path} cannot be migrated: {exc}") from None


def _create(db: sqlite3.Connection) -> None:
    db.executescript(
        f"BEGIN; {SCHEMA} {SCHEDULE} {ROBOTS} PRAGMA application_id={APPLICATION_ID}; "
        f"PRAGMA user_version={SCHEMA_VERSION}; COMMIT;"
    )


# How values are stored.


def prefix_length(url: str) -> int:
    """Length of ``scheme://host[:port]`` at the start of ``url`` (0 when it has none)."""
    scheme_end = url.find("://")
    if scheme_end < 0:
        return 0
    path_start = url.find("/", scheme_end + 3)
    return len(url) if path_start < 0 else path_start


def fingerprint_int(fp: str | None) -> int | None:
    """A 64-bit hex fingerprint as SQLite's signed integer (8 bytes instead of 17 of text)."""
    if not fp:
        return None
    try:
        value = int(fp, 16)
    except ValueError:
        return None
    if not 0 <= value < 1 << 64:
        return None
    return value - (1 << 64) if value >= 1 << 63 else value


def fingerprint_hex(value: int | None) -> str | None:
    if value is None:
        return None
    return f"{value & 0xFFFFFFFFFFFFFFFF:016x}"
