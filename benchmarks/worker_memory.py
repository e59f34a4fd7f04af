"""Memory of the extraction workers with and without dateparser warmed in their fork server.

    python -m benchmarks.worker_memory --data ../shared/data [--pages 400] [--workers 2]

Each variant runs in a fresh process: it starts the crawl's worker pool
(``pipeline.ExtractionRunner``, fork server and all), extracts ``--pages`` pages of real size
through it (``benchmarks.crawl_throughput.load_pages``), and then reads, from Linux's
``/proc/PID/smaps_rollup``, the fork server's and each worker's resident memory (RSS), its
proportional share (PSS: a page shared by n processes counts 1/n in each) and its private
memory (USS). "warmed" is the shipped preload (``extraction.preload``: imports, then
``metadata.warm_date_parser`` and ``gc.freeze``); "cold" preloads the same modules without
the warm-up, as before. The sum of PSS over the fork server and the workers is what the
extraction costs the machine.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchmarks.child_runs import memory_mib, run_child, variant_parser

VARIANTS = ("warmed", "cold")
#: The fork server's preload without the warm-up (the modules ``extraction.preload`` imports).
COLD_PRELOAD = ["scrapy_maintext.extraction.worker", "scrapy_maintext.neural"]


def children(pid: int) -> list[int]:
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


def cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def child(data: Path, count: int, workers: int, variant: str) -> None:
    from scrapy_maintext.extraction import worker
    from scrapy_maintext.pipelines.extraction import ExtractConfig, ExtractionRunner

    from benchmarks.crawl_throughput import load_pages

    if variant == "cold":
        worker.FORKSERVER_PRELOAD = COLD_PRELOAD
    pages = load_pages(data, count)
    runner = ExtractionRunner(ExtractConfig(workers=workers))
    assert runner.pool is not None
    runner.pool.schedule(worker.warm_up, args=(runner.options,)).result()
    futures = [
        runner.pool.schedule(
            worker.extract_page, args=(p.html, "https://bench.invalid" + p.path, runner.options)
        )
        for p in pages
    ]
    for future in futures:
        future.result()
    (server,) = [pid for pid in children(os.getpid()) if b"forkserver" in cmdline(pid)]
    result = {"fork server": memory_mib(server)}
    for n, pid in enumerate(sorted(children(server))):
        result[f"worker {n + 1}"] = memory_mib(pid)
    runner.close()
    print(json.dumps(result))


def main() -> None:
    parser = variant_parser(400, VARIANTS)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.child:
        child(args.data, args.pages, args.workers, args.child)
        return
    print("| variant | process | RSS MiB | PSS MiB | USS MiB |\n|---|---|---|---|---|")
    for variant in VARIANTS:
        argv = ["--data", str(args.data), "--pages", str(args.pages)]
        processes = run_child(
            "benchmarks.worker_memory", [*argv, "--workers", str(args.workers)], variant
        )
        for name, mem in processes.items():
            print(
                f"| {variant} | {name} | {mem['rss']:.0f} | {mem['pss']:.0f} | {mem['uss']:.0f} |"
            )
        total = sum(mem["pss"] for mem in processes.values())
        print(f"| {variant} | sum of PSS | | {total:.0f} | |")


if __name__ == "__main__":
    main()
