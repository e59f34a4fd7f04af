"""``maintext extract``: offline extraction of HTML files, directories and WARC archives.

Documents are extracted in a pool of worker processes (all cores by default) with a
per-document timeout, and written in input order, so a run is reproducible whatever the
worker timing. A progress bar shows documents/s and the ETA; a summary ends the run.
"""

from __future__ import annotations

import logging
import sys
import time
from collections import Counter, deque
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from scrapy_maintext.cli.inputs import (
    InputFile,
    InputOptions,
    InputProblems,
    SourceDocument,
    count_documents,
)
from scrapy_maintext.cli.inputs import iter_documents as read_inputs
from scrapy_maintext.cli.outputs import OutputSpec, Writer, open_writer
from scrapy_maintext.cpu import usable_cores
from scrapy_maintext.document import Document
from scrapy_maintext.extraction import ExtractOptions
from scrapy_maintext.extraction.core import PageResult, extract_page
from scrapy_maintext.extraction.worker import (
    init_worker,
    report,
    warm_up,
    worker_context,
    worker_extract_page,
)
from scrapy_maintext.render.availability import NEEDS_JAVASCRIPT, RENDER_HINT
from scrapy_maintext.report.header import run_header
from scrapy_maintext.report.sites import RunReport, SiteReport, engine_of, site_of_url
from scrapy_maintext.site_memory.registry import (
    Decided,
    Pending,
    SiteMemories,
    SiteMemoriesOptions,
    site_key,
)
from scrapy_maintext.site_memory.stage import ITEM_FIELD as SITE_MEMORY_FIELD
from scrapy_maintext.vocabulary.names import Note

logger = logging.getLogger(__name__)

#: Documents queued per worker: enough to keep every core busy while the oldest is
#: written, few enough that a WARC of large pages is not read into memory at once.
QUEUE_PER_WORKER = 4
#: Workers are recycled after this many documents (lxml/onnxruntime memory growth), as
#: in the crawl's extraction pool.
MAX_TASKS_PER_WORKER = 500
#: The report's site of documents without a host (files without --base-url).
LOCAL_FILES = "local files"
#: Exit status after Ctrl-C (128 + SIGINT, as shells report it).
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class ExtractJob:
    """Everything ``maintext extract`` was asked to do."""

    #: The inputs named on the command line, expanded (see ``inputs.expand``).
    inputs: list[InputFile]
    output: OutputSpec
    options: ExtractOptions = field(default_factory=ExtractOptions)
    input_options: InputOptions = field(default_factory=InputOptions)
    #: Worker processes; 0 extracts in this process (no timeout).
    workers: int = field(default_factory=usable_cores)
    timeout: float = 30.0
    resume: bool = False
    #: Also write documents without main text (with their ``reason``).
    keep_empty: bool = False
    progress: bool = True
    #: ``--site-memory``: template blocks repeated across a site's pages removed, as a crawl
    #: with ``SITE_MEMORY_ENABLED`` does (pages in input order; held for a site's warm-up).
    site_memory: SiteMemoriesOptions | None = None


@dataclass
class Summary:
    read: int = 0
    written: int = 0
    already_done: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    problems: InputProblems = field(default_factory=InputProblems)
    #: Stopped by Ctrl-C: what was written is complete and ``--resume`` goes on.
    interrupted: bool = False
    #: The crawl report's numbers for this run (``--report``), one site per host.
    report: RunReport = field(default_factory=RunReport)
    model_versions: Counter[str] = field(default_factory=Counter)

    @property
    def exit_status(self) -> int:
        """0 done; 1 an input could not be read, or there was nothing to read; 130 Ctrl-C."""
        if self.interrupted:
            return EXIT_INTERRUPTED
        return 1 if self.problems.unreadable or self.read == 0 else 0

    def line(self, output: OutputSpec) -> str:
        rate = self.read / self.seconds if self.seconds else 0.0
        text = (
            f"{self.written} of {self.read} documents written to {output.path} "
            f"in {self.seconds:.1f} s ({rate:.1f} documents/s)"
        )
        if self.already_done:
            text += f"; {self.already_done} already there (--resume)"
        if self.skipped:
            reasons = ", ".join(f"{reason} {n}" for reason, n in self.skipped.most_common())
            text += f"; skipped: {reasons}"
        scripted = self.skipped[NEEDS_JAVASCRIPT]
        if scripted:
            text += f"; {scripted} {RENDER_HINT}"
        cut = self.report.repaired[Note.BLOCKS_CUT]
        if cut:
            text += f"; {cut} pages over the block limit (their text cut there)"
        if self.problems.truncated:
            text += f"; {self.problems.truncated} WARC records cut short"
        if self.problems.damaged:
            text += f"; {self.problems.damaged} damaged WARC records skipped"
        if self.problems.unreadable:
            text += f"; unreadable: {', '.join(self.problems.unreadable)}"
        if self.interrupted:
            text += "; interrupted: the same command with --resume goes on"
        return text

    def report_data(self, job: ExtractJob) -> dict[str, Any]:
        """The crawl report of this run (``--report``): one site per host."""
        settings = {
            "engine": job.options.engine,
            "model": job.options.model,
            "workers": job.workers,
            "timeout": job.timeout,
            "resume": job.resume or None,
            "keep_empty": job.keep_empty or None,
        }
        model = self.model_versions.most_common(1)[0][0] if self.model_versions else None
        self.report.header = run_header(settings, model)
        return self.report.to_dict("interrupted" if self.interrupted else "finished")


@dataclass
class _Pending:
    source: SourceDocument
    result: Future[Any] | Document | PageResult


class _Sink:
    """Where extracted documents go: straight to the writer, or first through the site
    memory, which may hold a site's first pages until its warm-up (then written later)."""

    def __init__(self, job: ExtractJob, writer: Writer, summary: Summary) -> None:
        self.job, self.writer, self.summary = job, writer, summary
        self.memories: SiteMemories[SourceDocument] | None = None
        if job.site_memory is not None:
            self.memories = SiteMemories(job.site_memory)

    def put(self, source: SourceDocument, result: PageResult) -> None:
        if self.memories is None:
            self._write(source, result.doc, None)
            return
        size = len(source.html)
        pending = Pending(site_key(source.url), result.doc, result.signatures, source, size)
        self._decided(self.memories.arrive(pending))

    def flush(self) -> None:
        if self.memories is not None:
            self._decided(self.memories.flush())

    def _decided(self, decided: list[Decided[SourceDocument]]) -> None:
        for item in decided:
            self._write(item.pending.token, item.pending.doc, item.outcome.removed)

    def _write(self, source: SourceDocument, doc: Document, removed: int | None) -> None:
        site = self.summary.report.site(site_of_url(source.url, LOCAL_FILES))
        self.summary.report.repaired.update(doc.notes)
        # A page its scripts write has its shell's words at most: skipped as the crawl
        # drops it unrendered.
        if (not doc.text.strip() or doc.needs_javascript) and not self.job.keep_empty:
            failure = NEEDS_JAVASCRIPT if doc.needs_javascript else doc.reason or "no-main-text"
            self.summary.skipped[failure] += 1
            site.dropped[failure] += 1
            return
        record = doc.to_dict()
        record["url"] = source.url or None
        record["source"] = source.source
        record.update(source.provenance)
        if removed is not None:
            record[SITE_MEMORY_FIELD] = removed
        self.writer.write(record)
        self.summary.written += 1
        engine = engine_of(doc.extractor, doc.model_version)
        site.add_document(engine, doc.text, doc.language, doc.date, doc.page_type)
        if doc.model_version:
            self.summary.model_versions[doc.model_version] += 1


def run(job: ExtractJob) -> Summary:
    """Extract every input document into the output; returns what happened."""
    summary = Summary()
    started = time.monotonic()
    bar = _progress_bar(job)
    writer = open_writer(job.output, job.resume)
    pool = _pool(job)
    try:
        _check_model(job, pool)
        _extract_all(job, writer, pool, summary, bar)
    except KeyboardInterrupt:
        # Documents are written whole and in order: the output is complete up to here.
        summary.interrupted = True
    finally:
        if pool is not None:
            pool.stop()
            pool.join()
        writer.close()
        bar.close()
    summary.seconds = time.monotonic() - started
    return summary


def _extract_all(job: ExtractJob, writer: Writer, pool: Any, summary: Summary, bar: Any) -> None:
    sink = _Sink(job, writer, summary)
    queue: deque[_Pending] = deque()
    limit = max(job.workers, 1) * QUEUE_PER_WORKER
    for source in read_inputs(job.inputs, job.input_options, summary.problems):
        summary.read += 1
        if writer.is_done(source.url):
            summary.already_done += 1
            bar.update(1)
            continue
        queue.append(_Pending(source, _submit(pool, source, job)))
        while len(queue) >= limit:
            _finish(queue.popleft(), sink, summary, bar)
    while queue:
        _finish(queue.popleft(), sink, summary, bar)
    sink.flush()


def _check_model(job: ExtractJob, pool: Any) -> None:
    """Warn once when the neural model cannot be loaded: workers log nowhere (in this
    process, without workers, loading it logs the same warning)."""
    if pool is None:
        return
    report(pool.schedule(warm_up, args=(job.options,)).result(), logger)


def _pool(job: ExtractJob) -> Any:
    if job.workers <= 0:
        return None
    from pebble import ProcessPool

    # Workers are forked from the extraction fork server (``worker_context``, as in a crawl),
    # which has imported the extraction, compiled dateparser's locale data and loaded the
    # language model once for all of them; each worker then loads the model when it starts,
    # not with its first document.
    return ProcessPool(
        max_workers=job.workers,
        max_tasks=MAX_TASKS_PER_WORKER,
        initializer=init_worker,
        initargs=(job.options,),
        context=worker_context(),
    )


def _submit(pool: Any, source: SourceDocument, job: ExtractJob) -> Future[Any] | PageResult:
    url = source.url or None
    # The site memory learns from each page's block signatures (as the crawl's workers
    # return them); without it, the page alone.
    signatures = job.site_memory is not None
    if pool is None:
        return extract_page(source.html, url, job.options, signatures)
    future: Future[Any] = pool.schedule(
        worker_extract_page,
        args=(source.html, url, job.options, signatures),
        timeout=job.timeout,
    )
    return future


def _finish(pending: _Pending, sink: _Sink, summary: Summary, bar: Any) -> None:
    bar.update(1)
    site = summary.report.site(site_of_url(pending.source.url, LOCAL_FILES))
    site.planned += 1
    site.fetched += 1
    result = _result(pending, summary, site)
    if result is not None:
        sink.put(pending.source, result)


def _result(pending: _Pending, summary: Summary, site: SiteReport) -> PageResult | None:
    if isinstance(pending.result, PageResult):
        return pending.result
    if isinstance(pending.result, Document):
        return PageResult(pending.result)
    try:
        result: PageResult = pending.result.result()
    except FutureTimeout:
        summary.skipped["timeout"] += 1
        site.dropped["timeout"] += 1
        logger.warning("Extraction timed out: %s", pending.source.source)
    except Exception as exc:
        summary.skipped["error"] += 1
        site.dropped["error"] += 1
        logger.warning("Extraction failed (%s): %s", type(exc).__name__, pending.source.source)
    else:
        return result
    return None


def _progress_bar(job: ExtractJob) -> Any:
    from tqdm import tqdm

    total = count_documents(job.inputs) if job.progress else None
    return tqdm(
        total=total,
        unit="doc",
        desc="extract",
        disable=not job.progress,
        file=sys.stderr,
        dynamic_ncols=True,
    )
