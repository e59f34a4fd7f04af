"""A feed storage whose file refuses writes after a number of them: fault injection for the
export path (``-O failing:///path``, ``-s TEST_FAIL_AFTER=N``)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

from scrapy.crawler import Crawler
from scrapy_maintext.exporters.storage import DurableFileFeedStorage, WholeWritesFile

#: The scheme to give feeds that fail (``FEED_STORAGES={"failing": PATH}``).
SCHEME = "failing"
PATH = "tests.failing_storage.FailingFeedStorage"


class FailingFile(WholeWritesFile):
    """Takes ``after`` writes, then refuses ``refusals`` of them (all, by default) as a full
    disk does (a short write on a real full disk: ``tests/tmpfs.py``)."""

    after = 0
    refusals = -1

    def write(self, data: Any) -> int:
        if self.after <= 0 and self.refusals != 0:
            self.refusals -= 1
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.after -= 1
        return super().write(data)


class FailingFeedStorage(DurableFileFeedStorage):
    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        super().__init__("file://" + uri.removeprefix(f"{SCHEME}://"), feed_options=feed_options)
        self.after = 0

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, uri: str, *, feed_options: dict[str, Any] | None = None
    ) -> FailingFeedStorage:
        storage = cls(uri, feed_options=feed_options)
        storage.after = crawler.settings.getint("TEST_FAIL_AFTER")
        return storage

    def open(self, spider: Any) -> FailingFile:
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        file = FailingFile(path, "w")
        file.after = self.after
        return file
