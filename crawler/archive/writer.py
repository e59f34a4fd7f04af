"""WARC files written off the caller's thread, rotated by size, named never to collide.

Scrapy-free. :meth:`WarcArchive.submit` queues an exchange and returns at once; one writer
thread builds and gzips its records (zlib lets other threads run meanwhile), appends them to
the current file in one ``write`` and flushes it to the OS. A process killed at any moment
leaves every record written before it whole: at most the last gzip member is cut short, and
readers stop there.

File names sort in time order and never collide, across runs and machines::

    PREFIX-YYYYMMDDHHMMSSffffff-SERIAL-HOST-PID-RANDOM.warc.gz

(the time the file was opened, UTC; the run's file number; the host name; the process id; six
random hex digits), and a file is created exclusively: a name taken anyway is drawn again.
"""

from __future__ import annotations

import datetime
import logging
import os
import queue
import re
import secrets
import socket
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from scrapy_maintext.archive.records import (
    DEFAULT_LEVEL,
    Exchange,
    build_pair,
    build_warcinfo,
)
from scrapy_maintext.exporters.storage import WholeWritesFile

logger = logging.getLogger(__name__)

SUFFIX = ".warc.gz"
#: Names tried when a file name is taken (by a clock that went back, a reused pid...).
NAME_ATTEMPTS = 10
_UNSAFE = re.compile(r"[^A-Za-z0-9.]+")


@dataclass(frozen=True)
class RecordLocation:
    """Where a response record was written: enough to read it back without an index."""

    #: The WARC file's name (in the archive's directory).
    file: str
    #: Byte offset of the record's gzip member in that file.
    offset: int
    record_id: str
    payload_digest: str
    #: The record's WARC-Date.
    warc_date: str


@dataclass
class ArchiveCounts:
    """What the writer has done so far (read by the crawl's stats at its end)."""

    records: int = 0
    bytes: int = 0
    files: int = 0
    errors: int = 0


@dataclass(frozen=True)
class ArchiveConfig:
    directory: Path
    max_size: int
    prefix: str = "maintext"
    #: Fields of each file's ``warcinfo`` record (software, settings that matter).
    info: dict[str, str] = field(default_factory=dict)
    #: zlib level of each record's gzip member (1 fastest, 9 smallest).
    level: int = DEFAULT_LEVEL


def check_folder(directory: Path) -> None:
    """Create the archive's folder; ValueError (one line, naming it) if it cannot be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"WARC_OUTPUT {directory}: {exc.strerror or exc}") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ValueError(f"WARC_OUTPUT {directory}: not writable")


def file_name(prefix: str, serial: int, moment: datetime.datetime) -> str:
    """A fresh, time-sortable WARC file name (see the module's doc)."""
    stamp = moment.astimezone(datetime.UTC).strftime("%Y%m%d%H%M%S%f")
    host = _UNSAFE.sub("", socket.gethostname())[:40] or "host"
    token = secrets.token_hex(3)
    return f"{prefix}-{stamp}-{serial:05d}-{host}-{os.getpid()}-{token}{SUFFIX}"


@dataclass(frozen=True)
class _Task:
    exchange: Exchange
    future: Future[RecordLocation]


class WarcArchive:
    """A directory of WARC files fed from any thread, written by one thread of its own."""

    def __init__(
        self,
        config: ArchiveConfig,
        clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        self.config = config
        self.clock = clock
        self.counts = ArchiveCounts()
        self.names: list[str] = []
        config.directory.mkdir(parents=True, exist_ok=True)
        #: Exchanges with their futures, then None to stop.
        self._queue: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self._file: WholeWritesFile | None = None
        self._name = ""
        self._size = 0
        #: Exchanges written to the current file (a file left with none is removed).
        self._pairs = 0
        self._warcinfo_id = ""
        self._warned = False
        self._thread = threading.Thread(target=self._run, name="warc-writer", daemon=True)
        self._thread.start()

    def submit(self, exchange: Exchange) -> Future[RecordLocation]:
        """Queue ``exchange``; the future gets the response record's location once written."""
        future: Future[RecordLocation] = Future()
        self._queue.put(_Task(exchange, future))
        return future

    def close(self) -> None:
        """Write what is queued, close the file and stop the thread (blocks until done)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _run(self) -> None:
        while True:
            task = self._queue.get()
            if task is None:
                break
            try:
                task.future.set_result(self._write(task.exchange))
            except Exception as exc:
                self._failed(exc)
                task.future.set_exception(exc)
        self._close_file()

    def _write(self, exchange: Exchange) -> RecordLocation:
        if self._file is None or self._size >= self.config.max_size:
            self._rotate()
        assert self._file is not None
        pair = build_pair(exchange, self._warcinfo_id, self.config.level)
        offset = self._size
        self._append(pair.response + pair.request)
        self._pairs += 1
        self.counts.records += 2
        return RecordLocation(
            self._name, offset, pair.response_id, pair.payload_digest, pair.warc_date
        )

    def _append(self, data: bytes) -> None:
        assert self._file is not None
        # One whole write: a kill cuts at most this pair, never an earlier record; a write
        # the OS refuses (a full disk) leaves the file as it was before the pair.
        self._file.write(data)
        self._size += len(data)
        self.counts.bytes += len(data)

    def _rotate(self) -> None:
        self._close_file()
        serial = self.counts.files
        for _ in range(NAME_ATTEMPTS):
            name = file_name(self.config.prefix, serial, self.clock())
            try:
                self._file = WholeWritesFile(self.config.directory / name, "x")
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"no free WARC file name in {self.config.directory}")
        self._name, self._size, self._pairs = name, 0, 0
        warcinfo, self._warcinfo_id = build_warcinfo(name, self.config.info, self.config.level)
        try:
            self._append(warcinfo)
        except OSError:
            # A file that could not take even its warcinfo record is not left behind.
            self._file.close()
            self._file = None
            (self.config.directory / name).unlink(missing_ok=True)
            raise
        self.names.append(name)
        self.counts.files += 1
        self.counts.records += 1
        logger.info("Writing WARC file %s", self.config.directory / name)

    def _close_file(self) -> None:
        if self._file is None:
            return
        self._file.close()
        self._file = None
        if not self._pairs:
            # Only a warcinfo record: every exchange meant for it failed.
            (self.config.directory / self._name).unlink(missing_ok=True)
            self.names.remove(self._name)
            self.counts.files -= 1
            self.counts.records -= 1

    def _failed(self, exc: Exception) -> None:
        self.counts.errors += 1
        if not self._warned:
            self._warned = True
            logger.error(
                "WARC output failed (%s: %s); responses are not archived while it fails, "
                "counted as warc/errors (logged once)",
                type(exc).__name__,
                exc,
            )
        # The failed write left the file as it was: the next exchange goes on in it (the
        # disk may have room again). Only a file that could not be cut back is closed.
        if self._file is not None and _size_of(self._file) != self._size:
            self._close_file()


def _size_of(file: WholeWritesFile) -> int:
    try:
        return os.fstat(file.fileno()).st_size
    except OSError:
        return -1
