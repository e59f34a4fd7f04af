"""Our metadata step against ``trafilatura.metadata.extract_metadata``: same fields, time.

    python -m benchmarks.metadata_equivalence --data ../shared/data [--limit 0]

For every developer page (``--limit`` per dataset; 0: all), both get the same parsed tree,
URL and htmldate settings, interleaved page by page in one thread (who goes first alternates:
htmldate caches what it parsed):

* ``scrapy_maintext.fields.metadata.trafilatura_metadata``: trafilatura's steps, with the
  author search of ``scrapy_maintext.fields.author``;
* ``trafilatura.metadata.extract_metadata``;

and the author search alone, ``scrapy_maintext.fields.author.extract_author`` against
``trafilatura.metadata.extract_author`` (the step that differs).

Prints the pages whose fields differ (at most ``--show``), their count, and the median and
mean milliseconds per page of each with the ratios of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from typing import Any

from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.fields.author import extract_author
from scrapy_maintext.fields.metadata import date_config, trafilatura_metadata
from scrapy_maintext.models.dataset import DATASETS, iter_pages
from trafilatura.metadata import extract_author as trafilatura_author
from trafilatura.metadata import extract_metadata


def fields(meta: Any) -> dict[str, Any]:
    return {k: v for k, v in meta.as_dict().items() if k not in ("body", "commentsbody")}


def timed_pair(
    tree: Any, url: str | None, first_ours: bool, times: dict[str, list[float]]
) -> dict[str, dict[str, Any]]:
    """Both systems' fields for one page, each timed into ``times``."""
    dates = date_config(tree)
    runs = {
        "ours": lambda: fields(trafilatura_metadata(tree, url, dates)),
        "trafilatura": lambda: fields(extract_metadata(tree, default_url=url, date_config=dates)),
        "author (ours)": lambda: {"author": extract_author(tree)},
        "author (trafilatura)": lambda: {"author": trafilatura_author(tree)},
    }
    out = {}
    for name in list(runs) if first_ours else list(runs)[::-1]:
        t0 = time.perf_counter()
        out[name] = runs[name]()
        times[name].append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--limit", type=int, default=0, help="pages per dataset (0: all)")
    parser.add_argument("--show", type=int, default=10, help="differing pages to print")
    args = parser.parse_args()
    counts: dict[str, int] = defaultdict(int)
    times: dict[str, list[float]] = defaultdict(list)
    differ = 0
    for page in iter_pages(args.data, DATASETS):
        if args.limit and counts[page.dataset] >= args.limit:
            continue
        tree = parse_page(page.html, ExtractOptions()).tree
        if tree is None:
            continue
        counts[page.dataset] += 1
        # Alternate who goes first: htmldate caches date strings, so the second is cheaper.
        out = timed_pair(tree, page.url, first_ours=sum(counts.values()) % 2 == 1, times=times)
        ours = {**out["ours"], "author search": out["author (ours)"]["author"]}
        theirs = {**out["trafilatura"], "author search": out["author (trafilatura)"]["author"]}
        if ours != theirs:
            differ += 1
            if differ <= args.show:
                diff = {k: (ours[k], theirs.get(k)) for k in ours if ours[k] != theirs.get(k)}
                print(f"differs: {page.dataset} {page.url} {diff}")
    pages = sum(counts.values())
    print(f"{pages} pages, {differ} with different metadata")
    for name, values in times.items():
        median, mean = statistics.median(values), statistics.mean(values)
        print(f"{name:21s} median {median:6.2f} ms, mean {mean:6.2f} ms")
    for ours, theirs in (("ours", "trafilatura"), ("author (ours)", "author (trafilatura)")):
        ratio = statistics.median(times[ours]) / statistics.median(times[theirs])
        print(f"ratio of medians ({ours} / {theirs}): {ratio:.2f}")


if __name__ == "__main__":
    main()
