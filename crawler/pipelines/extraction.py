"""``ExtractionPipeline``: main text and metadata for every item carrying a page's HTML.

Extraction runs off the reactor thread, in a pool of worker processes (pebble) with a
per-page timeout that kills the worker; a pool that breaks is replaced and its pages are
extracted again, and a stopping crawl does not wait for the pages still to extract (they
are dropped as ``stopping``, and a resumed ``JOBDIR`` crawl fetches them again). Items
keep their own fields and gain every :class:`~crawler.document.Document` field; pages
without main text and near-duplicates are dropped. Works with any spider: the URL and HTML
field names are settings.
"""

from __future__ import annotations

import logging
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.misc import load_object
from scrapy_maintext.document import Document
from scrapy_maintext.exporters.feeds import exported_signal
from scrapy_maintext.extraction import is_fallback, neural_available
from scrapy_maintext.extraction.core import PageResult
from scrapy_maintext.extraction.worker import WorkerStatus, report
from scrapy_maintext.heap import HEAP_FREEZE
from scrapy_maintext.logformatter import PROGRESS, REPORT
from scrapy_maintext.pipelines.config import ExtractConfig
from scrapy_maintext.pipelines.items import item_encoding, merge_document
from scrapy_maintext.pipelines.runner import ExtractionRunner, ExtractionStopped, PageTask
from scrapy_maintext.render.renderer import RENDERED_NO_TEXT, Renderer
from scrapy_maintext.site_memory.stage import ITEM_FIELD, SiteMemoryStage
from scrapy_maintext.state.fingerprints import SeenFingerprints
from scrapy_maintext.state.recrawl import crawl_state_of
from scrapy_maintext.vocabulary.names import Signal, Stat
from scrapy_maintext.vocabulary.reasons import (
    DropReason,
    ExtractionFailed,
    ExtractionInterrupted,
    ExtractionTimeout,
    NearDuplicate,
    NeedsJavaScript,
    NoMainText,
    NoTextRendered,
    OtherLanguage,
    switched_off,
)
from twisted.internet.defer import Deferred, succeed

logger = logging.getLogger(__name__)

#: Pages without text and near-duplicates are routine in a crawl: not worth a warning.
ROUTINE_DROP_LOG_LEVEL = "INFO"


class ExtractionPipeline:
    """Item pipeline: extract main text and metadata from ``item[EXTRACT_HTML_FIELD]``."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = ExtractConfig.from_settings(crawler.settings)
        if not self.config.enabled:
            raise switched_off("ExtractionPipeline", "EXTRACT_ENABLED is off")
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
        self._closed = False
        # Pages that need JavaScript (RENDER_JS): rendered, or counted and said at the end.
        self.renderer = Renderer.from_crawler(crawler)
        crawler.signals.connect(self._render_closing, signal=signals.spider_closed)
        # A fingerprint is kept for later runs once every output took its document.
        crawler.signals.connect(self._item_scraped, signal=exported_signal(crawler))
        crawler.signals.connect(self._crawl_stopping, signal=Signal.CRAWL_STOPPING)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ExtractionPipeline:
        return cls(crawler)

    def open_spider(self) -> None:
        config = self.config
        self.runner = ExtractionRunner(config, self.stats)
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
        if self._closed or failure.check(ExtractionStopped):
            # A crawl with nothing to extract (a recurring crawl where nothing changed)
            # closes before its workers are up: their warm-up is cancelled, no failure.
            logger.debug("Extraction workers stopped before they started")
            return
        logger.warning("Extraction workers failed to start: %s", failure.getErrorMessage())

    def _open_fingerprints(self) -> Any:
        """``EXTRACT_DEDUP_STORE`` (a distributed crawl shares them in Redis), or this
        process's own, kept in JOBDIR, with those of earlier runs kept in ``CRAWL_STATE``."""
        store = self.config.dedup_store
        if store:
            return load_object(store).from_crawler(self.crawler, self.config.dedup_distance)
        recrawl = crawl_state_of(self.crawler)
        if recrawl is None:
            return SeenFingerprints(self.config.dedup_distance, self.config.jobdir)
        return SeenFingerprints(
            self.config.dedup_distance,
            self.config.jobdir,
            earlier=recrawl.state.fingerprints(),
            own=recrawl.exported_fingerprint,
        )

    def _item_scraped(self, item: Any) -> None:
        if self.seen is not None:
            self.seen.confirm(ItemAdapter(item).get("fingerprint"))

    def _crawl_stopping(self) -> None:
        """The crawl is stopping: pages not extracted yet are dropped as ``stopping``."""
        if self.runner is None or self.runner.pool is None:
            return
        if self.runner.pending:
            logger.info(
                "Stopping: %d pages not extracted are left for a resumed crawl",
                self.runner.pending,
                extra=PROGRESS,
            )
        self.runner.stop()

    def close_spider(self) -> None:
        self._closed = True
        if self.config.gc_freeze:
            HEAP_FREEZE.release()
        if self.site_memory is not None:
            self.site_memory.close(self._judge)
        if self.runner is not None:
            # The workers are stopped in a thread: one that ignores SIGTERM holds nothing.
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
        self._inc(Stat.EXTRACT_ITEMS)
        if self.runner is None:
            raise RuntimeError("ExtractionPipeline used before open_spider")
        turn: Deferred = Deferred()
        previous, self._last_turn = self._last_turn, turn
        decision: Deferred | None = None
        try:
            page = PageTask(html, url, item_encoding(adapter, html))
            archived = adapter.get("warc_record_id")
            result = await self._render_if_needed(await self._extract(page), page, archived)
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

    async def _render_if_needed(
        self, result: PageResult, page: PageTask, archived: Any = None
    ) -> PageResult:
        """The page rendered and extracted again when it needs JavaScript (issue 46) and the
        render gives more text; else ``result``."""
        doc, renderer = result.doc, self.renderer
        if doc.needs_javascript:
            self._inc(Stat.EXTRACT_NEEDS_JAVASCRIPT)
        if doc.text_source.startswith("embedded:"):
            self._inc(Stat.EXTRACT_EMBEDDED + doc.text_source.removeprefix("embedded:"))
        if renderer is None or page.url is None or not renderer.wants(doc):
            return result
        if not renderer.can_render:
            renderer.count_unrendered()
            return result
        body, encoding = page.html, page.encoding
        if isinstance(body, str):
            body, encoding = body.encode("utf-8", "surrogatepass"), "utf-8"
        refers_to = str(archived) if archived else None
        rendered = await renderer.render(page.url, body, encoding, None, refers_to)
        if rendered.html is None:
            if self.runner is not None and self.runner.stopping:
                # The crawl stopped under the render: not done, a resumed crawl renders it.
                self._inc(Stat.EXTRACT_DROPPED + DropReason.STOPPING)
                message = f"Not rendered, the crawl is stopping: {page.url}"
                raise ExtractionInterrupted(message, log_level=ROUTINE_DROP_LOG_LEVEL)
            doc.render_failure = rendered.why
            return result
        again = await self._extract(PageTask(rendered.html, page.url, rendered.encoding))
        if len(again.doc.text.strip()) <= len(doc.text.strip()):
            # Its scripts ran and wrote nothing more: what the page has is its text.
            doc.render_failure, doc.needs_javascript = RENDERED_NO_TEXT, False
            return result
        self._inc(Stat.RENDER_USED)
        again.doc.text_source, again.doc.needs_javascript = "rendered", False
        return again

    def _render_closing(self) -> None:
        """The crawl's last lines: pages that needed JavaScript and were not rendered."""
        line = self.renderer.last_words() if self.renderer is not None else None
        if line:
            logger.warning("%s", line, extra=REPORT)

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
        except ExtractionStopped as exc:
            self._inc(Stat.EXTRACT_DROPPED + DropReason.STOPPING)
            message = f"Not extracted, {exc}: {url}"
            raise ExtractionInterrupted(message, log_level=ROUTINE_DROP_LOG_LEVEL) from None
        except FutureTimeout:
            self._inc(Stat.EXTRACT_TIMEOUT)
            message = f"Extraction timed out after {self.config.timeout:.0f}s: {url}"
            raise ExtractionTimeout(message) from None
        except Exception as exc:
            self._inc(Stat.EXTRACT_ERROR)
            raise ExtractionFailed(f"Extraction failed ({type(exc).__name__}): {url}") from exc

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)

    def _count(self, doc: Document) -> None:
        if doc.neural_error:
            self._neural_failed(doc)
        for note in doc.notes:
            self._inc(Stat.EXTRACT_REPAIRED + note)
        if doc.extractor:
            self._inc(Stat.EXTRACT_BY + doc.extractor)
        if is_fallback(doc):
            self._inc(Stat.EXTRACT_FALLBACK)
        if doc.escalated:
            self._inc(Stat.EXTRACT_ESCALATED)
        if doc.trafilatura_bounded:
            self._inc(Stat.EXTRACT_TRAFILATURA_BOUNDED + doc.trafilatura_bounded)
        if doc.reason:
            self._inc(Stat.EXTRACT_REASON + doc.reason)
        else:
            self._inc(Stat.EXTRACT_LANGUAGE + (doc.language or "unknown"))

    def _neural_failed(self, doc: Document) -> None:
        """Count a model error apart from an unsure model; warn once per crawl."""
        self._inc(Stat.EXTRACT_NEURAL_ERROR)
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

    def _check_script_built(self, doc: Document, url: str | None, too_short: bool) -> None:
        """Drop a page its scripts write that has no main text: rendered and still without
        (``no_text_rendered``), or not rendered (``needs_javascript``: what text it has
        without its scripts is its shell, a header, a footer, "Loading", not its text)."""
        if doc.render_failure == RENDERED_NO_TEXT and too_short:
            self._inc(Stat.EXTRACT_DROPPED + DropReason.NO_TEXT_RENDERED)
            message = f"No main text after rendering: {url}"
            raise NoTextRendered(message, log_level=ROUTINE_DROP_LOG_LEVEL)
        if doc.needs_javascript:
            self._inc(Stat.EXTRACT_DROPPED + DropReason.NEEDS_JAVASCRIPT)
            failed = doc.render_failure
            how = f"the render failed: {failed}" if failed else "not rendered"
            message = f"No main text without JavaScript ({how}): {url}"
            raise NeedsJavaScript(message, log_level=ROUTINE_DROP_LOG_LEVEL)

    def _check(self, doc: Document, url: str | None) -> None:
        """Raise DropItem for pages without enough main text, in a language not kept and for
        near-duplicates."""
        too_short = len(doc.text.strip()) < max(self.config.min_text_length, 1)
        if self.config.drop_no_text:
            self._check_script_built(doc, url, too_short)
        if too_short and self.config.drop_no_text:
            self._inc(Stat.EXTRACT_DROPPED + DropReason.NO_TEXT)
            message = f"No main text ({doc.reason or 'too-short'}): {url}"
            raise NoMainText(message, log_level=ROUTINE_DROP_LOG_LEVEL)
        languages = self.config.languages
        if languages and doc.language not in languages:
            self._inc(Stat.EXTRACT_DROPPED + DropReason.LANGUAGE)
            message = f"Language {doc.language or 'unknown'} not in EXTRACT_LANGUAGES: {url}"
            raise OtherLanguage(message, log_level=ROUTINE_DROP_LOG_LEVEL)
        if self.seen is None or not doc.fingerprint:
            return
        duplicate_of = self.seen.check_and_add(doc.fingerprint, url)
        if duplicate_of is not None:
            self._inc(Stat.EXTRACT_DROPPED + DropReason.DUPLICATE)
            message = f"Near-duplicate of fingerprint {duplicate_of}: {url}"
            raise NearDuplicate(message, log_level=ROUTINE_DROP_LOG_LEVEL)
