"""What the one walk of the page saves, and what the collector costs a page.

    python -m benchmarks.page_walk --data ../shared/data [--limit 15] [--repeat 3]
    python -m benchmarks.page_walk --data ../shared/data --gc [--limit 15] [--repeat 2]

Pages: the held-out pages of every dataset (``--limit`` per dataset), parsed once, every
element's proxy held (as ``extract()`` holds them). CPU time of this process, one thread.

Default: per page, interleaved (the order rotates from page to page), ``--repeat`` times:

* ``segment only``: the segmenter's walk (``neural.segment.segment``) alone;
* ``one walk``: the segmenter's walk feeding the page type's structure counts and the
  pictures' text walk (``extraction.page_walk.PageWalk``), as ``extract()`` runs it;
* ``three walks``: the segmenter's walk, then the page type's own loop over the elements and
  the pictures' own walk (what runs when the segmenter's walk is not complete).

``--gc``: ``extract()`` on every page, ``--repeat`` times, then again after ``gc.freeze()``
(as the extraction workers do after their warm-up): the CPU per page and the collector's own
time per page (``gc.callbacks``). Not interleaved (a freeze is for the process's life): the
collector's time is the figure to read, the CPU per page drifts with the machine's load.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from itertools import islice
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import lxml.html
from lxml import etree
from scrapy_maintext.extraction import page_type
from scrapy_maintext.extraction.page_walk import PageWalk
from scrapy_maintext.neural.segment import segment
from scrapy_maintext.pictures.images import walk

from benchmarks.extract_speed import WARMUP_PAGES, pages


def three_walks(tree: Any) -> None:
    segment(tree)
    structure = page_type.Structure()
    for el in islice(tree.iter(etree.Element), page_type.MAX_ELEMENTS):
        structure.add(el, el.tag, el.text, el.attrib)
    walk(tree)


def one_walk(tree: Any) -> None:
    segment(tree, False, PageWalk.of(tree))


WALKS: dict[str, Callable[[Any], None]] = {
    "segment only": segment,
    "one walk": one_walk,
    "three walks": three_walks,
}


def time_walks(trees: list[Any], repeat: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = defaultdict(list)
    names = list(WALKS)
    for _ in range(repeat):
        for i, tree in enumerate(trees):
            shift = i % len(names)
            for name in names[shift:] + names[:shift]:
                start = time.process_time()
                WALKS[name](tree)
                times[name].append((time.process_time() - start) * 1000.0)
    return times


def time_gc(todo: list[Any], repeat: int) -> dict[str, list[float]]:
    from scrapy_maintext import extract

    for page in todo[:WARMUP_PAGES]:
        extract(page.html, page.url)
    gc.collect()
    spent = [0.0]
    started = [0.0]

    def clock(phase: str, _: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.process_time()
        else:
            spent[0] += time.process_time() - started[0]

    gc.callbacks.append(clock)
    times: dict[str, list[float]] = defaultdict(list)
    for frozen in (False, True):
        if frozen:
            gc.collect()
            gc.freeze()
        name = "frozen" if frozen else "not frozen"
        for _ in range(repeat):
            for page in todo:
                spent[0] = 0.0
                start = time.process_time()
                extract(page.html, page.url)
                times[name].append((time.process_time() - start) * 1000.0)
                times[f"{name}: collector"].append(spent[0] * 1000.0)
    gc.callbacks.remove(clock)
    gc.unfreeze()
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--limit", type=int, default=15, help="held-out pages per dataset")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the pages")
    parser.add_argument("--gc", action="store_true", help="the collector's cost per page")
    args = parser.parse_args(argv)
    todo = pages(args.data, args.limit)
    if args.gc:
        times = time_gc(todo, args.repeat)
    else:
        trees = [lxml.html.document_fromstring(page.html) for page in todo]
        held = [list(tree.iter()) for tree in trees]
        times = time_walks(trees, args.repeat)
        del held
    print(f"{len(todo)} pages x {args.repeat}, CPU ms per page")
    print("| | median | mean |\n|---|---|---|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.2f} | {statistics.fmean(values):.2f} |")


if __name__ == "__main__":
    main()
