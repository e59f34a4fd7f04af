"""How long does extraction take per page against trafilatura, and where does the time go?

    python -m benchmarks.extract_speed --data ../shared/data [--limit 60] [--repeat 1] [--model v5]
        [--no-images]
    python -m benchmarks.extract_speed --data ../shared/data --stages [--limit 60]

Pages: the held-out pages of every dataset (``--limit`` per dataset), one thread (numpy and
ONNX Runtime too), as in a crawl worker. A warm-up pass over the first pages loads the model
and fills the caches before anything is timed.

Default: both systems get the same decoded HTML string and the URL, page by page, interleaved
(the order rotates from page to page), ``--repeat`` times over the pages:

* ``scrapy_maintext.extract(html, url)``: the product's defaults (``auto`` engine, text and
  metadata);
* ``trafilatura.bare_extraction(html, url=url, with_metadata=True)``: trafilatura's text and
  metadata with its defaults;
* with ``--model FOLDER`` (repeatable; a path or a shipped folder's name, as ``EXTRACT_MODEL``),
  also ``extract()`` with that model, in the same rotation.
* with ``--no-images``, also ``extract()`` without the article's images
  (``ExtractOptions(images=False)``, ``EXTRACT_IMAGES=False``): what finding them costs.

Prints the median, p90 and mean per system and the ratios of the medians and of the means
(extract / trafilatura; a corpus run pays the mean); a ratio <= 1.0 meets the speed target.

``--stages``: the default neural model's path in stages instead, on the same pages in one loop:
parse (lxml), segment, features, the trafilatura reference (for a model that stacks it,
``neural.stack``; 0 for a cascade's first model), inference (ONNX int8), the whole path through
``NeuralExtractor.extract`` (a cascade's next model and its trafilatura run included), and
``trafilatura.extract(html)`` with its defaults. Prints the median, p90 and mean per stage.
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

import numpy as np
from scrapy_maintext.models.dataset import DATASETS, Page, iter_pages

#: Pages run once before timing (model load, regex and hash caches).
WARMUP_PAGES = 20
STAGES = ("parse", "segment", "features", "reference", "inference", "neural total", "trafilatura")


THEIRS = "trafilatura.bare_extraction(with_metadata=True)"


def systems(
    models: tuple[str, ...] = (), no_images: bool = False
) -> dict[str, Callable[[str, str | None], object]]:
    """The product's default ``extract()``, one ``extract()`` per model folder in ``models``
    (``EXTRACT_MODEL``: a path or a shipped folder's name), and trafilatura."""
    import trafilatura
    from scrapy_maintext import ExtractOptions, extract
    from scrapy_maintext.extraction.options import model_folder

    def ours(options: ExtractOptions) -> Callable[[str, str | None], object]:
        return lambda html, url: extract(html, url, options)

    def theirs(html: str, url: str | None) -> object:
        return trafilatura.bare_extraction(html, url=url, with_metadata=True)

    funcs = {"extract() default": ours(ExtractOptions())}
    if no_images:
        funcs["extract() --no-images"] = ours(ExtractOptions(images=False))
    for model in models:
        funcs[f"extract() --model {model}"] = ours(ExtractOptions(model=model_folder(model)))
    return funcs | {THEIRS: theirs}


def pages(data: str, limit: int) -> list[Page]:
    counts: dict[str, int] = defaultdict(int)
    out = []
    for page in iter_pages(data, DATASETS):
        if page.split == "test" and counts[page.dataset] < limit:
            counts[page.dataset] += 1
            out.append(page)
    return out


def run(
    todo: list[Page], repeat: int, models: tuple[str, ...] = (), no_images: bool = False
) -> dict[str, list[float]]:
    funcs = systems(models, no_images)
    names = list(funcs)
    for page in todo[:WARMUP_PAGES]:
        for name in names:
            funcs[name](page.html, page.url)
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeat):
        for i, page in enumerate(todo):
            shift = i % len(names)  # every system runs first, second, ... in turn
            order = names[shift:] + names[:shift]
            for name in order:
                t0 = time.perf_counter()
                funcs[name](page.html, page.url)
                times[name].append((time.perf_counter() - t0) * 1000.0)
    return times


def time_stages(html: str, timings: dict[str, list[float]] | None) -> None:
    """One page's stages, in ms, appended to ``timings`` (None: a warm-up run)."""
    import trafilatura
    from scrapy_maintext.models.systems import parse_html
    from scrapy_maintext.neural import default_extractor
    from scrapy_maintext.neural.features import featurize
    from scrapy_maintext.neural.segment import segment
    from scrapy_maintext.neural.stack import stack_features, tokens, trafilatura_text

    extractor = default_extractor()
    t0 = time.perf_counter()
    tree = parse_html(html)
    t1 = time.perf_counter()
    blocks = segment(tree, extractor.keep_hidden)
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
    if timings is None:
        return
    marks = (t0, t1, t2, t3, t4, t5, t6, t7)
    for stage, start, end in zip(STAGES, marks, marks[1:], strict=False):
        timings[stage].append((end - start) * 1000.0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--limit", type=int, default=60, help="held-out pages per dataset")
    parser.add_argument("--repeat", type=int, default=1, help="passes over the pages")
    parser.add_argument("--stages", action="store_true", help="time the neural path's stages")
    parser.add_argument(
        "--model", action="append", default=[], help="also extract() with this model folder"
    )
    parser.add_argument(
        "--no-images",
        action="store_true",
        help="also extract() without the article's images (what the image step costs)",
    )
    args = parser.parse_args(argv)
    todo = pages(args.data, args.limit)
    if args.stages:
        for page in todo[:WARMUP_PAGES]:
            time_stages(page.html, None)
        timings: dict[str, list[float]] = defaultdict(list)
        for _ in range(args.repeat):
            for page in todo:
                time_stages(page.html, timings)
        print(f"{len(timings['parse'])} held-out page runs, one thread; ms per page")
        print("| stage | median | p90 | mean |\n|---|---|---|---|")
        for stage in STAGES:
            v = np.array(timings[stage])
            print(f"| {stage} | {np.median(v):.2f} | {np.percentile(v, 90):.2f} | {v.mean():.2f} |")
        return
    times = run(todo, args.repeat, tuple(args.model), args.no_images)
    n = len(next(iter(times.values())))
    print(f"{n} page runs, one thread, ms per page")
    print("| system | median | p90 | mean |\n|---|---|---|---|")
    for name, values in times.items():
        p90 = sorted(values)[int(0.9 * (len(values) - 1))]
        mean = statistics.fmean(values)
        print(f"| {name} | {statistics.median(values):.1f} | {p90:.1f} | {mean:.1f} |")
    theirs = times[THEIRS]
    for name, values in times.items():
        if name == THEIRS:
            continue
        median = statistics.median(values) / statistics.median(theirs)
        mean = statistics.fmean(values) / statistics.fmean(theirs)
        print(f"\n{name} / trafilatura: ratio of medians {median:.2f}, of means {mean:.2f}")


if __name__ == "__main__":
    main()
