"""What a recurring crawl remembers between runs (``CRAWL_STATE``): one SQLite file.

The default backend of :class:`~scrapy_maintext.state.store.StateStore` (a distributed
crawl keeps the same rows in Redis: :mod:`~scrapy_maintext.state.redis.state`).

Scrapy-free. One row per canonical URL, pages and discovery documents (sitemaps, feeds)
alike: the validators the server gave (``ETag``, ``Last-Modified``), the date a sitemap or
feed listed it with, a hash of the exported text, first and last export time, revision,
whether it is gone, which sitemap listed it, and the near-duplicate fingerprint of the
exported text (the next run's near-duplicate filter starts with them all). Rows are keyed by
a 64-bit hash of the URL (8 bytes instead of an index over the URL text); the URL is kept for
people who look and for re-planning, its scheme and host (and the sitemap that listed it) as
a number of table ``names``: 183 bytes per URL in all at 1M URLs
(``python -m benchmarks.crawl_state``).

The file is opened in WAL mode with ``synchronous=NORMAL``: a commit reaches the OS at
once (a SIGKILL loses nothing committed) without waiting for the disk. One process holds
the file at a time (an ``flock`` on it); a second gets :class:`CrawlStateError`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from scrapy_maintext.state.sqlite_file import check_opened, lock_file, path_exists, unreadable
from scrapy_maintext.state.sqlite_schema import (
    connect,
    fingerprint_hex,
    fingerprint_int,
    prefix_length,
)
from scrapy_maintext.state.store import (
    CrawlStateError,
    RobotsCopy,
    StateUnavailable,
    UrlRecord,
    Visit,
    url_key,
)
from scrapy_maintext.state.validators import Validators
from scrapy_maintext.writable import creation_problem

#: Rows looked up per query (below SQLite's limit of bound parameters).
_CHUNK = 500

_COLUMNS = (
    "host, path, etag, last_modified, listed, text_hash, first_export, last_export, revision,"
    " gone, source, fingerprint"
)
_VISIT_COLUMNS = "due, interval, checked, changed, digest"
__all__ = ["CrawlState", "CrawlStateError", "StateUnavailable", "UrlRecord", "Visit", "url_key"]


class CrawlState:
    """The state file of a recurring crawl, open and locked for this process."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock_fd, created = lock_file(self.path)
        try:
            check_opened(self.path, self._lock_fd, created)
            self.db = connect(self.path)
        except BaseException:
            if created:
                # Nothing of ours in it: an empty file left behind would be refused later.
                with contextlib.suppress(OSError):
                    self.path.unlink()
                    for suffix in ("-wal", "-shm", "-journal"):
                        Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            self._unlock()
            raise
        self._dirty = 0
        #: The ``names`` table in memory, both ways (URL prefixes and sitemaps: few).
        self._names: dict[str, int] = {}
        self._ids: dict[int, str] = {}
        try:
            for ident, name in self.db.execute("SELECT id, name FROM names"):
                self._names[name] = ident
                self._ids[ident] = name
        except sqlite3.DatabaseError as exc:
            self.close()
            raise CrawlStateError(f"crawl state {self.path} {unreadable(exc)}") from None

    def _unlock(self) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = -1

    # Reading.

    def get(self, url: str) -> UrlRecord | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM urls WHERE key=?", (url_key(url),))
        found = row.fetchone()
        record = self._record(found) if found else None
        return record if record is not None and record.url == url else None

    def _split(self, url: str) -> tuple[int, str]:
        """``url`` as (the ``names`` id of its scheme and host, the rest)."""
        cut = prefix_length(url)
        host = self._name_id(url[:cut])
        assert host is not None
        return host, url[cut:]

    def _name_id(self, name: str | None) -> int | None:
        """The ``names`` id of a URL prefix or a source URL (added when new)."""
        if name is None:
            return None
        found = self._names.get(name)
        if found is None:
            cursor = self.db.execute("INSERT INTO names (name) VALUES (?)", (name,))
            found = int(cursor.lastrowid or 0)
            self._names[name] = found
            self._ids[found] = name
        return found

    def _record(self, row: tuple) -> UrlRecord:
        host, path, etag, modified, listed, hashed, first, last, revision, gone, source, fp = row
        url = self._ids[host] + path
        source_url = self._ids.get(source) if source is not None else None
        fingerprint = fingerprint_hex(fp)
        record = (url, etag, modified, listed, hashed, first, last, revision, bool(gone))
        return UrlRecord(*record, source_url, fingerprint)

    def read_ahead(self, urls: Iterable[str]) -> None:
        """Nothing: a row of the file is read when it is asked for, at no round trip."""

    def get_many(self, urls: Iterable[str]) -> dict[str, UrlRecord]:
        """The records of those of ``urls`` that are known, by URL."""
        by_key = {url_key(u): u for u in urls}
        found: dict[str, UrlRecord] = {}
        keys = list(by_key)
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT {_COLUMNS} FROM urls WHERE key IN ({marks})"
            for row in self.db.execute(query, chunk):
                record = self._record(row)
                found[record.url] = record
        wanted = set(by_key.values())
        return {u: r for u, r in found.items() if u in wanted}

    def listed_by(
        self, source_url: str, documents: bool = False, undated: bool = False
    ) -> list[str]:
        """Pages (child sitemaps and feeds, with ``documents``) last listed by the sitemap
        or page ``source_url`` and not gone; with ``undated``, those listed without a date."""
        source = self._names.get(source_url)
        if source is None:
            return []
        query = "SELECT host, path FROM urls WHERE source=? AND gone=0 AND document=?"
        if undated:
            query += " AND listed IS NULL"
        rows = self.db.execute(query, (source, int(documents)))
        return [self._ids[host] + path for host, path in rows]

    def pages_listed_by(self, source_url: str) -> tuple[list[str], list[str]]:
        source = self._names.get(source_url)
        if source is None:
            return [], []
        query = (
            "SELECT host, path, listed IS NULL FROM urls WHERE source=? AND gone=0 AND document=0"
        )
        dated: list[str] = []
        undated: list[str] = []
        for host, path, no_date in self.db.execute(query, (source,)):
            (undated if no_date else dated).append(self._ids[host] + path)
        return dated, undated

    def fingerprints(self) -> Iterator[str]:
        """The fingerprints (hex) of the last export of every page that has one."""
        rows = self.db.execute("SELECT fingerprint FROM urls WHERE fingerprint IS NOT NULL")
        for (value,) in rows:
            yield fingerprint_hex(value) or ""

    def robots(self, url: str) -> RobotsCopy | None:
        query = "SELECT url, status, body, etag, last_modified, checked, fresh_for FROM robots"
        row = self.db.execute(f"{query} WHERE key=?", (url_key(url),)).fetchone()
        if row is None or row[0] != url:
            return None
        kept, status, body, etag, modified, checked, fresh_for = row
        return RobotsCopy(kept, status, bytes(body), Validators(etag, modified), checked, fresh_for)

    def keep_robots(self, copy: RobotsCopy) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO robots (key, url, status, body, etag, last_modified,"
            " checked, fresh_for) VALUES (?,?,?,?,?,?,?,?)",
            (
                url_key(copy.url),
                copy.url,
                copy.status,
                copy.body,
                copy.validators.etag,
                copy.validators.last_modified,
                copy.checked,
                copy.fresh_for,
            ),
        )
        self._dirty += 1

    def known_pages(self) -> int:
        """Pages remembered (discovery documents not counted), gone ones included."""
        return int(self.db.execute("SELECT count(*) FROM urls WHERE document=0").fetchone()[0])

    def visit(self, url: str) -> Visit | None:
        """When ``url`` is due again (its ``schedule`` row), if it has one."""
        query = f"SELECT {_VISIT_COLUMNS} FROM schedule WHERE key=?"
        row = self.db.execute(query, (url_key(url),)).fetchone()
        return Visit(*row) if row else None

    def visits(self, urls: Iterable[str]) -> dict[str, Visit]:
        by_key = {url_key(u): u for u in urls}
        keys = list(by_key)
        found: dict[str, Visit] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, {_VISIT_COLUMNS} FROM schedule WHERE key IN ({marks})"
            for key, *row in self.db.execute(query, chunk):
                found[by_key[key]] = Visit(*row)
        return found

    # Writing: each call is part of the open transaction until :meth:`commit`.

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
        """``url`` exported with text hash ``hashed`` (and near-duplicate ``fingerprint``,
        hex) at ``when``: its revision goes up."""
        self.db.execute(
            "INSERT INTO urls (key, host, path, etag, last_modified, listed, text_hash,"
            " first_export, last_export, revision, gone, source, fingerprint)"
            " VALUES (?,?,?,?,?,?,?,?,?,1,0,?,?)"
            " ON CONFLICT(key) DO UPDATE SET etag=excluded.etag,"
            " last_modified=excluded.last_modified, listed=excluded.listed,"
            " text_hash=excluded.text_hash,"
            " first_export=coalesce(first_export, excluded.first_export),"
            " last_export=excluded.last_export, revision=revision+1, gone=0,"
            " source=coalesce(excluded.source, source), document=0,"
            " fingerprint=excluded.fingerprint",
            (
                url_key(url),
                *self._split(url),
                validators.etag,
                validators.last_modified,
                listed,
                hashed,
                when,
                when,
                self._name_id(source),
                fingerprint_int(fingerprint),
            ),
        )
        self._dirty += 1

    def record_seen(
        self,
        url: str,
        validators: Validators | None,
        listed: int | None,
        source: str | None,
        document: bool = False,
    ) -> None:
        """``url`` answered and nothing was exported (304, same text, dropped): remember its
        validators and listed date, keep its text and revision."""
        etag = validators.etag if validators else None
        modified = validators.last_modified if validators else None
        self.db.execute(
            "INSERT INTO urls (key, host, path, etag, last_modified, listed, gone, document,"
            " source) VALUES (?,?,?,?,?,?,0,?,?) ON CONFLICT(key) DO UPDATE SET"
            " etag=coalesce(excluded.etag, etag),"
            " last_modified=coalesce(excluded.last_modified, last_modified),"
            " listed=coalesce(excluded.listed, listed), gone=0,"
            " source=coalesce(excluded.source, source)",
            (
                url_key(url),
                *self._split(url),
                etag,
                modified,
                listed,
                int(document),
                self._name_id(source),
            ),
        )
        self._dirty += 1

    def mark_gone(self, url: str) -> None:
        self.db.execute("UPDATE urls SET gone=1 WHERE key=?", (url_key(url),))
        self._dirty += 1

    def unlist(self, urls: Iterable[str]) -> None:
        """These pages are no longer listed by the sitemap that listed them."""
        keys = [(url_key(url),) for url in urls]
        self.db.executemany("UPDATE urls SET source=NULL WHERE key=?", keys)
        self._dirty += 1

    def record_visit(self, url: str, visit: Visit) -> None:
        """``url``'s schedule after a visit (replacing the one before)."""
        self.db.execute(
            f"INSERT OR REPLACE INTO schedule (key, {_VISIT_COLUMNS}) VALUES (?,?,?,?,?,?)",
            (url_key(url), visit.due, visit.interval, visit.checked, visit.changed, visit.digest),
        )
        self._dirty += 1

    def wrote(self) -> None:
        """A write of another module (``maintext state --forget``) joined the open
        transaction."""
        self._dirty += 1

    @property
    def pending(self) -> int:
        """Writes not committed yet."""
        return self._dirty

    def commit(self) -> None:
        if self._dirty:
            self.db.execute("COMMIT")
            self.db.execute("BEGIN")
            self._dirty = 0

    def abandon(self) -> None:
        """Give up the writes not committed yet: the file keeps its last commit."""
        self._dirty = 0
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("ROLLBACK")
            self.db.execute("BEGIN")

    def close(self) -> None:
        if self._lock_fd < 0:
            return
        with contextlib.suppress(sqlite3.Error):
            self.commit()
            self.db.execute("COMMIT")
        self.db.close()
        self._unlock()

    def __enter__(self) -> CrawlState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: States checked by a crawl command and kept open (and locked) for its crawl, by path.
_HELD: dict[Path, CrawlState] = {}


def check_state_file(path: str | os.PathLike[str], hold: bool = False) -> None:
    """Raise :class:`CrawlStateError` if ``path`` cannot be this crawl's state (not ours,
    corrupt, emptied, newer, in use, not writable). Without ``hold`` it creates nothing;
    with it, the state is opened (created if missing) and kept locked for
    :func:`open_state`: no other crawl can take it between the check and the crawl."""
    path = Path(path)
    if not hold and not path_exists(path):
        problem = creation_problem(path)
        if problem:
            raise CrawlStateError(f"crawl state {path} cannot be created: {problem}")
        return
    state = CrawlState(path)
    try:
        # A corrupt page shows only when read: the whole file is checked before a crawl
        # (``python -m benchmarks.crawl_state`` times it on a million URLs).
        try:
            result = state.db.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise CrawlStateError(f"crawl state {path} {unreadable(exc)}") from None
        if result != "ok":
            raise CrawlStateError(f"crawl state {path} is corrupt: {result}")
    except BaseException:
        state.close()
        raise
    if hold:
        _HELD[path.resolve()] = state
    else:
        state.close()


def open_state(path: str | os.PathLike[str]) -> CrawlState:
    """The state a crawl command checked and holds for ``path``, else ``path`` opened now."""
    held = _HELD.pop(Path(path).resolve(), None)
    return held if held is not None else CrawlState(path)
