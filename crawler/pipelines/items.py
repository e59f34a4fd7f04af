"""An item with its Document's fields merged in, the way the extraction pipeline returns it."""

from __future__ import annotations

import re
from typing import Any

from itemadapter import ItemAdapter
from scrapy_maintext.document import Document
from scrapy_maintext.exporters.markdown import markdown_body
from scrapy_maintext.pipelines.config import ExtractConfig

#: Item field with the character encoding of a bytes ``html`` field (the crawl's
#: ``response.encoding``); without it, bytes are sniffed like any other body.
ENCODING_FIELD = "encoding"

#: Item field of the text as Markdown (EXTRACT_MARKDOWN).
MARKDOWN_FIELD = "markdown"
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def item_encoding(adapter: ItemAdapter, html: str | bytes) -> str | None:
    encoding = adapter.get(ENCODING_FIELD) if isinstance(html, bytes) else None
    return encoding if isinstance(encoding, str) and encoding else None


def merge_document(
    item: Any, doc: Document, config: ExtractConfig, extra: dict[str, Any] | None = None
) -> Any:
    """``item`` with every Document field set (a dict copy when its type cannot hold them).

    Empty Document values never overwrite what the item already has; without a page date,
    the item's ``config.date_field`` (sitemap lastmod, feed date) becomes ``date``.
    ``extra`` fields (the site memory's) are set as well.
    """
    adapter = ItemAdapter(item)
    values = {**_document_fields(adapter, doc, config), **(extra or {})}
    if config.markdown:
        # The body and its pictures in place, headings at their own levels (title and URL
        # are fields already).
        values[MARKDOWN_FIELD] = markdown_body(doc.body, images=doc.images)
    if not isinstance(item, dict) and not set(values) <= set(adapter.field_names()):
        # A typed item (scrapy.Item, dataclass) without the Document fields cannot
        # hold them; a dict keeps every field the item had.
        item = adapter.asdict()
        adapter = ItemAdapter(item)
    for key, value in values.items():
        adapter[key] = value
    if not config.keep_html and config.html_field in adapter:
        del adapter[config.html_field]
    return item


def _document_fields(adapter: ItemAdapter, doc: Document, config: ExtractConfig) -> dict[str, Any]:
    values = doc.to_dict()
    if "url" in adapter:
        # The item's own URL stays (EXTRACT_URL_FIELD may name another field).
        del values["url"]
    if not values["date"] and config.date_field:
        values["date"] = _iso_date(adapter.get(config.date_field))
    if not values["title"] and config.title_field:
        values["title"] = adapter.get(config.title_field) or None
    return {
        key: value
        for key, value in values.items()
        if not (key in adapter and value in (None, "", []))
    }


def _iso_date(value: Any) -> str | None:
    """YYYY-MM-DD from an ISO 8601 date or datetime string, else None."""
    if not isinstance(value, str):
        return None
    match = _ISO_DATE.match(value.strip())
    return match.group(0) if match else None
