"""Where should trafilatura's readability/jusText comparison stop (``extraction.comparison``)?

    python -m benchmarks.studies.comparison_bound --data ../shared/data [--sizes 2000,5000,10000]

Prints (1) how many paragraph elements (jusText's tags) the developer pages have: percentiles,
the largest, and how many pages lie over ``MAX_COMPARED_PARAGRAPHS``; (2) for the largest pages,
trafilatura's time with and without the comparison, interleaved; (3) on the pathological page
(a short article, then N one-line paragraphs), the time of trafilatura with and without the
comparison and of the default ``extract()``, per N. One thread, this machine's load included.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lxml.html
import numpy as np
from scrapy_maintext import extract
from scrapy_maintext.extraction.comparison import MAX_COMPARED_PARAGRAPHS, PARAGRAPH_TAGS
from trafilatura import bare_extraction

from tests.slow_page import short_paragraphs_page

DATASETS = ("wcxb-dev", "cleaneval", "dragnet", "l3s-gn1", "readability", "trafilatura")


def _trees(data: Path) -> Iterator[tuple[str, Any]]:
    for name in DATASETS:
        with gzip.open(data / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                try:
                    yield rec["id"], lxml.html.fromstring(rec["html"])
                except Exception:  # unparsable developer pages are not extracted either
                    continue


def _seconds(tree: Any, fast: bool) -> float:
    t0 = time.perf_counter()
    bare_extraction(tree, fast=fast, with_metadata=False)
    return time.perf_counter() - t0


def developer_pages(data: Path, largest: int) -> None:
    counted = [(sum(1 for _ in t.iter(*PARAGRAPH_TAGS)), pid) for pid, t in _trees(data)]
    sizes = np.array([c for c, _ in counted])
    pct = np.percentile(sizes, [50, 90, 99, 99.9])
    print(f"{len(sizes)} developer pages; paragraph elements p50/p90/p99/p99.9 {pct.round()}")
    over = int((sizes > MAX_COMPARED_PARAGRAPHS).sum())
    print(f"largest {sizes.max()}; over the bound ({MAX_COMPARED_PARAGRAPHS}): {over}")
    print("| page | paragraph elements | with comparison s | fast s |\n|---|---|---|---|")
    top = dict((pid, count) for count, pid in sorted(counted, key=lambda c: -c[0])[:largest])
    for pid, tree in _trees(data):  # parsed again: holding every tree takes gigabytes
        if pid not in top:
            continue
        count = top[pid]
        full, fast = _seconds(tree, False), _seconds(tree, True)
        print(f"| {pid} | {count} | {full:.2f} | {fast:.2f} |")


def pathological(sizes: list[int]) -> None:
    print("| short paragraphs | with comparison s | fast s | extract() s |\n|---|---|---|---|")
    for n in sizes:
        html = short_paragraphs_page(n)
        tree = lxml.html.fromstring(html)
        full, fast = _seconds(tree, False), _seconds(tree, True)
        t0 = time.perf_counter()
        extract(html, "https://example.org/flood")
        print(f"| {n} | {full:.2f} | {fast:.2f} | {time.perf_counter() - t0:.2f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--largest", type=int, default=6, help="largest developer pages timed")
    parser.add_argument("--sizes", default="2000,5000,10000", help="short paragraphs, comma list")
    args = parser.parse_args(argv)
    developer_pages(args.data, args.largest)
    pathological([int(s) for s in args.sizes.split(",")])


if __name__ == "__main__":
    main()
