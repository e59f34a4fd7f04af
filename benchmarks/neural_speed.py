"""Per-stage timing of the neural path against trafilatura, on held-out pages.

    python -m benchmarks.neural_speed --data ../shared/data [--limit 100]

Stages: parse (lxml), segment, features, the trafilatura reference (models that stack it;
``neural.stack``), inference (ONNX int8), and the whole path through ``NeuralExtractor.extract``;
trafilatura is ``trafilatura.extract(html)`` with its defaults on the same pages in the same
loop. Single thread, as in a crawl worker.
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
from scrapy_maintext.neural.stack import stack_features, tokens, trafilatura_text

STAGES = ("parse", "segment", "features", "reference", "inference", "neural total", "trafilatura")


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
    if extractor.needs_reference:
        text = trafilatura_text(tree, None, extractor.reference)
        feats.stack = stack_features([tokens(b.text) for b in blocks], text)
    t4 = time.perf_counter()
    extractor.model.predict(feats)
    t5 = time.perf_counter()
    extractor.extract(parse_html(html))
    t6 = time.perf_counter()
    trafilatura.extract(html)
    t7 = time.perf_counter()
    marks = (t0, t1, t2, t3, t4, t5, t6, t7)
    for stage, start, end in zip(STAGES, marks, marks[1:], strict=False):
        timings[stage].append((end - start) * 1000.0)


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
