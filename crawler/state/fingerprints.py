"""Fingerprints of exported documents, kept in JOBDIR so that a resumed crawl remembers, and
those of earlier runs of a recurring crawl (``CRAWL_STATE``) so that the filter spans runs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from scrapy_maintext.extraction import FingerprintIndex

#: File in JOBDIR holding the fingerprints of kept documents, one per line.
FINGERPRINTS_FILE = "extract-fingerprints.txt"


class SeenFingerprints:
    """Fingerprints of kept documents, persisted in JOBDIR so a resumed crawl remembers.

    A fingerprint reaches the file only once its item is exported (:meth:`confirm`): a
    page killed between extraction and export is fetched again by the resumed crawl and
    must not then be dropped as a duplicate of itself.

    ``earlier``: the fingerprints exported by earlier runs (the crawl state keeps them with
    each page's row); ``own`` gives the one a URL itself was last exported with, which its
    new text is never a duplicate of (a changed page is a new revision, an unchanged one is
    dropped as unchanged by the recrawl stage).
    """

    def __init__(
        self,
        max_distance: int,
        jobdir: str | None,
        earlier: Iterable[str] = (),
        own: Callable[[str], str | None] | None = None,
    ) -> None:
        self.index = FingerprintIndex(max_distance=max_distance)
        self._own = own
        for fp in earlier:
            self.index.add(fp)
        self._file: IO[str] | None = None
        self._pending: set[str] = set()
        if jobdir:
            path = Path(jobdir) / FINGERPRINTS_FILE
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                for line in path.read_text(encoding="ascii").split():
                    self.index.add(line)
            self._file = path.open("a", encoding="ascii")

    def __len__(self) -> int:
        return len(self.index)

    def check_and_add(self, fp: str, url: str | None = None) -> str | None:
        own = self._own(url) if self._own is not None and url else None
        found = self.index.check_and_add(fp, own)
        if found is None and fp and fp != own and self._file is not None:
            self._pending.add(fp)
        return found

    def confirm(self, fp: Any) -> None:
        """The item with fingerprint ``fp`` was exported: remember it across runs."""
        if self._file is not None and fp in self._pending:
            self._pending.discard(fp)
            self._file.write(fp + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
