"""How many documents per second does our datatrove step extract from a crawl's WARC files,
beside datatrove's own Trafilatura step on the same files?

    python -m benchmarks.datatrove_throughput [--data ../shared/data] [--pages 200]
        [--articles 300] [--tasks 2] [--rounds 3] [--engine auto] [--max-size 100000]

First a crawl writes the WARC files (``WARC_OUTPUT``, extraction off, rotated at
``--max-size`` bytes: files are what datatrove shares out among tasks): with ``--data``, the
first ``--pages`` real pages of the developer data (never committed) served on 127.0.0.1 as in
``benchmarks.crawl_throughput``; without it, the demo site of ``--articles`` articles. Then,
each round, two ``LocalPipelineExecutor`` runs over the same folder with ``--tasks`` tasks on
as many workers: ``scrapy_maintext.datatrove.WarcReader`` + ``Maintext`` and datatrove's
``WarcReader`` + ``Trafilatura`` (its defaults; timeout raised to 30 s like ours), each ending
in a ``JsonlWriter``; the order is reversed every round. Prints each run's documents written
and documents per second (over the executor's wall time, sandbox start and model load
included), then per round and as a median the ratio ours / Trafilatura.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions

from benchmarks.common import load_pages
from benchmarks.crawl_throughput import UNTHROTTLED, serve_pages
from tests.crawl import run_crawl

OURS, THEIRS = "maintext", "trafilatura"


def write_warcs(args: argparse.Namespace, folder: Path) -> None:
    options = SiteOptions(articles=args.articles, crawl_delay=None, feeds=False)
    with SiteServer(options, keep_alive=True) as server:
        if args.data is not None:
            serve_pages(server, load_pages(args.data, args.pages))
        settings = {**UNTHROTTLED, "EXTRACT_ENABLED": "False", "WARC_OUTPUT": str(folder)}
        # Files are what datatrove shares out among tasks: several per task.
        settings["WARC_MAX_SIZE"] = str(args.max_size)
        with tempfile.TemporaryDirectory() as tmp:
            result = run_crawl("sitemap", Path(tmp), {"domain": server.base_url}, settings)
    if result.returncode != 0:
        raise SystemExit(result.log[-3000:])


def pipeline(name: str, warcs: Path, out: Path, engine: str) -> list[Any]:
    from datatrove.pipeline.writers import JsonlWriter

    if name == OURS:
        from scrapy_maintext.datatrove import Maintext, WarcReader

        return [WarcReader(str(warcs)), Maintext(engine=engine), JsonlWriter(str(out))]
    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.readers import WarcReader as TheirReader

    return [TheirReader(str(warcs)), Trafilatura(timeout=30), JsonlWriter(str(out))]


def run_once(name: str, warcs: Path, tasks: int, engine: str) -> float:
    """Documents per second of one executor run of ``name``'s pipeline."""
    from datatrove.executor import LocalPipelineExecutor

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        executor = LocalPipelineExecutor(
            pipeline=pipeline(name, warcs, out, engine),
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
    rate = documents / elapsed
    print(f"  {name}: {documents} documents in {elapsed:.1f} s, {rate:.1f} documents/s")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="developer data folder")
    parser.add_argument("--pages", type=int, default=200, help="pages of --data to serve")
    parser.add_argument("--articles", type=int, default=300, help="demo site size (no --data)")
    parser.add_argument("--tasks", type=int, default=2, help="tasks (and workers) per run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--max-size", type=int, default=100_000, help="WARC_MAX_SIZE of the crawl (bytes)"
    )
    parser.add_argument("--engine", default="auto", choices=("auto", "neural", "trafilatura"))
    args = parser.parse_args()
    rates: dict[str, list[float]] = {OURS: [], THEIRS: []}
    with tempfile.TemporaryDirectory() as tmp:
        warcs = Path(tmp) / "warc"
        write_warcs(args, warcs)
        size = sum(p.stat().st_size for p in warcs.iterdir())
        print(f"WARC: {len(list(warcs.iterdir()))} files, {size / 1024:.0f} KiB")
        for round_no in range(args.rounds):
            print(f"round {round_no + 1}:")
            order = [OURS, THEIRS] if round_no % 2 == 0 else [THEIRS, OURS]
            for name in order:
                rates[name].append(run_once(name, warcs, args.tasks, args.engine))
    ratios = [ours / theirs for ours, theirs in zip(rates[OURS], rates[THEIRS], strict=True)]
    listed = ", ".join(f"{r:.2f}x" for r in ratios)
    print(
        f"{OURS} / {THEIRS} documents/s per round: {listed}; "
        f"median {statistics.median(ratios):.2f}x (engine={args.engine}, tasks={args.tasks})"
    )


if __name__ == "__main__":
    main()
