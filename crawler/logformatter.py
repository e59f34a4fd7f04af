"""What a crawl writes to its log: items without their bodies, and the short console.

Scrapy's own formatter writes the whole item into the "Dropped", "Scraped" and "Error
processing" messages: an item still holding its HTML (every page the extraction pipeline
drops) would put the page into the log. Items are summarised instead: short values as
they are, long ones by their length.

:class:`ConsoleFilter` is what ``maintext crawl`` (the project's crawl command) shows
without ``-v``: warnings and errors, progress lines and the end-of-crawl report, not
Scrapy's settings, component lists and stats dump. A log call marks its line with
``extra=PROGRESS`` (shown unless a level above INFO is asked for) or ``extra=REPORT``
(shown at every level: it is the crawl's result).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from itemadapter import ItemAdapter, is_item
from scrapy.logformatter import LogFormatter, LogFormatterResult
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.log import TopLevelFormatter

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: Longest value shown in full (a URL, a title, a date); longer ones show their length.
MAX_VALUE_CHARS = 200


class ItemSummary:
    """An item as ``{'url': '...', 'html': <45123 chars>}``, built when logged."""

    def __init__(self, item: Any) -> None:
        self.item = item

    def __str__(self) -> str:
        if not is_item(self.item):
            return _short(self.item)
        fields = ", ".join(
            f"{key!r}: {_short(value)}" for key, value in ItemAdapter(self.item).items()
        )
        return "{" + fields + "}"


def _short(value: Any) -> str:
    if isinstance(value, str | bytes) and len(value) > MAX_VALUE_CHARS:
        return f"<{len(value)} {'chars' if isinstance(value, str) else 'bytes'}>"
    if isinstance(value, list | tuple | dict) and len(repr(value)) > MAX_VALUE_CHARS:
        return f"<{type(value).__name__} of {len(value)}>"
    text = repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else f"<{type(value).__name__}>"


class SummaryLogFormatter(LogFormatter):
    """Scrapy's LogFormatter with items summarised (``LOG_FORMATTER``, set by the add-on)."""

    def scraped(self, item: Any, *args: Any, **kwargs: Any) -> LogFormatterResult:
        return _summarised(super().scraped(item, *args, **kwargs))

    def dropped(self, item: Any, *args: Any, **kwargs: Any) -> LogFormatterResult:
        return _summarised(super().dropped(item, *args, **kwargs))

    def item_error(self, item: Any, *args: Any, **kwargs: Any) -> LogFormatterResult:
        return _summarised(super().item_error(item, *args, **kwargs))


def _summarised(result: LogFormatterResult) -> LogFormatterResult:
    args = result.get("args")
    if isinstance(args, dict) and "item" in args:
        result["args"] = {**args, "item": ItemSummary(args["item"])}
    return result


#: The LogRecord attribute that marks the lines of the short console.
CONSOLE_ATTRIBUTE: Final = "maintext_console"
#: ``logger.info(..., extra=PROGRESS)``: a progress line, shown without ``-v``.
PROGRESS: Final = {CONSOLE_ATTRIBUTE: "progress"}
#: ``logger.info(..., extra=REPORT)``: the crawl's result, shown at every log level.
REPORT: Final = {CONSOLE_ATTRIBUTE: "report"}

#: Progress lines of Scrapy's, which cannot be marked where they are logged: (logger, start
#: of the message's format string). The feed export names where the items went; a Ctrl-C is
#: acknowledged. Every line of the distributed worker is progress (workers joining, leaving,
#: sites claimed). Our own components mark theirs with ``extra=PROGRESS``.
PROGRESS_LINES: Final = (
    ("scrapy.crawler", "Received "),
    ("scrapy.extensions.feedexport", "Stored "),
    ("scrapy_maintext.distributed.worker", ""),
)


def console_kind(record: logging.LogRecord) -> str | None:
    """``"progress"``, ``"report"`` or None (a line of the full log only)."""
    kind = getattr(record, CONSOLE_ATTRIBUTE, None)
    if kind is not None:
        return str(kind)
    msg = record.msg if isinstance(record.msg, str) else ""
    for name, start in PROGRESS_LINES:
        if record.name == name and msg.startswith(start):
            return "progress"
    return None


class ConsoleFilter(logging.Filter):
    """Records at ``level`` or above, the report always, progress lines when asked for."""

    def __init__(self, level: int, progress: bool) -> None:
        super().__init__()
        self.level = level
        self.progress = progress

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= self.level:
            return True
        kind = console_kind(record)
        return kind == "report" or (self.progress and kind == "progress")


def console_filter(settings: BaseSettings, verbose: bool) -> ConsoleFilter | None:
    """What the short console shows for these (command line) settings, or None when the
    crawl logs as Scrapy does: with ``-v``, a log file, ``--nolog``, or a level at or below
    INFO asked for (``-L``, ``-s LOG_LEVEL``; the report is an INFO line there anyway)."""
    if verbose or settings.get("LOG_FILE") or not settings.getbool("LOG_ENABLED"):
        return None
    if (settings.getpriority("LOG_LEVEL") or 0) < SETTINGS_PRIORITIES["cmdline"]:
        return ConsoleFilter(logging.WARNING, progress=True)
    level = log_level(settings.get("LOG_LEVEL"))
    if level is None or level <= logging.INFO:
        return None
    return ConsoleFilter(level, progress=False)


def log_level(value: Any) -> int | None:
    """A LOG_LEVEL value (``WARNING``, ``30``) as a number; None if logging knows no such."""
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.isdigit():
        return int(text)
    return logging.getLevelNamesMapping().get(text.upper())


@contextmanager
def console(settings: BaseSettings, shown: ConsoleFilter) -> Iterator[logging.Handler]:
    """The short console on stderr while the block runs, in place of Scrapy's root handler
    (which ``LOG_INSTALL_ROOT_HANDLER=False`` kept out), formatted as Scrapy's."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.INFO)
    handler.setFormatter(
        logging.Formatter(fmt=settings.get("LOG_FORMAT"), datefmt=settings.get("LOG_DATEFORMAT"))
    )
    handler.addFilter(shown)
    if settings.getbool("LOG_SHORT_NAMES"):
        handler.addFilter(TopLevelFormatter(["scrapy"]))
    root_level = logging.root.level
    # As Scrapy's root handler does: every logger's INFO reaches the handler, which decides.
    logging.root.setLevel(logging.NOTSET)
    logging.root.addHandler(handler)
    try:
        yield handler
    finally:
        logging.root.removeHandler(handler)
        logging.root.setLevel(root_level)
        handler.close()
