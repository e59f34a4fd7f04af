"""How long does our datatrove step take beside datatrove's own Trafilatura step, on the same
WARC files, and where does our step's time go?

    python -m benchmarks.datatrove_throughput --data ../shared/data [--pages 300] [--files 2]
        [--tasks 2] [--rounds 5] [--model DIR] [--part pipeline|breakdown|both|inside]
        [--text-only] [--against COMMIT]

``--pages`` modern pages of the developer data (wcxb-dev and fundus-dev, taken evenly through
them, with their real URLs; never committed) are written as ``--files`` WARC files (gzip per
record, as our crawl writes them) into a temporary folder.

``pipeline``: each round, two ``LocalPipelineExecutor`` runs over that folder with ``--tasks``
tasks on as many workers, in an order reversed every round: ``scrapy_maintext.datatrove``'s
``WarcReader`` + ``Maintext`` (engine ``auto``, metadata and language included) and
datatrove's ``WarcReader`` + ``Trafilatura`` (its defaults, text only; timeout 30 s like ours),
each ending in a ``JsonlWriter``. Prints each run's documents and wall time (the executor's:
task start, sandbox start and model load included), then the ratio ours / Trafilatura per
round, its minimum and median. ``--text-only``: our step as datatrove's asks of trafilatura,
the text alone (``Maintext(with_metadata=False, images=False)``: no metadata, no pictures),
for a like-for-like figure beside the default step's. ``--against COMMIT``: also our step
of that commit (``git archive``, as ``benchmarks.huge_pages`` does), a third run in each
round's rotation: a change measured in one run.

``breakdown``: in a fresh process, the parts of our step one by one: importing
``scrapy_maintext.datatrove``; in the sandbox process, the language model, the ONNX session,
dateparser's locale data, the warm-up page; then per document, over every page of the WARC
files, the read (our reader against datatrove's), ``extract`` in this process (datatrove's
``Trafilatura.extract`` beside it), the hand-over to the sandbox process and back (pipe and
pickling, with the extraction itself taken out), and the step's own bookkeeping. Prints
seconds per part and milliseconds per document.

``inside``: in a fresh process, the CPU milliseconds per document of each part of our
``extract`` (parts nest: ``find_dates``, htmldate's date search, is inside the metadata),
beside datatrove's ``Trafilatura.extract`` on the same pages.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import round_ratios, spread_records, write_warc
from benchmarks.offline_throughput import adopt_orphans, reap_all

OURS, THEIRS = "maintext", "trafilatura"
#: The modern pages of the developer data (2023-26).
MODERN = ("wcxb-dev.jsonl.gz", "fundus-dev.jsonl.gz")


def write_warcs(data: Path, pages: int, files: int, folder: Path) -> int:
    """``files`` WARC files of ``pages`` modern pages in all; returns the page count."""
    records = spread_records(data, pages, MODERN)
    folder.mkdir(parents=True, exist_ok=True)
    per_file = -(-len(records) // files)
    for index in range(files):
        chunk = records[index * per_file : (index + 1) * per_file]
        write_warc(chunk, folder / f"pages-{index:02d}.warc.gz", "benchmarks.datatrove_throughput")
    return len(records)


# -- The two pipelines ------------------------------------------------------------------------


#: What ``--text-only`` turns off in our step: what datatrove's Trafilatura step does not do.
TEXT_ONLY = {"with_metadata": False, "images": False}


def pipeline(
    name: str, warcs: Path, out: Path, model: str | None, text_only: bool = False
) -> list[Any]:
    from datatrove.pipeline.writers import JsonlWriter

    if name == OURS:
        from scrapy_maintext.datatrove import Maintext, WarcReader

        options = TEXT_ONLY if text_only else {}
        step = Maintext(model=model, **options)
        return [WarcReader(str(warcs)), step, JsonlWriter(str(out))]
    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.readers import WarcReader as TheirReader

    return [TheirReader(str(warcs)), Trafilatura(timeout=30), JsonlWriter(str(out))]


def run_once(
    name: str, warcs: Path, tasks: int, model: str | None, text_only: bool = False
) -> dict[str, float]:
    """One executor run of ``name``'s pipeline (in a fresh process): its wall seconds and
    documents written."""
    from datatrove.executor import LocalPipelineExecutor

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        executor = LocalPipelineExecutor(
            pipeline=pipeline(name, warcs, out, model, text_only),
            tasks=tasks,
            workers=tasks,
            logging_dir=str(Path(tmp) / "logs"),
            skip_completed=False,
        )
        started = time.perf_counter()
        executor.run()
        elapsed = time.perf_counter() - started
        documents = 0
        for path in out.glob("*.jsonl.gz"):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                documents += sum(1 for line in handle if line.strip())
    return {"wall": elapsed, "documents": documents}


def run_fresh(
    name: str, warcs: Path, args: argparse.Namespace, path: str | None = None
) -> dict[str, float]:
    """:func:`run_once` in a fresh process (its own fork server and task processes), with
    the CPU seconds of its whole process tree (tasks and sandboxes included); ``path``: where
    its ``scrapy_maintext`` is imported from (an earlier commit's), else this checkout."""
    step = OURS if name.startswith(OURS) else THEIRS
    cmd = [sys.executable, "-m", "benchmarks.datatrove_throughput", "--run", step]
    cmd += ["--child", str(warcs), "--tasks", str(args.tasks)]
    cmd += (["--model", args.model] if args.model else []) + ["--text-only"] * args.text_only
    env = {**os.environ, "PYTHONPATH": path} if path else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    reap_all()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    found = dict(json.loads(out.strip().splitlines()[-1]))
    found["cpu"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    docs, wall, cpu = found["documents"], found["wall"], found["cpu"]
    print(f"  {name}: {docs} documents in {wall:.1f} s ({cpu:.1f} s of CPU)", flush=True)
    return found


def pipelines(args: argparse.Namespace, warcs: Path) -> None:
    adopt_orphans()
    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, str | None] = {OURS: None, THEIRS: None}
        if args.against:
            from benchmarks.huge_pages import importable

            paths[f"{OURS} at {args.against}"] = importable(args.against, Path(tmp))
        took: dict[str, list[dict[str, float]]] = {name: [] for name in paths}
        names = list(paths)
        for round_no in range(args.rounds):
            print(f"round {round_no + 1}:", flush=True)
            shift = round_no % len(names)
            for name in names[shift:] + names[:shift]:
                took[name].append(run_fresh(name, warcs, args, paths[name]))
    pairs = [(name, THEIRS) for name in names if name != THEIRS]
    pairs += [(OURS, names[-1])] if args.against else []
    setup = f"tasks={args.tasks}, model={args.model or 'default'}, " + (
        "text only" if args.text_only else "text and metadata"
    )
    for what in ("wall", "cpu"):
        for one, other in pairs:
            ours, theirs = [r[what] for r in took[one]], [r[what] for r in took[other]]
            ratios, listed = round_ratios(ours, theirs)
            print(
                f"{what}: {one} {min(ours):.1f}-{max(ours):.1f} s, {other} {min(theirs):.1f}-"
                f"{max(theirs):.1f} s; {one} / {other} per round: {listed}; min"
                f" {min(ratios):.2f}x, median {statistics.median(ratios):.2f}x ({setup})"
            )


# -- Where our step's time goes (a fresh process) ---------------------------------------------


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = call()
    return time.perf_counter() - started, value


def start_up(model: str | None) -> dict[str, float]:
    """Seconds of each part of a task's start, in the order a task meets them."""
    seconds: dict[str, float] = {}
    seconds["import scrapy_maintext.datatrove"], _ = _timed(
        lambda: __import__("scrapy_maintext.datatrove")
    )
    from scrapy_maintext.datatrove import WARM_UP_PAGE, Maintext
    from scrapy_maintext.extraction.engines import neural_load
    from scrapy_maintext.fields.language import identifier
    from scrapy_maintext.fields.metadata import warm_date_parser

    seconds["language model"], _ = _timed(identifier)
    seconds["ONNX session (neural import, model)"], _ = _timed(lambda: neural_load(model))
    seconds["dateparser locale data"], _ = _timed(warm_date_parser)
    step = Maintext(model=model)
    seconds["warm-up page"], _ = _timed(
        lambda: step.extract_document(WARM_UP_PAGE, "https://warm-up.invalid/")
    )
    # As Maintext.warm_up: what start-up loaded leaves the collector's passes.
    seconds["gc.collect, gc.freeze"], _ = _timed(lambda: (gc.collect(), gc.freeze()))
    return seconds


def per_document(warcs: Path, model: str | None) -> dict[str, float]:
    """Milliseconds per document of each per-document part (the start-up already paid)."""
    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.extractors.base import ExtractorSandbox
    from datatrove.pipeline.readers import WarcReader as TheirReader
    from scrapy_maintext.datatrove import Maintext, WarcReader, _set_result

    files = sorted(p.name for p in warcs.iterdir())
    ms: dict[str, float] = {}
    seconds, docs = _timed(lambda: [d for f in files for d in WarcReader(str(warcs)).read_file(f)])
    ms["read (our WarcReader)"] = seconds
    seconds, _ = _timed(lambda: [d for f in files for d in TheirReader(str(warcs)).read_file(f)])
    ms["read (datatrove's WarcReader)"] = seconds
    step, theirs = Maintext(model=model), Trafilatura(timeout=30)
    results: dict[str, dict[str, Any]] = {}

    def ours_in_process() -> None:
        for doc in docs:
            results[doc.id] = step.extract_document(doc.text, doc.metadata.get("url"))

    collector = CollectorTime()
    gc.callbacks.append(collector)
    ms["extract (ours, in process)"], _ = _timed(ours_in_process)
    gc.callbacks.remove(collector)
    ms["  of which the collector's passes (start-up frozen)"] = collector.seconds
    ms["extract (Trafilatura step, in process)"], _ = _timed(
        lambda: [theirs.extract(doc.text) for doc in docs]
    )

    def stored(html: str, url: str | None) -> dict[str, Any]:
        # The sandbox process is forked from this one: the results are there already (the
        # warm-up asks for none).
        return results.get(by_url.get(url, ""), {})

    by_url = {doc.metadata.get("url"): doc.id for doc in docs}

    def hand_over() -> None:
        with ExtractorSandbox(timeout=30, warmup_text=("", None)) as sandbox:
            for doc in docs:
                sandbox.process_document((doc.text, doc.metadata.get("url")), stored)

    ms["hand-over to the sandbox and back"], _ = _timed(hand_over)
    ms["the step's bookkeeping (metadata, stats)"], _ = _timed(
        lambda: [_bookkeeping(step, doc, results[doc.id], _set_result) for doc in docs]
    )
    return {name: 1000 * value / len(docs) for name, value in ms.items()} | {"documents": len(docs)}


class CollectorTime:
    """A ``gc.callbacks`` entry: seconds spent in the collector's passes."""

    def __init__(self) -> None:
        self.seconds, self._started = 0.0, 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started


def _bookkeeping(step: Any, doc: Any, result: dict[str, Any], set_result: Any) -> None:
    step.stat_update("total")
    set_result(doc, result)
    step.stat_update("forwarded")
    step.update_doc_stats(doc)


#: (module, function) of our extract timed by ``--part inside``, in the order printed.
INSIDE = (
    ("scrapy_maintext.extraction.core", "parse_page"),
    ("scrapy_maintext.extraction.core", "apply_metadata"),
    ("scrapy_maintext.fields.metadata", "page_candidates"),
    ("scrapy_maintext.fields.metadata", "add_byline"),
    ("scrapy_maintext.fields.metadata", "trafilatura_metadata"),
    ("scrapy_maintext.fields.metadata", "find_dates"),
    ("scrapy_maintext.fields.metadata", "extract_author"),
    ("scrapy_maintext.extraction.core", "run_engine"),
    ("scrapy_maintext.extraction.core", "settle_body"),
    ("scrapy_maintext.extraction.core", "fingerprint"),
    ("scrapy_maintext.extraction.core", "apply_language"),
)


def inside_child(warcs: Path, model: str | None) -> None:
    """CPU ms per document of each part of our extract (wrapped where extract calls it)."""
    import importlib

    from datatrove.pipeline.extractors import Trafilatura
    from scrapy_maintext.datatrove import Maintext, WarcReader

    files = sorted(p.name for p in warcs.iterdir())
    docs = [d for f in files for d in WarcReader(str(warcs)).read_file(f)]
    step = Maintext(model=model)
    step.warm_up()
    spent = dict.fromkeys((name for _, name in INSIDE), 0.0)
    for module_name, name in INSIDE:
        module = importlib.import_module(module_name)
        setattr(module, name, _cpu_timed(getattr(module, name), name, spent))
    started = time.process_time()
    for doc in docs:
        step.extract_document(doc.text, doc.metadata.get("url"))
    ms = {"extract (ours)": time.process_time() - started} | spent
    theirs, started = Trafilatura(timeout=30), time.process_time()
    for doc in docs:
        theirs.extract(doc.text)
    ms["extract (Trafilatura step)"] = time.process_time() - started
    print(json.dumps({name: 1000 * value / len(docs) for name, value in ms.items()}))


def _cpu_timed(call: Callable[..., Any], name: str, spent: dict[str, float]) -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return call(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - started

    return timed


def inside(args: argparse.Namespace, warcs: Path) -> None:
    cmd = [sys.executable, "-m", "benchmarks.datatrove_throughput", "--inside", str(warcs)]
    if args.model:
        cmd += ["--model", args.model]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    print("inside extract (CPU ms per document; parts nest):")
    for name, value in json.loads(out.strip().splitlines()[-1]).items():
        print(f"  {name}: {value:.1f} ms")


def breakdown_child(warcs: Path, model: str | None) -> None:
    print(json.dumps({"start": start_up(model), "per_document": per_document(warcs, model)}))


def breakdown(args: argparse.Namespace, warcs: Path) -> None:
    cmd = [sys.executable, "-m", "benchmarks.datatrove_throughput", "--child", str(warcs)]
    if args.model:
        cmd += ["--model", args.model]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    print("a task's start (seconds, in the order the task meets them):")
    for name, value in found["start"].items():
        print(f"  {name}: {value:.2f} s")
    per_doc = found["per_document"]
    print(f"per document ({per_doc.pop('documents')} documents, ms per document):")
    for name, value in per_doc.items():
        print(f"  {name}: {value:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--pages", type=int, default=300, help="modern pages in all")
    parser.add_argument("--files", type=int, default=2, help="WARC files they are written to")
    parser.add_argument("--tasks", type=int, default=2, help="tasks (and workers) per run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--model", default=None, help="Maintext(model=...): a model folder")
    parts = ("pipeline", "breakdown", "both", "inside")
    parser.add_argument("--part", choices=parts, default="both")
    parser.add_argument(
        "--text-only", action="store_true", help="our step without metadata and pictures"
    )
    parser.add_argument("--against", help="also our step of this earlier commit (pipeline)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--inside", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--run", choices=(OURS, THEIRS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run is not None:
        found = run_once(args.run, args.child, args.tasks, args.model, args.text_only)
        print(json.dumps(found))
        return
    if args.child is not None:
        breakdown_child(args.child, args.model)
        return
    if args.inside is not None:
        inside_child(args.inside, args.model)
        return
    with tempfile.TemporaryDirectory() as tmp:
        warcs = Path(tmp) / "warc"
        count = write_warcs(args.data, args.pages, args.files, warcs)
        size = sum(p.stat().st_size for p in warcs.iterdir())
        print(f"WARC: {count} pages in {args.files} files, {size / 1024:.0f} KiB", flush=True)
        if args.part in ("breakdown", "both"):
            breakdown(args, warcs)
        if args.part in ("pipeline", "both"):
            pipelines(args, warcs)
        if args.part == "inside":
            inside(args, warcs)


if __name__ == "__main__":
    main()
