"""The site memory of a JOBDIR crawl on disk: a snapshot plus an append-only journal."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
from scrapy_maintext.site_memory.memory import PageSignatures, decode_array, encode_array

if TYPE_CHECKING:
    from scrapy_maintext.site_memory.registry import SiteMemories

logger = logging.getLogger(__name__)

#: Snapshot and journal file names in a JOBDIR.
SNAPSHOT_FILE = "site-memory.json"
JOURNAL_FILE = "site-memory.journal"


class MemoryJournal:
    """Persists :class:`SiteMemories` in a directory: a snapshot plus an append-only journal.

    Every learnt page is appended (flushed) to the journal as it is learnt, so even a killed
    crawl resumes with every page it learnt; :meth:`snapshot` (at a clean close) writes the
    whole state atomically and empties the journal. Records carry a sequence number, so a
    journal left over from a crash during :meth:`snapshot` is not applied twice.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = None
        #: Records in the journal file now.
        self.records = 0

    def restore(self, memories: SiteMemories[Any]) -> int:
        """Load the snapshot and replay the journal into ``memories``; pages replayed."""
        snapshot = self.directory / SNAPSHOT_FILE
        if snapshot.exists():
            memories.load_state(json.loads(snapshot.read_text(encoding="utf-8")))
        replayed = 0
        journal = self.directory / JOURNAL_FILE
        if journal.exists():
            for line in journal.read_text(encoding="utf-8").splitlines():
                record = _record(line)
                self.records += 1
                if record is None or record[0] <= memories.seq:
                    continue
                memories.learn(record[1], record[2])
                replayed += 1
        memories.journal = self
        self._file = journal.open("a", encoding="utf-8")
        return replayed

    def append(self, seq: int, key: str, page: PageSignatures) -> None:
        if self._file is None:
            return
        record = {"seq": seq, "site": key, "sigs": encode_array(page.page, "<u8")}
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()
        self.records += 1

    def snapshot(self, memories: SiteMemories[Any]) -> None:
        path = self.directory / SNAPSHOT_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(memories.state()), encoding="utf-8")
        os.replace(tmp, path)
        if self._file is not None:
            self._file.close()
        self._file = (self.directory / JOURNAL_FILE).open("w", encoding="utf-8")
        self.records = 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _record(line: str) -> tuple[int, str, PageSignatures] | None:
    """A journal line, or None for a torn last line (the crawl was killed mid-write)."""
    try:
        data = json.loads(line)
        sigs = decode_array(data["sigs"], "<u8", np.uint64)
        return int(data["seq"]), str(data["site"]), PageSignatures(sigs, np.zeros(0, np.uint64))
    except (ValueError, KeyError, TypeError):
        return None
