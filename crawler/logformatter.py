"""Scrapy log messages about items, without the page bodies they carry.

Scrapy's own formatter writes the whole item into the "Dropped", "Scraped" and "Error
processing" messages: an item still holding its HTML (every page the extraction pipeline
drops) would put the page into the log. Items are summarised instead: short values as
they are, long ones by their length.
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter, is_item
from scrapy.logformatter import LogFormatter, LogFormatterResult

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
