"""What a fresh extraction worker saves when dateparser's locale data is compiled before
it is forked (``extraction.preload`` runs ``metadata.warm_date_parser`` in the fork server).

    python -m benchmarks.date_warmup --data ../shared/data [--pages 100] [--rounds 3]

Each run is a new process, as a worker is: it imports the extraction, extracts the workers'
warm-up page, then (variant "warmed") compiles dateparser's locale data, and extracts the
first ``--pages`` pages of real size (``benchmarks.crawl_throughput.load_pages``), timing
each page's CPU. The two variants alternate, ``--rounds`` times. It reports each variant's
CPU for the pages (median over rounds), the largest single page, the warm-up's own CPU and
the resident memory it adds. Workers are recycled every ``MAX_TASKS_PER_WORKER`` pages, so
the saving recurs per worker and per recycling.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

from scrapy_maintext.pipelines.extraction import MAX_TASKS_PER_WORKER

from benchmarks.child_runs import memory_mib, run_child, variant_parser

VARIANTS = ("cold", "warmed")


def _rss_mib() -> float:
    return memory_mib(os.getpid())["rss"]


def child(data: Path, count: int, variant: str) -> None:
    from scrapy_maintext.extraction import ExtractOptions
    from scrapy_maintext.extraction.core import extract_page
    from scrapy_maintext.extraction.metadata import warm_date_parser
    from scrapy_maintext.extraction.worker import init_worker

    from benchmarks.crawl_throughput import load_pages

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
        extract_page(page.html, "https://bench.invalid" + page.path, options, signatures=True)
        times.append(time.process_time() - started)
    result = {"pages_s": sum(times), "max_page_s": max(times), "warm_s": warm_s}
    print(json.dumps({**result, "warm_mib": warm_mib}))


def main() -> None:
    parser = variant_parser(100, VARIANTS)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.child:
        child(args.data, args.pages, args.child)
        return
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    for round_no in range(args.rounds):
        order = VARIANTS if round_no % 2 == 0 else VARIANTS[::-1]
        for variant in order:
            argv = ["--data", str(args.data), "--pages", str(args.pages)]
            run = run_child("benchmarks.date_warmup", argv, variant)
            runs[variant].append(run)
            print(
                f"  round {round_no + 1} {variant}: "
                + ", ".join(f"{k} {v:.2f}" for k, v in run.items())
            )
    for variant, results in runs.items():
        median = {key: statistics.median(r[key] for r in results) for key in results[0]}
        print(f"{variant}: " + ", ".join(f"{k} {v:.2f}" for k, v in median.items()))
    saved = [c["pages_s"] - w["pages_s"] for c, w in zip(runs["cold"], runs["warmed"], strict=True)]
    print(
        f"CPU saved per fresh worker, per round: {', '.join(f'{s:.2f} s' for s in saved)}; "
        f"workers are recycled every {MAX_TASKS_PER_WORKER} pages"
    )


if __name__ == "__main__":
    main()
