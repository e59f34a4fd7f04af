"""The crawl state's file on disk: it exists, can be created, is a SQLite file, is locked by
one crawl at a time, and what an error reading it says of it. Scrapy-free.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import sqlite3
import stat
from pathlib import Path

from scrapy_maintext.state.store import CrawlStateError
from scrapy_maintext.writable import creation_problem

SQLITE_MAGIC = b"SQLite format 3\x00"


def check_head(path: Path, head: bytes) -> None:
    """Refuse a file whose first bytes are not a SQLite file's, or that is empty (a state
    file is never empty once created: an empty one lost what it held)."""
    if not head:
        raise CrawlStateError(
            f"crawl state {path} is empty (0 bytes): what it held is lost; delete it to "
            "start a new state (the next run exports every page again)"
        )
    if head != SQLITE_MAGIC:
        raise CrawlStateError(f"crawl state {path} is not a crawl state file (not SQLite)")


def unreadable(exc: sqlite3.Error) -> str:
    """What an error reading the file says of it: corrupt only when SQLite says so (a full
    disk or a read-only folder is not a damaged file, and deleting it would lose it all)."""
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return f"is corrupt: {exc}"
    hint = " (is its disk full?)" if name.startswith(("SQLITE_IOERR", "SQLITE_FULL")) else ""
    return f"cannot be opened: {exc}{hint}"


def open_file(path: Path) -> tuple[int, bool]:
    """``path`` opened for reading and writing (created if missing), and whether this
    call created it; :class:`CrawlStateError` naming why it cannot be."""
    if path_exists(path) and path.is_dir():
        raise CrawlStateError(f"crawl state {path} is a folder")
    problem = None if path.exists() else creation_problem(path)
    if problem:
        raise CrawlStateError(f"crawl state {path} cannot be created: {problem}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = create_locked(path)
        created = fd is not None
        if fd is None:
            fd = os.open(path, os.O_RDWR)
    except OSError as exc:
        verb = "written" if path.exists() else "created"
        raise CrawlStateError(
            f"crawl state {path} cannot be {verb}: {exc.strerror or exc}"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise CrawlStateError(f"crawl state {path} is not a regular file")
    return fd, created


def create_locked(path: Path) -> int | None:
    """``path`` created already locked, its descriptor; None when it exists.

    A file created and then locked leaves a moment in which a crawl started at the same
    time finds it empty and unlocked, and refuses it as a state that lost what it held.
    Created under a temporary name, locked, then linked into place, the file is never
    seen unlocked until its creator lets go of it.
    """
    spare = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.creating")
    fd = os.open(spare, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            os.link(spare, path)
        except FileExistsError:
            os.close(fd)
            return None
        except OSError:
            # A file system without hard links: created in place, locked just after.
            os.close(fd)
            try:
                return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return None
        return fd
    finally:
        spare.unlink(missing_ok=True)


def path_exists(path: Path) -> bool:
    """Whether ``path`` exists; :class:`CrawlStateError` when a folder on the way cannot
    be entered (``Path.exists`` raises then)."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise CrawlStateError(f"crawl state {path} cannot be read: {exc.strerror}") from None
    return True


def lock_file(path: Path) -> tuple[int, bool]:
    """``path`` opened (created if missing) and locked for this process: its descriptor
    (closing it releases the lock) and whether this call created it; a file another crawl
    holds is :class:`CrawlStateError`."""
    fd, created = open_file(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise CrawlStateError(
            f"crawl state {path} is in use by another crawl; one crawl at a time per state file"
        ) from None
    return fd, created


def check_opened(path: Path, fd: int, created: bool) -> None:
    """Refuse what is not a crawl state: another kind of file, or one emptied (a state
    file is never empty once created: an empty one lost what it held), or one in a folder
    that cannot be written."""
    try:
        head = os.pread(fd, len(SQLITE_MAGIC), 0)
    except OSError as exc:
        raise CrawlStateError(f"crawl state {path} cannot be read: {exc}") from None
    if head or not created:
        check_head(path, head)
    if not os.access(path.parent, os.W_OK | os.X_OK):
        # SQLite writes its journal beside the file.
        raise CrawlStateError(
            f"crawl state {path} cannot be written: its folder {path.parent} is "
            "read-only (the file is intact)"
        )
