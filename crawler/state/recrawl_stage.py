"""``RecrawlPipeline``: a page's text against its last export (``CRAWL_STATE``, Scrapy glue).

After the extraction pipeline: a page whose text is the text of its last export is dropped
as :class:`~scrapy_maintext.vocabulary.reasons.Unchanged` (no failure: counted as
``recrawl/unchanged``); any other page is exported with ``revision`` (1 for a URL never
exported, then 2, 3, ...) and ``previous_export`` (when the revision before was exported).
The state records the export once every output accepted the item (``ITEM_EXPORTED``, see
``scrapy_maintext.exporters.feeds``), and a drop once it is dropped, whatever dropped it.
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy_maintext.discovery.urls import normalize_url
from scrapy_maintext.exporters.feeds import exported_signal
from scrapy_maintext.report.extension import site_of_request
from scrapy_maintext.state.conditional import LISTINGS
from scrapy_maintext.state.recrawl import Recrawl, crawl_state_of
from scrapy_maintext.state.validators import Validators, epoch_to_iso, iso_to_epoch, text_hash
from scrapy_maintext.vocabulary.reasons import (
    FINAL_DROPS,
    RecrawlOutcome,
    Unchanged,
    drop_reason,
    switched_off,
)
from scrapy_maintext.vocabulary.settings import setting

#: Item fields this stage sets (docs/formats.md).
REVISION_FIELD = "revision"
PREVIOUS_EXPORT_FIELD = "previous_export"
#: Item fields it reads: the page's text, and where and with which date it was listed.
TEXT_FIELD = "text"
SOURCE_URL_FIELD = "source_url"
DISCOVERED_VIA_FIELD = "discovered_via"
FINGERPRINT_FIELD = "fingerprint"
#: Unchanged pages are routine in a recurring crawl: not worth a warning.
UNCHANGED_LOG_LEVEL = "DEBUG"


class RecrawlPipeline:
    """Item pipeline: unchanged pages dropped, the others numbered by revision."""

    def __init__(self, crawler: Crawler) -> None:
        recrawl = crawl_state_of(crawler)
        if recrawl is None:
            raise switched_off("RecrawlPipeline", "CRAWL_STATE is not set")
        self.recrawl: Recrawl = recrawl
        self.url_field = setting(crawler.settings, "EXTRACT_URL_FIELD")
        self.date_field = setting(crawler.settings, "EXTRACT_DATE_FALLBACK_FIELD")
        #: Without extraction, the page itself is compared (any change is a revision).
        self.html_field = setting(crawler.settings, "EXTRACT_HTML_FIELD")
        #: Text hashes of items on their way to the exporter, by URL.
        self._hashes: dict[str, int] = {}
        crawler.signals.connect(self._exported, signal=exported_signal(crawler))
        crawler.signals.connect(self._dropped, signal=signals.item_dropped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RecrawlPipeline:
        return cls(crawler)

    def close_spider(self) -> None:
        # Before spider_closed, whose handlers include the crawl report.
        self.recrawl.flush()

    def _url(self, adapter: ItemAdapter) -> str | None:
        url = adapter.get(self.url_field)
        if not isinstance(url, str) or not url:
            return None
        if adapter.get(DISCOVERED_VIA_FIELD):
            return url  # planned by the spiders: canonical already
        return normalize_url(url) or url

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        url = self._url(adapter)
        text = adapter.get(TEXT_FIELD)
        if not isinstance(text, str):
            text = adapter.get(self.html_field)
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if url is None or not isinstance(text, str):
            return item
        hashed = text_hash(text)
        record = self.recrawl.record_of(url)
        if record is not None and record.text_hash == hashed and not record.gone:
            message = f"Unchanged since its last export: {url}"
            raise Unchanged(message, log_level=UNCHANGED_LOG_LEVEL)
        self._hashes[url] = hashed
        revision = record.revision + 1 if record is not None else 1
        previous = epoch_to_iso(record.last_export) if record is not None else None
        if not isinstance(item, dict) and not {REVISION_FIELD, PREVIOUS_EXPORT_FIELD} <= set(
            adapter.field_names()
        ):
            item = adapter.asdict()
            adapter = ItemAdapter(item)
        adapter[REVISION_FIELD] = revision
        adapter[PREVIOUS_EXPORT_FIELD] = previous
        return item

    def _exported(self, item: Any, response: Response | None = None, **_: Any) -> None:
        adapter = ItemAdapter(item)
        url = self._url(adapter)
        hashed = self._hashes.pop(url, None) if url else None
        if url is None or hashed is None:
            return
        self.recrawl.write(
            self.recrawl.state.record_export,
            url,
            hashed,
            self.recrawl.clock.now(),
            _validators(response),
            iso_to_epoch(adapter.get(self.date_field)),
            _source(adapter),
            _fingerprint(adapter),
        )
        self.recrawl.write(self.recrawl.visited, url, response, True)
        revision = adapter.get(REVISION_FIELD)
        outcome = RecrawlOutcome.NEW if revision == 1 else RecrawlOutcome.CHANGED
        self.recrawl.outcome(_site(response, url), outcome)

    def _dropped(
        self, item: Any, response: Response | None = None, exception: Any = None, **_: Any
    ) -> None:
        """Dropped for good (unchanged, no text, duplicate): decided, so its listed date and
        validators are remembered; its text and revision are not."""
        adapter = ItemAdapter(item)
        url = self._url(adapter)
        if url is None:
            return
        self._hashes.pop(url, None)
        self.recrawl.looked_up.pop(url, None)  # dropped before this stage asked for it
        if drop_reason(exception) not in FINAL_DROPS:
            return  # a timeout or an error: tried again next time
        listed = iso_to_epoch(adapter.get(self.date_field))
        self.recrawl.write(
            self.recrawl.state.record_seen, url, _validators(response), listed, _source(adapter)
        )
        self.recrawl.write(self.recrawl.visited, url, response, False)
        if isinstance(exception, Unchanged):
            self.recrawl.outcome(_site(response, url), RecrawlOutcome.UNCHANGED)


def _validators(response: Response | None) -> Validators:
    if response is None:
        return Validators()
    headers = response.headers
    return Validators.from_headers(headers.get("ETag"), headers.get("Last-Modified"))


def _source(adapter: ItemAdapter) -> str | None:
    """The sitemap or feed that listed the page (pages found otherwise have none kept)."""
    if adapter.get(DISCOVERED_VIA_FIELD) not in LISTINGS:
        return None
    source = adapter.get(SOURCE_URL_FIELD)
    return source if isinstance(source, str) and source else None


def _fingerprint(adapter: ItemAdapter) -> str | None:
    """The exported text's near-duplicate fingerprint: the next run's filter starts with it."""
    fp = adapter.get(FINGERPRINT_FIELD)
    return fp if isinstance(fp, str) and fp else None


def _site(response: Response | None, url: str) -> str:
    return site_of_request(getattr(response, "request", None), url)
