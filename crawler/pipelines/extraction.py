"""``ExtractionPipeline``: main text and metadata for every item carrying a page's HTML.

Extraction runs off the reactor thread, in a pool of worker processes (pebble) with a
per-page timeout that kills the worker. Items keep their own fields and gain every
:class:`~crawler.document.Document` field; pages without main text and near-duplicates
are dropped. Works with any spider: the URL and HTML field names are settings.
"""

from __future__ import annotations

import logging
import os
import re
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from itemadapter import ItemAdapter
from pebble import ProcessPool
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.settings import BaseSettings
from scrapy.utils.conf import build_component_list
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import load_object
from scrapy_maintext.document import Document
from scrapy_maintext.extraction import (
    ENGINES,
    ExtractOptions,
    FingerprintIndex,
    is_fallback,
    neural_available,
)
from scrapy_maintext.extraction.core import PageResult, extract_page
from scrapy_maintext.extraction.fingerprint import DEFAULT_MAX_DISTANCE
from scrapy_maintext.extraction.options import DEFAULT_MAX_BYTES, model_folder
from scrapy_maintext.extraction.worker import (
    WorkerStatus,
    init_worker,
    report,
    warm_up,
    worker_context,
)
from scrapy_maintext.heap import HEAP_FREEZE
from scrapy_maintext.site_memory.stage import ITEM_FIELD, SiteMemoryStage
from twisted.internet.defer import Deferred, succeed
from twisted.internet.threads import deferToThread

logger = logging.getLogger(__name__)

#: Per-page wall-clock limit: trafilatura takes well under a second on real pages, so a
#: page still running after this long is hostile and its worker is killed.
DEFAULT_TIMEOUT = 30.0
#: Workers are recycled after this many pages to bound memory growth in lxml/onnxruntime.
MAX_TASKS_PER_WORKER = 500
#: File in JOBDIR holding the fingerprints of kept documents, one per line.
FINGERPRINTS_FILE = "extract-fingerprints.txt"
#: Pages without text and near-duplicates are routine in a crawl: not worth a warning.
ROUTINE_DROP_LOG_LEVEL = "INFO"

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class ExtractConfig:
    """The ``EXTRACT_*`` settings, read once."""

    enabled: bool = True
    #: How each page is extracted (EXTRACT_ENGINE, EXTRACT_INCLUDE_*, EXTRACT_FAVOR_*, ...).
    options: ExtractOptions = field(default_factory=ExtractOptions)
    workers: int = 1
    timeout: float = DEFAULT_TIMEOUT
    url_field: str = "url"
    html_field: str = "html"
    keep_html: bool = False
    dedup: bool = True
    dedup_distance: int = DEFAULT_MAX_DISTANCE
    min_text_length: int = 1
    drop_no_text: bool = True
    date_field: str = "source_date"
    title_field: str = "source_title"
    jobdir: str | None = None
    gc_freeze: bool = True

    @property
    def engine(self) -> str:
        return self.options.engine

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> ExtractConfig:
        engine = settings.get("EXTRACT_ENGINE", "auto")
        if engine not in ENGINES:
            raise ValueError(f"EXTRACT_ENGINE must be one of {ENGINES}, not {engine!r}")
        options = ExtractOptions(
            engine=engine,
            include_comments=settings.getbool("EXTRACT_INCLUDE_COMMENTS", False),
            include_tables=settings.getbool("EXTRACT_INCLUDE_TABLES", True),
            favor_precision=settings.getbool("EXTRACT_FAVOR_PRECISION", False),
            favor_recall=settings.getbool("EXTRACT_FAVOR_RECALL", False),
            max_bytes=settings.getint("EXTRACT_MAX_BYTES", DEFAULT_MAX_BYTES),
            model=model_folder(settings.get("EXTRACT_MODEL"), "EXTRACT_MODEL"),
        )
        return cls(
            enabled=settings.getbool("EXTRACT_ENABLED", True),
            options=options,
            workers=extract_workers(settings),
            timeout=settings.getfloat("EXTRACT_TIMEOUT", DEFAULT_TIMEOUT),
            url_field=settings.get("EXTRACT_URL_FIELD", "url"),
            html_field=settings.get("EXTRACT_HTML_FIELD", "html"),
            keep_html=settings.getbool("EXTRACT_KEEP_HTML", False),
            dedup=settings.getbool("EXTRACT_DEDUP", True),
            dedup_distance=settings.getint("EXTRACT_DEDUP_DISTANCE", DEFAULT_MAX_DISTANCE),
            min_text_length=settings.getint("EXTRACT_MIN_TEXT_LENGTH", 1),
            drop_no_text=settings.getbool("EXTRACT_DROP_NO_TEXT", True),
            date_field=settings.get("EXTRACT_DATE_FALLBACK_FIELD", "source_date") or "",
            title_field=settings.get("EXTRACT_TITLE_FALLBACK_FIELD", "source_title") or "",
            jobdir=settings.get("JOBDIR") or None,
            gc_freeze=settings.getbool("EXTRACT_GC_FREEZE", True),
        )


def extract_workers(settings: BaseSettings) -> int:
    """``EXTRACT_WORKERS``, or one worker per CPU core when it is unset."""
    workers = settings.get("EXTRACT_WORKERS")
    return (os.cpu_count() or 1) if workers is None else int(workers)


#: Item field with the character encoding of a bytes ``html`` field (the crawl's
#: ``response.encoding``); without it, bytes are sniffed like any other body.
ENCODING_FIELD = "encoding"


@dataclass(frozen=True)
class PageTask:
    """What an extraction worker gets of an item."""

    html: str | bytes
    url: str | None
    #: Known encoding of a bytes ``html`` (decoded as Scrapy's ``response.text``).
    encoding: str | None = None


def takes_body_bytes(settings: BaseSettings) -> bool:
    """Whether this crawl's ExtractionPipeline takes a bytes ``html`` field and removes it.

    The bundled spiders then send ``response.body`` (decoded in the worker); otherwise
    ``response.text``, so that items exported with their HTML (extraction off, another
    HTML field, ``EXTRACT_KEEP_HTML``) carry text as before. ``DISCOVERY_HTML_BYTES=False``
    keeps the text for a pipeline of the project's that reads ``html`` before extraction.
    """
    if not settings.getbool("DISCOVERY_HTML_BYTES", True):
        return False
    if not settings.getbool("EXTRACT_ENABLED", True) or settings.getbool("EXTRACT_KEEP_HTML"):
        return False
    if settings.get("EXTRACT_HTML_FIELD", "html") != "html":
        return False
    pipelines = build_component_list(settings.getwithbase("ITEM_PIPELINES"))
    return any(_is_extraction_pipeline(load_object(path)) for path in pipelines)


def _is_extraction_pipeline(component: Any) -> bool:
    return isinstance(component, type) and issubclass(component, ExtractionPipeline)


def _encoding(adapter: ItemAdapter, html: str | bytes) -> str | None:
    encoding = adapter.get(ENCODING_FIELD) if isinstance(html, bytes) else None
    return encoding if isinstance(encoding, str) and encoding else None


class ExtractionRunner:
    """Runs :func:`extract` in worker processes (or threads when ``workers`` is 0)."""

    def __init__(self, config: ExtractConfig) -> None:
        self.timeout = config.timeout
        self.options = config.options
        self.pool: ProcessPool | None = None
        if config.workers > 0:
            self.pool = ProcessPool(
                max_workers=config.workers,
                max_tasks=MAX_TASKS_PER_WORKER,
                context=worker_context(),
                initializer=init_worker,
                initargs=(config.options,),
            )

    def start(self) -> Deferred:
        """Start the workers now (each loads the model), not with the first page; fires
        with a :class:`WorkerStatus`."""
        if self.pool is None:
            return deferToThread(warm_up, self.options)
        return self._settled(self.pool.schedule(warm_up, args=(self.options,)))

    def submit(self, page: PageTask, options: ExtractOptions, signatures: bool) -> Deferred:
        """Fires with a :class:`PageResult` (with block signatures when asked for)."""
        args = (page.html, page.url, options, signatures, page.encoding)
        if self.pool is None:
            return deferToThread(extract_page, *args)
        return self._settled(self.pool.schedule(extract_page, args=args, timeout=self.timeout))

    @staticmethod
    def _settled(future: Future) -> Deferred:
        """A Deferred fired on the reactor thread with the future's outcome."""
        from twisted.internet import reactor

        deferred: Deferred = Deferred()
        future.add_done_callback(lambda f: reactor.callFromThread(_settle, deferred, f))
        return deferred

    def close(self) -> None:
        if self.pool is not None:
            self.pool.stop()
            self.pool.join()


def _settle(deferred: Deferred, future: Future) -> None:
    error = future.exception()
    if error is None:
        deferred.callback(future.result())
    else:
        deferred.errback(error)


class SeenFingerprints:
    """Fingerprints of kept documents, persisted in JOBDIR so a resumed crawl remembers.

    A fingerprint reaches the file only once its item is exported (:meth:`confirm`): a
    page killed between extraction and export is fetched again by the resumed crawl and
    must not then be dropped as a duplicate of itself.
    """

    def __init__(self, max_distance: int, jobdir: str | None) -> None:
        self.index = FingerprintIndex(max_distance=max_distance)
        self._file: IO[str] | None = None
        self._pending: set[str] = set()
        if jobdir:
            path = Path(jobdir) / FINGERPRINTS_FILE
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                for line in path.read_text(encoding="ascii").split():
                    self.index.add(line)
            self._file = path.open("a", encoding="ascii")

    def __len__(self) -> int:
        return len(self.index)

    def check_and_add(self, fp: str, url: str | None = None) -> str | None:
        found = self.index.check_and_add(fp)
        if found is None and fp and self._file is not None:
            self._pending.add(fp)
        return found

    def confirm(self, fp: Any) -> None:
        """The item with fingerprint ``fp`` was exported: remember it across runs."""
        if self._file is not None and fp in self._pending:
            self._pending.discard(fp)
            self._file.write(fp + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


class ExtractionPipeline:
    """Item pipeline: extract main text and metadata from ``item[EXTRACT_HTML_FIELD]``."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = ExtractConfig.from_settings(crawler.settings)
        if not self.config.enabled:
            raise NotConfigured("EXTRACT_ENABLED is off")
        if self.config.engine == "neural" and not neural_available(self.config.options.model):
            raise RuntimeError("EXTRACT_ENGINE is 'neural' but the neural extractor is missing")
        self.options = self.config.options
        self.stats = crawler.stats
        self.runner: ExtractionRunner | None = None
        self.seen: SeenFingerprints | Any = None
        # One memory per site, fed in arrival order (inside the turns below).
        self.site_memory = SiteMemoryStage.from_crawler(crawler)
        # Items are judged (no text? duplicate?) in the order they arrived, whatever order
        # the workers finish in, so which near-duplicate is kept does not depend on timing.
        self._last_turn: Deferred = succeed(None)
        self._neural_warned = False
        # Connected after the feed exporter (extensions exist before pipelines).
        crawler.signals.connect(self._item_scraped, signal=signals.item_scraped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ExtractionPipeline:
        return cls(crawler)

    def open_spider(self) -> None:
        config = self.config
        self.runner = ExtractionRunner(config)
        # The workers load the model while discovery runs; their status reaches the crawl
        # log once (workers log nowhere).
        self.runner.start().addCallbacks(self._workers_started, self._workers_failed)
        if config.dedup:
            self.seen = self._open_fingerprints()
        if self.site_memory is not None:
            self.site_memory.open(self._flush_site_memory)
        if config.gc_freeze:
            # Last: if anything above raises, Scrapy calls no close_spider to thaw it.
            HEAP_FREEZE.hold()
        logger.info(
            "Extraction: engine=%s workers=%d timeout=%.0fs dedup=%s (%d fingerprints known)",
            config.engine,
            config.workers,
            config.timeout,
            config.dedup,
            len(self.seen) if self.seen else 0,
        )

    def _workers_started(self, status: WorkerStatus) -> None:
        # Extraction threads (EXTRACT_WORKERS=0) load the model in this process, which has
        # logged a failure already.
        if self.runner is not None and self.runner.pool is not None:
            report(status, logger)

    def _workers_failed(self, failure: Any) -> None:
        logger.warning("Extraction workers failed to start: %s", failure.getErrorMessage())

    def _open_fingerprints(self) -> Any:
        """``EXTRACT_DEDUP_STORE`` (a distributed crawl shares them in Redis), or this
        process's own, kept in JOBDIR."""
        store = self.crawler.settings.get("EXTRACT_DEDUP_STORE")
        if store:
            return load_object(store).from_crawler(self.crawler, self.config.dedup_distance)
        return SeenFingerprints(self.config.dedup_distance, self.config.jobdir)

    def _item_scraped(self, item: Any) -> None:
        if self.seen is not None:
            self.seen.confirm(ItemAdapter(item).get("fingerprint"))

    def close_spider(self) -> None:
        if self.config.gc_freeze:
            HEAP_FREEZE.release()
        if self.site_memory is not None:
            self.site_memory.close(self._judge)
        if self.runner is not None:
            self.runner.close()
        if self.seen is not None:
            self.seen.close()

    async def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        html = adapter.get(self.config.html_field)
        if not isinstance(html, str | bytes):
            return item
        url = adapter.get(self.config.url_field)
        url = str(url) if url else None
        self._inc("extract/items")
        if self.runner is None:
            raise RuntimeError("ExtractionPipeline used before open_spider")
        turn: Deferred = Deferred()
        previous, self._last_turn = self._last_turn, turn
        decision: Deferred | None = None
        try:
            result = await self._extract(PageTask(html, url, _encoding(adapter, html)))
            await maybe_deferred_to_future(previous)
            if self.site_memory is None:
                self._judge(result.doc, url)
            else:
                decision = self.site_memory.arrive(url, result, len(html), self._judge)
        finally:
            turn.callback(None)
        doc, extra = result.doc, {}
        if decision is not None:
            # Fired now, or once the page's site has its warm-up pages (DropItem if dropped).
            doc, removed = await maybe_deferred_to_future(decision)
            extra[ITEM_FIELD] = removed
        logger.debug("Extracted %s: %d chars by %s", url, len(doc.text), doc.extractor)
        return merge_document(item, doc, self.config, extra)

    def _judge(self, doc: Document, url: str | None) -> None:
        self._count(doc)
        self._check(doc, url)

    def _flush_site_memory(self) -> None:
        """Decide every page held for its site's warm-up, in turn after the items before."""
        turn: Deferred = Deferred()
        previous, self._last_turn = self._last_turn, turn

        def flush(_: object) -> None:
            try:
                if self.site_memory is not None:
                    self.site_memory.flush(self._judge)
            finally:
                turn.callback(None)

        previous.addBoth(flush)

    async def _extract(self, page: PageTask) -> PageResult:
        assert self.runner is not None
        url = page.url
        signatures = self.site_memory is not None
        submitted = self.runner.submit(page, self.options, signatures)
        try:
            return await maybe_deferred_to_future(submitted)
        except FutureTimeout:
            self._inc("extract/timeout")
            message = f"Extraction timed out after {self.config.timeout:.0f}s: {url}"
            raise DropItem(message) from None
        except Exception as exc:
            self._inc("extract/error")
            raise DropItem(f"Extraction failed ({type(exc).__name__}): {url}") from exc

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)

    def _count(self, doc: Document) -> None:
        if doc.neural_error:
            self._neural_failed(doc)
        for note in doc.notes:
            self._inc(f"extract/repaired/{note}")
        if doc.extractor:
            self._inc(f"extract/{doc.extractor}")
        if is_fallback(doc):
            self._inc("extract/fallback")
        if doc.escalated:
            self._inc("extract/neural_escalated")
        if doc.reason:
            self._inc(f"extract/reason/{doc.reason}")

    def _neural_failed(self, doc: Document) -> None:
        """Count a model error apart from an unsure model; warn once per crawl."""
        self._inc("extract/neural_error")
        if self._neural_warned:
            return
        self._neural_warned = True
        then = "dropped" if self.config.engine == "neural" else "extracted by trafilatura"
        logger.warning(
            "Neural engine failed on %s (%s): such pages are %s, counted as "
            "extract/neural_error (logged once)",
            doc.url,
            doc.neural_error,
            then,
        )

    def _check(self, doc: Document, url: str | None) -> None:
        """Raise DropItem for pages without enough main text and for near-duplicates."""
        too_short = len(doc.text.strip()) < max(self.config.min_text_length, 1)
        if too_short and self.config.drop_no_text:
            self._inc("extract/dropped/no_text")
            message = f"No main text ({doc.reason or 'too-short'}): {url}"
            raise DropItem(message, log_level=ROUTINE_DROP_LOG_LEVEL)
        if self.seen is None or not doc.fingerprint:
            return
        duplicate_of = self.seen.check_and_add(doc.fingerprint, url)
        if duplicate_of is not None:
            self._inc("extract/dropped/duplicate")
            message = f"Near-duplicate of fingerprint {duplicate_of}: {url}"
            raise DropItem(message, log_level=ROUTINE_DROP_LOG_LEVEL)


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
