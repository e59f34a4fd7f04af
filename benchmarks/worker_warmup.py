"""What does warming dateparser in the extraction workers' fork server change: a fresh
worker's CPU on its first pages, and the memory of the worker pool?

    python -m benchmarks.worker_warmup --data ../shared/data [--measure cpu|memory|both]
        [--pages N] [--rounds N] [--workers 2]

``extraction.preload`` runs ``metadata.warm_date_parser`` in the fork server, which compiles
the locale data of dateparser (htmldate hands it some dates) once, before the workers are
forked. The variants: "warmed" (as shipped) and "cold" (without the warm-up, as before). Each
measurement runs in a fresh process of its own, the variants alternating, the order reversed
every round:

* ``cpu`` (``--pages`` default 100, ``--rounds`` default 3): a process that starts as a worker
  does (imports, ``extraction.worker.init_worker``: model loaded, warm-up page), then ("warmed")
  compiles dateparser's locale data, then extracts the first ``--pages`` pages of real size
  (``benchmarks.common.load_pages``) one by one, timing each page's CPU. Prints each round's
  figures, then per variant the medians over the rounds of the pages' CPU (``pages_s``), the
  slowest page (``max_page_s``), the warm-up's own CPU (``warm_s``) and the resident memory it
  adds (``warm_mib``), and the CPU saved per fresh worker in each round. Workers are recycled
  every ``MAX_TASKS_PER_WORKER`` pages, so the saving recurs per worker and per recycling.
* ``memory`` (``--pages`` default 400, ``--rounds`` default 1): a process that starts the
  crawl's worker pool (``pipelines.runner.ExtractionRunner``, fork server and all, ``--workers``
  workers), extracts ``--pages`` pages through it, and reads from Linux's
  ``/proc/PID/smaps_rollup`` the fork server's and each worker's resident memory (RSS), its
  proportional share (PSS: a page shared by n processes counts 1/n in each) and its private
  memory (USS). "cold" preloads the same modules without the warm-up (and without the
  preload's ``gc.freeze``). Prints a markdown table per round: one row per process and
  variant, and the sum of PSS over the fork server and the workers, which is what the
  extraction costs the machine.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from scrapy.settings import Settings
from scrapy_maintext.pipelines.config import ExtractConfig
from scrapy_maintext.pipelines.runner import MAX_TASKS_PER_WORKER, ExtractionRunner

from benchmarks.common import load_pages, memory_mib, run_child, variant_parser

MODULE = "benchmarks.worker_warmup"
VARIANTS = ("cold", "warmed")
#: The fork server's preload without the warm-up (the modules ``extraction.preload`` imports).
COLD_PRELOAD = ["scrapy_maintext.extraction.worker", "scrapy_maintext.neural"]
#: Per measurement: default pages and rounds.
DEFAULTS = {"cpu": (100, 3), "memory": (400, 1)}
BENCH_URL = "https://bench.invalid"


def _rss_mib() -> float:
    return memory_mib(os.getpid())["rss"]


def _config(workers: int) -> ExtractConfig:
    """The pipeline's ``ExtractConfig`` as a crawl with ``EXTRACT_WORKERS=workers`` reads it."""
    return ExtractConfig.from_settings(Settings({"EXTRACT_WORKERS": workers}))


def child_cpu(data: Path, count: int, variant: str) -> dict[str, float]:
    from scrapy_maintext.extraction import ExtractOptions
    from scrapy_maintext.extraction.core import extract_page
    from scrapy_maintext.extraction.worker import init_worker
    from scrapy_maintext.fields.metadata import warm_date_parser

    pages = load_pages(data, count)
    options = ExtractOptions(engine="auto")
    init_worker(options)  # as a worker starts
    before, started = _rss_mib(), time.process_time()
    if variant == "warmed":
        warm_date_parser()
    warm_s, warm_mib = time.process_time() - started, _rss_mib() - before
    times = []
    for page in pages:
        started = time.process_time()
        extract_page(page.html, BENCH_URL + page.path, options, signatures=True)
        times.append(time.process_time() - started)
    return {"pages_s": sum(times), "max_page_s": max(times), "warm_s": warm_s, "warm_mib": warm_mib}


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def child_memory(data: Path, count: int, workers: int, variant: str) -> dict[str, Any]:
    from scrapy_maintext.extraction import worker

    if variant == "cold":
        worker.FORKSERVER_PRELOAD = COLD_PRELOAD
    pages = load_pages(data, count)
    runner = ExtractionRunner(_config(workers))
    assert runner.pool is not None
    runner.pool.schedule(worker.warm_up, args=(runner.options,)).result()
    futures = [
        runner.pool.schedule(worker.extract_page, args=(p.html, BENCH_URL + p.path, runner.options))
        for p in pages
    ]
    for future in futures:
        future.result()
    (server,) = [pid for pid in _children(os.getpid()) if b"forkserver" in _cmdline(pid)]
    result = {"fork server": memory_mib(server)}
    for n, pid in enumerate(sorted(_children(server))):
        result[f"worker {n + 1}"] = memory_mib(pid)
    runner.close()
    return result


def measure_cpu(argv: list[str], rounds: int) -> None:
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    for round_no in range(rounds):
        for variant in VARIANTS if round_no % 2 == 0 else VARIANTS[::-1]:
            run = run_child(MODULE, [*argv, "--measure", "cpu"], variant)
            runs[variant].append(run)
            figures = ", ".join(f"{k} {v:.2f}" for k, v in run.items())
            print(f"  round {round_no + 1} {variant}: {figures}", flush=True)
    for variant, results in runs.items():
        median = {key: statistics.median(r[key] for r in results) for key in results[0]}
        print(f"{variant}: " + ", ".join(f"{k} {v:.2f}" for k, v in median.items()))
    saved = [c["pages_s"] - w["pages_s"] for c, w in zip(runs["cold"], runs["warmed"], strict=True)]
    print(
        f"CPU saved per fresh worker, per round: {', '.join(f'{s:.2f} s' for s in saved)}; "
        f"workers are recycled every {MAX_TASKS_PER_WORKER} pages"
    )


def measure_memory(argv: list[str], rounds: int) -> None:
    for round_no in range(rounds):
        if rounds > 1:
            print(f"round {round_no + 1}:")
        print("| variant | process | RSS MiB | PSS MiB | USS MiB |\n|---|---|---|---|---|")
        for variant in VARIANTS[::-1] if round_no % 2 == 0 else VARIANTS:
            processes = run_child(MODULE, [*argv, "--measure", "memory"], variant)
            for name, mem in processes.items():
                cells = f"{mem['rss']:.0f} | {mem['pss']:.0f} | {mem['uss']:.0f}"
                print(f"| {variant} | {name} | {cells} |")
            total = sum(mem["pss"] for mem in processes.values())
            print(f"| {variant} | sum of PSS | | {total:.0f} | |", flush=True)


def main() -> None:
    parser = variant_parser(VARIANTS, __doc__)
    parser.add_argument("--measure", choices=("cpu", "memory", "both"), default="both")
    parser.add_argument("--pages", type=int, default=None, help="default: 100 cpu, 400 memory")
    parser.add_argument("--rounds", type=int, default=None, help="default: 3 cpu, 1 memory")
    parser.add_argument("--workers", type=int, default=2, help="pool size (memory)")
    args = parser.parse_args()
    parts = ("cpu", "memory") if args.measure == "both" else (args.measure,)
    if args.child:
        (part,) = parts
        pages = args.pages or DEFAULTS[part][0]
        if part == "cpu":
            result = child_cpu(args.data, pages, args.child)
        else:
            result = child_memory(args.data, pages, args.workers, args.child)
        print(json.dumps(result))
        return
    for part in parts:
        pages, rounds = DEFAULTS[part]
        pages, rounds = args.pages or pages, args.rounds or rounds
        print(f"{part}: {pages} pages, {rounds} round(s)")
        argv = ["--data", str(args.data), "--pages", str(pages), "--workers", str(args.workers)]
        (measure_cpu if part == "cpu" else measure_memory)(argv, rounds)


if __name__ == "__main__":
    main()
