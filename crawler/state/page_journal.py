"""Which pages of a JOBDIR crawl reached their end, kept on disk as they do.

Scrapy keeps a JOBDIR crawl's queue on disk only at a clean shutdown, but records every
queued request as seen at once: after a SIGKILL, the pages still queued were seen and are
never fetched again. The spiders therefore re-plan a resumed crawl from discovery and
fetch every planned page this journal does not list as done (exported, dropped or failed
for good). A page in flight at the kill is fetched again, so it may be exported twice.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from scrapy_maintext.exporters.storage import WholeWritesFile

#: File in JOBDIR: one ``site<TAB>url`` line per finished page.
JOURNAL_FILE = "pages-done.tsv"


class PageJournal:
    """Finished pages per site; appended line by line (no Python buffer), so a killed
    process loses nothing it had marked."""

    def __init__(self, jobdir: str | None) -> None:
        self.done: defaultdict[str, set[str]] = defaultdict(set)
        #: True when an earlier run of this JOBDIR crawl left a journal.
        self.resumed = False
        self._file: WholeWritesFile | None = None
        self.path: Path | None = None
        if not jobdir:
            return
        path = self.path = Path(jobdir) / JOURNAL_FILE
        if path.exists():
            self.resumed = True
            for line in path.read_text(encoding="utf-8").splitlines():
                site, sep, url = line.partition("\t")
                if sep and url:
                    self.done[site].add(url)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Whole lines or nothing: a full disk never leaves half a URL marked done.
        self._file = WholeWritesFile(path, "a")

    def mark(self, site: str, *urls: str) -> None:
        """Record ``urls`` of ``site`` as done (a no-op without JOBDIR: no set of every
        URL of the crawl kept for nothing)."""
        if self._file is None:
            return
        for url in urls:
            if url in self.done[site] or "\t" in url or "\n" in url:
                continue
            self._file.write(f"{site}\t{url}\n".encode())
            self.done[site].add(url)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
