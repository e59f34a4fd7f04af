"""The metadata's date search: the same dates in less time (issue 45, a fifth round).

    python -m benchmarks.metadata_dates --data ../shared/data [--limit 0] [--datasets a,b]
        [--all-pages]

On the developer pages (``--limit`` per dataset; 0: all) where the metadata runs htmldate's
date search (no structured source the date rule believes first: ``metadata.gather``; with
``--all-pages``, every page), three ways of getting htmldate's date and the date kept of it,
each timed by CPU, interleaved page by page (the order rotates: htmldate caches the date
strings it parsed, so whoever goes later is cheaper):

* ``one pass``: ``fields.pagedate.find_dates`` with ``LONG_TEXT_PATTERN`` anchored at years
  (``fields.datescan.YearAnchoredSearch``): the metadata now;
* ``twice``: ``find_date``, then ``find_date`` again without the free-text search for a
  first of January (``real_date``), the pattern anchored as above;
* ``twice, htmldate's pattern``: the same with htmldate's own ``LONG_TEXT_PATTERN``: the
  metadata before this round.

Prints the pages whose answers differ, their count, the pages' median HTML size, how many
gave htmldate's guess from a bare year (a first of January, checked again), per way the
median and mean milliseconds per page with the ratios to the last; and on the searched pages
whose publication day is labelled (fundus-dev, wcxb-dev), how many days the metadata gets
right with htmldate's free-text search and without it (``extensive_search=False``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from htmldate import extractors, find_date
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.fields.metadata import FALLBACK, RULES, date_config
from scrapy_maintext.fields.pagedate import find_dates, real_date
from scrapy_maintext.fields.structured import page_candidates
from scrapy_maintext.models.dataset import DATASETS, iter_pages

WAYS = ("one pass", "twice", "twice, htmldate's pattern")
FAST = {"extensive_search": False}


def runs(tree: Any, url: str | None) -> dict[str, Callable[[], tuple[str | None, str | None]]]:
    dates = date_config(tree)
    anchored = extractors.LONG_TEXT_PATTERN
    original = getattr(anchored, "original", anchored)

    def twice(pattern: Any) -> tuple[str | None, str | None]:
        extractors.LONG_TEXT_PATTERN = pattern
        try:
            found = find_date(tree, url=url, **dates)
            return found, real_date(found, tree, url)
        finally:
            extractors.LONG_TEXT_PATTERN = anchored

    return {
        WAYS[0]: lambda: find_dates(tree, url, dates, url),
        WAYS[1]: lambda: twice(anchored),
        WAYS[2]: lambda: twice(original),
    }


def labelled_days(data: str) -> dict[str, str]:
    """The publication day (YYYY-MM-DD) of every labelled page of fundus-dev and wcxb-dev,
    by URL."""
    days: dict[str, str] = {}
    for name in ("fundus-dev", "wcxb-dev"):
        with gzip.open(f"{data}/{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                day = ((record.get("meta") or {}).get("publish_date") or "")[:10]
                if day and record.get("url"):
                    days[record["url"]] = day
    return days


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--limit", type=int, default=0, help="pages per dataset (0: all)")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--all-pages", action="store_true", help="not only those searched")
    parser.add_argument("--show", type=int, default=10, help="differing pages to print")
    args = parser.parse_args()
    counts: dict[str, int] = defaultdict(int)
    times: dict[str, list[float]] = defaultdict(list)
    sizes: list[int] = []
    differ = new_year = 0
    labels, right = labelled_days(args.data), defaultdict(int)
    for page in iter_pages(args.data, tuple(args.datasets.split(","))):
        if args.limit and counts[page.dataset] >= args.limit:
            continue
        tree = parse_page(page.html, ExtractOptions()).tree
        if tree is None:
            continue
        found = page_candidates(tree, page.url)
        if not args.all_pages and not RULES["date"].needs(found.date, FALLBACK):
            continue
        counts[page.dataset] += 1
        sizes.append(len(page.html))
        ways = runs(tree, page.url)
        shift = sum(counts.values()) % len(WAYS)
        out = {}
        for name in WAYS[shift:] + WAYS[:shift]:
            started = time.process_time()
            out[name] = ways[name]()
            times[name].append((time.process_time() - started) * 1000)
        new_year += (out[WAYS[0]][0] or "").endswith("-01-01")
        if page.url in labels:
            fast = find_dates(tree, page.url, date_config(tree) | FAST, page.url)[1]
            right["labelled"] += 1
            right["with the free-text search"] += (out[WAYS[0]][1] or "")[:10] == labels[page.url]
            right["without it"] += (fast or "")[:10] == labels[page.url]
        if len(set(out.values())) > 1:
            differ += 1
            if differ <= args.show:
                print(f"differs: {page.dataset} {page.url} {out}")
    print(f"{sum(counts.values())} pages ({dict(counts)}), {differ} with different dates")
    print(f"their HTML: median {statistics.median(sizes) / 1000:.0f} kB (characters)")
    print(f"htmldate answered a first of January on {new_year}")
    base = WAYS[-1]
    for name in WAYS:
        median, mean = statistics.median(times[name]), statistics.mean(times[name])
        ratios = (median / statistics.median(times[base]), mean / statistics.mean(times[base]))
        print(
            f"{name:26s} median {median:6.2f} ms, mean {mean:6.2f} ms;"
            f" / {base}: {ratios[0]:.2f} (medians), {ratios[1]:.2f} (means)"
        )

    print(f"labelled days right: {dict(right)}")


if __name__ == "__main__":
    main()
