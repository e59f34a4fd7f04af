"""What a crawl lost, said at its end, and the exit status that says so (issue 29).

A document counts as exported only once every output took it. When an output, the crawl
state, the page journal or the WARC archive cannot write, the component that failed calls
:func:`output_failed` or :func:`write_failed`: one ERROR line naming what failed and why,
the ``export/`` (or the component's own) stats, and, for outputs and state, the crawl
stops. :class:`LossReport` (an extension) says at the end what was lost and where it will
come from again, and makes the exit status of ``scrapy crawl`` nonzero whatever command
ran the crawl; :func:`lost` tells ``maintext crawl`` and our ``scrapy crawl`` the same.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass, field
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.statscollectors import StatsCollector
from scrapy.utils.defer import deferred_from_coro
from scrapy_maintext.logformatter import REPORT
from scrapy_maintext.scrapy_internals import fail_exit_status
from scrapy_maintext.vocabulary.names import Stat
from scrapy_maintext.vocabulary.settings import setting

logger = logging.getLogger(__name__)

#: The spider's close reason when an output or the crawl state cannot write.
CLOSE_REASON = "output_failed"
#: Scrapy's count of feeds whose closing store failed (``feedexport/failed_count/<storage>``).
FEED_STORE_FAILED = "feedexport/failed_count/"


@dataclass
class Ledger:
    """What failed in one crawl, with the first reason given, in the order it failed."""

    problems: dict[str, str] = field(default_factory=dict)
    stopping: bool = False


_LEDGERS: weakref.WeakKeyDictionary[Crawler, Ledger] = weakref.WeakKeyDictionary()


def ledger_of(crawler: Crawler) -> Ledger:
    found = _LEDGERS.get(crawler)
    if found is None:
        found = _LEDGERS[crawler] = Ledger()
    return found


def reason_of(exc: BaseException) -> str:
    """An exception as the short reason a user reads (``No space left on device``)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    short = getattr(exc, "short_reason", None)
    if isinstance(short, str) and short:
        return short
    return str(exc) or type(exc).__name__


def write_failed(
    crawler: Crawler, what: str, exc: BaseException, stop: bool = True, later: bool = False
) -> bool:
    """``what`` (``output items.jsonl``, ``crawl state s.db``) could not write: said once
    (True the first time), and the crawl stops unless ``stop`` is False (``later``: once
    the reactor is back, not from inside the call that failed)."""
    ledger = ledger_of(crawler)
    first = what not in ledger.problems
    if first:
        ledger.problems[what] = reason_of(exc)
        logger.error(
            "%s failed: %s; %s",
            what[:1].upper() + what[1:],
            ledger.problems[what],
            "the crawl stops" if stop else "the crawl goes on",
        )
    if stop and later:
        from twisted.internet import reactor

        reactor.callLater(0.0, stop_crawl, crawler)  # type: ignore[arg-type]
    elif stop:
        stop_crawl(crawler)
    return first


def output_failed(crawler: Crawler, what: str, exc: BaseException) -> None:
    """An output could not write a document: it is not exported, and the crawl stops."""
    if write_failed(crawler, what, exc) and crawler.stats is not None:
        crawler.stats.inc_value(Stat.EXPORT_OUTPUTS_FAILED)
    if crawler.stats is not None:
        crawler.stats.inc_value(Stat.EXPORT_NOT_EXPORTED)


def stop_crawl(crawler: Crawler) -> None:
    ledger = ledger_of(crawler)
    if ledger.stopping or crawler.engine is None or crawler.spider is None:
        return
    ledger.stopping = True
    deferred_from_coro(crawler.engine.close_spider_async(reason=CLOSE_REASON))


def lost(stats: StatsCollector | None) -> list[str]:
    """What the crawl lost or failed to write, one phrase each (empty: nothing)."""
    if stats is None:
        return []
    get = stats.get_value
    found = []
    if get(Stat.EXPORT_NOT_EXPORTED, 0):
        found.append(f"{get(Stat.EXPORT_NOT_EXPORTED)} documents not exported")
    store_failed = sum(
        int(value)
        for name, value in stats.get_stats().items()
        if name.startswith(FEED_STORE_FAILED)
    )
    if store_failed:
        found.append(f"{store_failed} outputs not completed at the end of the crawl")
    if get(Stat.RECRAWL_STATE_WRITES_LOST, 0):
        found.append(
            f"{get(Stat.RECRAWL_STATE_WRITES_LOST)} page outcomes not recorded in the crawl state"
        )
    if get(Stat.DISTRIBUTED_REDIS_LOST, 0):
        found.append("the rest of the shared crawl")
    if get(Stat.REPORT_ERRORS, 0):
        found.append("the crawl report not written")
    if get(Stat.WARC_ERRORS, 0):
        found.append(f"{get(Stat.WARC_ERRORS)} responses not archived in the WARC output")
    return found


class LossReport:
    """Extension: at the end, one line of what was lost; the exit status nonzero if any."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.recurring = bool(setting(crawler.settings, "CRAWL_STATE"))
        self.resumable = bool(crawler.settings.get("JOBDIR"))
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> LossReport:
        return cls(crawler)

    def engine_stopped(self, **_: Any) -> None:
        found = lost(self.crawler.stats)
        if not found:
            return
        problems = ledger_of(self.crawler).problems
        causes = "; ".join(f"{what}: {why}" for what, why in problems.items())
        logger.error(
            "Lost: %s%s.%s",
            ", ".join(found),
            f" ({causes})" if causes else "",
            self._where_from(),
            extra=REPORT,
        )
        fail_exit_status(self.crawler)

    def _where_from(self) -> str:
        stats = self.crawler.stats
        get = (lambda name: stats.get_value(name, 0)) if stats is not None else (lambda _: 0)
        said = ""
        if get(Stat.EXPORT_NOT_EXPORTED):
            if self.recurring:
                said += (
                    " The crawl state counts none of them as exported: the next run exports them."
                )
            elif self.resumable:
                said += " The page journal counts none of them as done: resuming exports them."
            else:
                said += " Without CRAWL_STATE or JOBDIR, only a new crawl exports them."
        if get(Stat.RECRAWL_STATE_WRITES_LOST):
            said += " The next run fetches those pages again (and may export them again)."
        if get(Stat.DISTRIBUTED_REDIS_LOST):
            said += " Its requests stay in Redis: a worker started again finishes it."
        return said
