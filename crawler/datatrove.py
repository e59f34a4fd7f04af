"""Re-extraction at scale on datatrove: our extractor as a pipeline step, and a WARC reader
that keeps each record's provenance.

``pip install "scrapy-maintext[datatrove]"``. :class:`Maintext` stands where datatrove's own
``Trafilatura`` step stands (a :class:`~datatrove.pipeline.extractors.base.BaseExtractor`): it
runs in a sandbox process per task (the model loaded once, every document under a timeout)
and puts the metadata into ``Document.metadata``. :class:`WarcReader` is datatrove's WARC
reader that also gives each document its record's offset, HTTP status and payload digest and
reads only 2xx answers, as ``maintext extract`` does::

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter
    from scrapy_maintext.datatrove import Maintext, WarcReader

    LocalPipelineExecutor(
        pipeline=[WarcReader("crawl/warc/"), Maintext(), JsonlWriter("corpus/")],
        tasks=8,
        logging_dir="logs/",
    ).run()
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import logging
import os
from collections.abc import Iterator
from typing import Any

try:
    from datatrove.data import Document as DatatroveDocument
    from datatrove.data import DocumentsPipeline
    from datatrove.pipeline.extractors.base import BaseExtractor, ExtractorSandbox
    from datatrove.pipeline.readers.warc import WarcReader as DatatroveWarcReader
    from datatrove.pipeline.readers.warc import process_record
    from datatrove.utils.logging import logger
    from datatrove.utils.typeshelper import StatHints
except ImportError:  # pragma: no cover - the extra's absence is tested in a subprocess
    # ``from None``: the missing extra is the whole story, not datatrove's own import chain.
    raise ImportError(
        'scrapy_maintext.datatrove needs datatrove: pip install "scrapy-maintext[datatrove]"'
    ) from None

from scrapy_maintext.archive.provenance import Provenance, bare_record_id, fetch_time
from scrapy_maintext.archive.reader import Damage, damage_message, read_records
from scrapy_maintext.extraction import ExtractOptions, extract
from scrapy_maintext.extraction.engines import neural_load
from scrapy_maintext.extraction.worker import WARM_UP_PAGE, collector_paused
from scrapy_maintext.fields.language import identifier
from scrapy_maintext.fields.metadata import warm_date_parser

logger = logging.getLogger(__name__)

#: The page each sandbox extracts before the first document (datatrove's ``warmup_text``).
WARM_UP = (WARM_UP_PAGE, "https://warm-up.invalid/")

#: Document fields put into ``Document.metadata`` (``extractor`` is the engine).
METADATA_FIELDS = (
    "title",
    "author",
    "authors",
    "date",
    "date_modified",
    "sitename",
    "hostname",
    "description",
    "categories",
    "tags",
    "language",
    "license",
    "image",
    "extractor",
    "model_version",
    "confidence",
    "fingerprint",
)


class Maintext(BaseExtractor):
    """Main text and metadata by scrapy-maintext's extractor (neural, trafilatura fallback).

    Args:
        engine: ``auto`` (default), ``neural`` or ``trafilatura``, as ``EXTRACT_ENGINE``.
        timeout: seconds per document; the sandbox's start (loading the model) too.
        markdown: also put the text as Markdown into ``metadata["markdown"]``.
        model: a neural model folder instead of the shipped one.
        **options: the other :class:`~scrapy_maintext.extraction.ExtractOptions`
            (``include_comments``, ``include_tables``, ``favor_precision``, ...).
    """

    name = "🌿 Maintext"
    #: Set by BaseExtractor: the first extraction error has been logged.
    _warned_error: bool

    def __init__(
        self,
        engine: str = "auto",
        timeout: float = 30.0,
        markdown: bool = False,
        model: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(timeout)
        self.options = ExtractOptions(engine=engine, model=model, **options)
        self.markdown = markdown

    def extract(self, text: str) -> str:
        """The main text alone (what datatrove's ``BaseExtractor.run`` would use)."""
        return extract(text, None, self.options).text

    def extract_document(self, html: str, url: str | None) -> dict[str, Any]:
        """Text and metadata of one page (runs in the sandbox process, which extracts pages
        one after the other: the collector is paused for the page)."""
        with collector_paused():
            doc = extract(html, url or None, self.options)
        metadata = {name: getattr(doc, name) for name in METADATA_FIELDS}
        metadata["images"] = [image.to_dict() for image in doc.images]
        if self.markdown:
            from scrapy_maintext.exporters.markdown import markdown_body

            metadata["markdown"] = markdown_body(doc.body, images=doc.images)
        return {"text": doc.text, "metadata": metadata}

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        self.warm_up()
        with ExtractorSandbox(timeout=self.timeout, warmup_text=WARM_UP) as sandbox:
            for doc in data:
                self.stat_update(StatHints.total)
                with self.track_time():
                    result = self._extract_in(sandbox, doc)
                if result is None:
                    continue
                if not result["text"]:
                    self.stat_update(StatHints.dropped)
                    continue
                _set_result(doc, result)
                self.stat_update(StatHints.forwarded)
                self.update_doc_stats(doc)
                yield doc

    def warm_up(self) -> None:
        """The task process loads what the crawl's fork server preloads
        (``extraction.preload``): the language model, the model's ONNX session, dateparser's
        locale data (else compiled on the first pages that need it), and extracts the warm-up
        page. The sandbox process, forked from this one, then starts warm, and so does each
        one that replaces a sandbox killed by a timeout (instead of loading it all again, at
        the risk of the timeout). What is loaded then leaves the collector's passes: full
        passes over it would cost every document (``benchmarks.datatrove_throughput``)."""
        # A failure here is left to the pages, where it is counted (as in the crawl's
        # workers); the neural load logs its own once.
        with contextlib.suppress(Exception):
            identifier()
            warm_date_parser()
        if self.options.engine != "trafilatura":
            neural_load(self.options.model)
        with contextlib.suppress(Exception):
            self.extract_document(*WARM_UP)
        gc.collect()
        gc.freeze()

    def _extract_in(self, sandbox: Any, doc: DatatroveDocument) -> dict[str, Any] | None:
        url = doc.metadata.get("url")
        try:
            result: dict[str, Any] = sandbox.process_document(
                (doc.text, url), self.extract_document
            )
        except TimeoutError:
            self.stat_update("timeout")
            logger.warning("Extraction timed out: %s", url)
        except EOFError:
            self.stat_update("broken_process")
            logger.warning("Extraction process died on %s; a new one takes the next", url)
        except Exception as exc:
            self.stat_update("clean_error")
            if not self._warned_error:
                self._warned_error = True
                logger.warning("Extraction failed (%s) on %s (logged once)", exc, url)
        else:
            return result
        return None


def _set_result(doc: DatatroveDocument, result: dict[str, Any]) -> None:
    """The extracted text, and metadata beside the reader's (its WARC-Date, which the
    page's own ``date`` replaces, is kept as ``fetched_at``)."""
    metadata = doc.metadata
    if "fetched_at" not in metadata and metadata.get("date"):
        metadata["fetched_at"] = fetch_time(str(metadata["date"]))
    if "warc_file" not in metadata and metadata.get("file_path"):
        metadata["warc_file"] = os.path.basename(str(metadata["file_path"]))
    if "warc_record_id" not in metadata and doc.id:
        metadata["warc_record_id"] = bare_record_id(str(doc.id))
    metadata.update(result["metadata"])
    doc.text = result["text"]


class WarcReader(DatatroveWarcReader):
    """datatrove's WARC reader, for 2xx answers only, with each record's provenance
    (``warc_file``, ``warc_offset``, ``warc_record_id``, ``payload_digest``, ``status``,
    ``fetched_at``) in ``Document.metadata``."""

    name = "🕷 Warc (maintext)"

    def read_file(self, filepath: str) -> Iterator[DatatroveDocument]:
        # warcio reads a .warc.gz member by member itself: offsets are then the file's own
        # (read through a decompressing stream, they would be offsets in the WARC inside).
        compression = None if filepath.endswith(".gz") else self.compression
        damaged: list[Damage] = []
        count = itertools.count()

        def document(record: Any, offset: int) -> DatatroveDocument | None:
            with self.track_time():
                return self._document(record, offset, filepath, next(count))

        with self.data_folder.open(filepath, "rb", compression=compression) as f:
            yield from read_records(f, document, damaged)
        for damage in damaged:
            self._report(filepath, damage)

    def _report(self, filepath: str, damage: Damage) -> None:
        """A skipped record counted and logged as ``maintext extract`` does."""
        if damage.cut:
            self.stat_update("cut_short")
        elif damage.rest:
            self.stat_update("unreadable_rest")
            logger.error(
                "%s: not readable from offset %d on (%s)", filepath, damage.offset, damage.error
            )
            return
        elif damage.skipped:
            self.stat_update("damaged_records")
        logger.warning("%s", damage_message(filepath, damage))

    def _document(
        self, record: Any, offset: int, filepath: str, index: int
    ) -> DatatroveDocument | None:
        if record.rec_type != "response" or record.http_headers is None:
            return None
        if not str(record.http_headers.get_statuscode()).startswith("2"):
            return None
        data = process_record(record)
        if not data:
            return None
        document = self.get_document_from_dict(data, filepath, index)
        if document is not None:
            provenance = Provenance.of_record(record, os.path.basename(filepath), offset)
            document.metadata.update(provenance.to_dict())
        return document
