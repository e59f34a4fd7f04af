"""Local feed files written through to the OS item by item, whole or not at all."""

from __future__ import annotations

import contextlib
import errno
import io
import os
from pathlib import Path
from typing import IO, Any

from scrapy.extensions.feedexport import FileFeedStorage


class WholeWritesFile(io.FileIO):
    """An unbuffered file whose every ``write`` lands whole, or leaves the file as it was.

    A raw write may take only part of the bytes (a disk that fills mid-record); this one
    writes the rest or, when the OS refuses, cuts the file back to where the write began
    and raises ``OSError``: a feed never ends in half a record, and the caller knows the
    record was not written.
    """

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        start = os.fstat(self.fileno()).st_size if "a" in self.mode else self.tell()
        done = 0
        try:
            while done < len(view):
                wrote = super().write(view[done:])
                if not wrote:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += wrote
        except OSError:
            if done:
                # A truncation frees space: it works on a full disk.
                with contextlib.suppress(OSError):
                    self.truncate(start)
                    self.seek(start)
            raise
        return done


class DurableFileFeedStorage(FileFeedStorage):
    """Scrapy's local-file storage without Python's write buffer, with whole writes.

    Each exporter write reaches the OS at once: a crawl killed with SIGKILL leaves every
    item exported so far in the file (the page journal counts them as done, see
    ``scrapy_maintext.state.page_journal``), never a buffer's worth fewer. A write the OS
    refuses (a full disk) raises and leaves no part of the item in the file
    (:class:`WholeWritesFile`); the feed exporter then stops the crawl
    (``scrapy_maintext.exporters.feeds``).
    """

    def open(self, spider: Any) -> IO[bytes]:
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # "a+b" rather than "ab": the TEI exporter reads the end of a corpus it continues.
        mode = "a+b" if self.write_mode == "ab" else self.write_mode
        return WholeWritesFile(path, mode.replace("b", ""))


#: FEED_STORAGES entries the add-on registers (a plain path and ``file://`` URIs).
FEED_STORAGES = {
    "": "scrapy_maintext.exporters.storage.DurableFileFeedStorage",
    "file": "scrapy_maintext.exporters.storage.DurableFileFeedStorage",
}
