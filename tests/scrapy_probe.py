"""Exercise scrapy_maintext.scrapy_internals on a real Scrapy engine; print what it saw as
JSON (run by tests/test_scrapy_internals.py in a fresh process, with its own reactor)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from scrapy.utils.reactor import install_reactor

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

from scrapy import Request, Spider  # noqa: E402
from scrapy.core.engine import ExecutionEngine  # noqa: E402
from scrapy.http import HtmlResponse  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402
from scrapy_maintext import scrapy_internals as si  # noqa: E402
from twisted.internet import reactor  # noqa: E402

SLOT = "site:8080"
seen: dict[str, object] = {}


def probe() -> None:
    crawler = get_crawler(Spider, {"DOWNLOAD_DELAY": 0, "ROBOTSTXT_OBEY": False})
    crawler.spider = crawler.spidercls.from_crawler(crawler, name="probe")
    crawler.engine = ExecutionEngine(crawler, lambda _: None)
    first = Request("data:,one", meta={"download_slot": SLOT})
    seen["key"] = si.slot_key(crawler, first)
    si.slot_settings(crawler, SLOT).update({"delay": 5.0, "jitter": 0})
    downloader = crawler.engine.downloader
    fetches = [
        downloader.fetch(Request(f"data:,{i}", meta={"download_slot": SLOT})) for i in range(3)
    ]
    for fetch in fetches:
        fetch.addErrback(lambda f: None)
    seen["drained_while_downloading"] = si.crawl_is_drained(crawler, 0)
    reactor.callLater(0.2, finish, crawler)


def finish(crawler: Crawler) -> None:
    slot = si.live_slot(crawler, SLOT)
    assert slot is not None
    seen["delay"] = slot.delay
    seen["queued"] = len(slot.queue)
    taken = list(si.take_queued(crawler))
    seen["taken"] = len(taken)
    for deferred in taken:
        deferred.errback(RuntimeError("stopped"))
    seen["queued_after"] = len(slot.queue)
    seen["explicit"] = si.explicit_encoding(HtmlResponse("https://a", body=b"x", encoding="cp1252"))
    seen["implicit"] = si.explicit_encoding(HtmlResponse("https://a", body=b"x"))
    reactor.stop()


reactor.callWhenRunning(probe)
reactor.run()
json.dump(seen, sys.stdout)
