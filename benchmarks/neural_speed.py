"""Per-stage timing of the neural path against trafilatura, on held-out pages.

    python -m benchmarks.neural_speed --data ../shared/data [--limit 100]

Stages: parse (lxml), segment, features, inference (ONNX int8), and the whole path through
``NeuralExtractor.extract``; trafilatura is ``trafilatura.extract(html, fast=True,
favor_recall=True)`` on the same pages in the same loop. Single thread, as in a crawl worker.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np
from scrapy_maintext.models.dataset import DATASETS, iter_pages
from scrapy_maintext.models.systems import parse_html
from scrapy_maintext.neural import default_extractor
from scrapy_maintext.neural.features import featurize
from scrapy_maintext.neural.segment import segment

STAGES = ("parse", "segment", "features", "inference", "neural total", "trafilatura")


def time_page(html: str, timings: dict[str, list[float]]) -> None:
    import trafilatura

    extractor = default_extractor()
    t0 = time.perf_counter()
    tree = parse_html(html)
    t1 = time.perf_counter()
    blocks = segment(tree)
    t2 = time.perf_counter()
    feats = featurize(blocks)
    t3 = time.perf_counter()
    extractor.model.predict(feats)
    t4 = time.perf_counter()
    extractor.extract(parse_html(html))
    t5 = time.perf_counter()
    trafilatura.extract(html, fast=True, favor_recall=True)
    t6 = time.perf_counter()
    for stage, seconds in zip(
        STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5), strict=True
    ):
        timings[stage].append(seconds * 1000.0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--limit", type=int, default=100, help="pages per dataset")
    args = parser.parse_args(argv)
    timings: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for page in iter_pages(args.data, DATASETS):
        if page.split == "test" and counts[page.dataset] < args.limit:
            counts[page.dataset] += 1
            time_page(page.html, timings)
    print(f"{sum(counts.values())} held-out pages; ms per page")
    print("| stage | median | p90 | mean |\n|---|---|---|---|")
    for stage in STAGES:
        v = np.array(timings[stage])
        print(f"| {stage} | {np.median(v):.2f} | {np.percentile(v, 90):.2f} | {v.mean():.2f} |")


if __name__ == "__main__":
    main()
