"""Time per page of the default ``extract()`` against trafilatura with metadata.

    python -m benchmarks.extract_speed --data ../shared/data [--limit 60] [--repeat 1]

Both systems get the same decoded HTML string and the URL, page by page, interleaved (the
order alternates from page to page), in one thread:

* ``scrapy_maintext.extract(html, url)``: the product's defaults (``auto`` engine, text and
  metadata);
* ``trafilatura.bare_extraction(html, url=url, with_metadata=True)``: trafilatura's text and
  metadata with its defaults.

Pages: the held-out pages of every dataset (``--limit`` per dataset). Prints the median and p90
per system and the ratio of the medians (extract / trafilatura); a ratio <= 1.0 meets the
speed target of issue 7. A warm-up pass over the first pages loads the model and caches.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable

#: One thread everywhere (numpy/BLAS too), as in a crawl worker.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from scrapy_maintext.models.dataset import DATASETS, Page, iter_pages

#: Pages run once before timing (model load, regex and hash caches).
WARMUP_PAGES = 20


def systems() -> dict[str, Callable[[str, str | None], object]]:
    import trafilatura
    from scrapy_maintext import extract

    def ours(html: str, url: str | None) -> object:
        return extract(html, url)

    def theirs(html: str, url: str | None) -> object:
        return trafilatura.bare_extraction(html, url=url, with_metadata=True)

    return {"extract() default": ours, "trafilatura.bare_extraction(with_metadata=True)": theirs}


def pages(data: str, limit: int) -> list[Page]:
    counts: dict[str, int] = defaultdict(int)
    out = []
    for page in iter_pages(data, DATASETS):
        if page.split == "test" and counts[page.dataset] < limit:
            counts[page.dataset] += 1
            out.append(page)
    return out


def run(data: str, limit: int, repeat: int) -> dict[str, list[float]]:
    todo = pages(data, limit)
    funcs = systems()
    names = list(funcs)
    for page in todo[:WARMUP_PAGES]:
        for name in names:
            funcs[name](page.html, page.url)
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeat):
        for i, page in enumerate(todo):
            order = names if i % 2 == 0 else names[::-1]
            for name in order:
                t0 = time.perf_counter()
                funcs[name](page.html, page.url)
                times[name].append((time.perf_counter() - t0) * 1000.0)
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--limit", type=int, default=60, help="held-out pages per dataset")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    times = run(args.data, args.limit, args.repeat)
    ours, theirs = (statistics.median(v) for v in times.values())
    n = len(next(iter(times.values())))
    print(f"{n} page runs, one thread, ms per page")
    print("| system | median | p90 |\n|---|---|---|")
    for name, values in times.items():
        p90 = sorted(values)[int(0.9 * (len(values) - 1))]
        print(f"| {name} | {statistics.median(values):.1f} | {p90:.1f} |")
    print(f"\nratio of medians (extract / trafilatura): {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
