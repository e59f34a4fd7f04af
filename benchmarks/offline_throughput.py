"""How long does ``maintext extract`` take over a WARC, beside a pool of processes running
trafilatura over the same records?

    python -m benchmarks.offline_throughput --data ../shared/data [--pages 400] [--workers 2]
        [--rounds 3] [--engine auto] [--model DIR]

A WARC (gzip per record) of ``--pages`` modern pages of the developer data (wcxb-dev, taken
evenly through the file so that every page type is in it; never committed) is written to a
temporary folder with their real URLs. Each round then runs, in fresh processes and in an
order reversed every round:

- ``maintext extract WARC -o out.jsonl --workers N`` (defaults: text and metadata);
- the baseline a corpus builder would write: warcio reads the same records in one process,
  a ``multiprocessing.Pool(N)`` runs ``trafilatura.bare_extraction(html, url=url,
  with_metadata=True)`` on each (``imap``, input order) and the parent writes one JSON line per
  document.

Both wall times include the interpreter's start, the imports and (ours) the model load: what
a user waits for; CPU times count the run's whole process tree, workers included. Prints each
run's documents and seconds, then per round and over all rounds the ratios ours / baseline of
wall and of CPU time (below 1.0: ours is faster). Wall time is what the issue's target is
about; CPU time is steadier on a shared machine.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import round_ratios, spread_records
from benchmarks.common import write_warc as write_records

OURS, THEIRS = "maintext", "trafilatura-pool"
DATA_FILE = "wcxb-dev.jsonl.gz"
PR_SET_CHILD_SUBREAPER = 36


def write_warc(data: Path, pages: int, path: Path) -> int:
    """The WARC of ``pages`` wcxb-dev pages spread through the file; returns its page count."""
    chosen = spread_records(data, pages, (DATA_FILE,))
    write_records(chosen, path, "benchmarks.offline_throughput")
    return len(chosen)


@dataclass(frozen=True)
class Took:
    wall: float
    #: CPU seconds of the run's whole process tree (user + system, workers included).
    cpu: float


def adopt_orphans() -> None:
    """Become the reaper of this process's orphaned descendants (Linux): a fork server that
    outlives its parent, with the workers it reaped, then counts in RUSAGE_CHILDREN."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def reap_all() -> None:
    """Wait for every remaining descendant (adopted orphans) to exit."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def timed(cmd: list[str]) -> Took:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    wall = time.perf_counter() - started
    reap_all()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Took(wall, cpu)


def run_ours(warc: Path, out: Path, args: argparse.Namespace) -> Took:
    cmd = [sys.executable, "-m", "scrapy_maintext", "extract", str(warc), "-o", str(out)]
    cmd += ["--workers", str(args.workers), "--engine", args.engine, "--no-progress"]
    if args.model:
        cmd += ["--model", args.model]
    return timed(cmd)


def run_theirs(warc: Path, out: Path, workers: int) -> Took:
    cmd = [sys.executable, "-m", "benchmarks.offline_throughput", "--baseline", str(warc)]
    cmd += ["--baseline-out", str(out), "--workers", str(workers)]
    return timed(cmd)


def _trafilatura_one(record: tuple[str, bytes]) -> dict[str, Any] | None:
    import trafilatura

    url, body = record
    try:
        doc = trafilatura.bare_extraction(body, url=url, with_metadata=True)
    except Exception:
        return None
    if doc is None:
        return None
    return {"url": url, "text": doc.text, "title": doc.title, "date": doc.date}


def _warc_records(warc: Path) -> Any:
    from warcio.archiveiterator import ArchiveIterator

    with warc.open("rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type == "response":
                url = record.rec_headers.get_header("WARC-Target-URI")
                yield url, record.content_stream().read()


def baseline(warc: Path, out: Path, workers: int) -> None:
    """The baseline run (in its own process): warcio, a pool, trafilatura, JSON lines."""
    from multiprocessing import Pool

    with Pool(workers) as pool, out.open("w", encoding="utf-8") as fh:
        for doc in pool.imap(_trafilatura_one, _warc_records(warc)):
            if doc is not None and doc["text"]:
                fh.write(json.dumps(doc, ensure_ascii=False) + "\n")


def _lines(path: Path) -> int:
    with path.open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engine", default="auto", choices=("auto", "neural", "trafilatura"))
    parser.add_argument("--model", default=None, help="a model folder (maintext --model)")
    parser.add_argument("--baseline", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--baseline-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline is not None:
        baseline(args.baseline, args.baseline_out, args.workers)
        return
    adopt_orphans()
    runs: dict[str, list[Took]] = {OURS: [], THEIRS: []}
    with tempfile.TemporaryDirectory() as tmp:
        warc = Path(tmp) / "pages.warc.gz"
        count = write_warc(args.data, args.pages, warc)
        print(f"WARC: {count} pages, {warc.stat().st_size / 1024:.0f} KiB")
        for round_no in range(args.rounds):
            print(f"round {round_no + 1}:")
            order = [OURS, THEIRS] if round_no % 2 == 0 else [THEIRS, OURS]
            for name in order:
                out = Path(tmp) / f"{name}.jsonl"
                if name == OURS:
                    took = run_ours(warc, out, args)
                else:
                    took = run_theirs(warc, out, args.workers)
                runs[name].append(took)
                print(
                    f"  {name}: {_lines(out)} documents in {took.wall:.1f} s"
                    f" ({took.cpu:.1f} s of CPU)"
                )
    for what in ("wall", "cpu"):
        ours = [getattr(t, what) for t in runs[OURS]]
        theirs = [getattr(t, what) for t in runs[THEIRS]]
        ratios, listed = round_ratios(ours, theirs)
        print(
            f"{OURS} / {THEIRS} {what} time per round: {listed}; median"
            f" {statistics.median(ratios):.2f}x, all rounds {sum(ours) / sum(theirs):.2f}x"
            f" (engine={args.engine}, workers={args.workers})"
        )


if __name__ == "__main__":
    main()
