"""Local feed files written through to the OS item by item, so a killed crawl keeps them."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from scrapy.extensions.feedexport import FileFeedStorage


class DurableFileFeedStorage(FileFeedStorage):
    """Scrapy's local-file storage without Python's write buffer.

    Each exporter write reaches the OS at once: a crawl killed with SIGKILL leaves every
    item exported so far in the file (the page journal counts them as done, see
    ``scrapy_maintext.state.page_journal``), never a buffer's worth fewer.
    """

    def open(self, spider: Any) -> IO[bytes]:
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        # "a+b" rather than "ab": the TEI exporter reads the end of a corpus it continues.
        mode = "a+b" if self.write_mode == "ab" else self.write_mode
        return path.open(mode, buffering=0)


#: FEED_STORAGES entries the add-on registers (a plain path and ``file://`` URIs).
FEED_STORAGES = {
    "": "scrapy_maintext.exporters.storage.DurableFileFeedStorage",
    "file": "scrapy_maintext.exporters.storage.DurableFileFeedStorage",
}
