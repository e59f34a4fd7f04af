"""How long does extraction take per page against trafilatura, and where does the time go?

    python -m benchmarks.extract_speed --data ../shared/data [--limit 60] [--repeat 1] [--model v5]
        [--no-images] [--against COMMIT]... [--clock wall|cpu]
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
* with ``--against COMMIT`` (repeatable), also ``extract()`` of that commit (exported with
  ``git archive``) in a long-lived process of its own, timed inside it, in the same rotation:
  a speed change measured in one run, with the ratio of the medians and of the means (the
  checkout's own commit among them: both sides then pay for htmldate's date cache alone);
* with ``--no-images``, also ``extract()`` without the article's images
  (``ExtractOptions(images=False)``, ``EXTRACT_IMAGES=False``): what finding them costs.

``--clock cpu`` times each call by its process's CPU time (``time.process_time``) instead of
the wall clock: on a loaded shared machine the wall time also counts other processes' turns.

Prints the median, p90 and mean per system and the ratios of the medians and of the means
(extract / trafilatura; a corpus run pays the mean); a ratio <= 1.0 meets the speed target.

``--stages``: the default ``extract()`` in stages instead (``STAGE_HOOKS``: parse, metadata,
page type, segment, features, inference, decision, groups, repeats, markup, a trafilatura
fallback, convention, authors, images, fingerprint, language and the rest), each stage's
own time measured inside the real call, interleaved page by page with trafilatura's
``bare_extraction(with_metadata=True)``. Prints the median, p90 and mean per stage, its share
of ``extract()``'s mean and its mean over trafilatura's mean.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: One thread everywhere (numpy/BLAS too), as in a crawl worker.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from scrapy_maintext.models.dataset import DATASETS, Page, iter_pages

#: Pages run once before timing (model load, regex and hash caches).
WARMUP_PAGES = 20


THEIRS = "trafilatura.bare_extraction(with_metadata=True)"
#: The clock every system is timed by (``--clock``): wall time, or this process's CPU time
#: (on a loaded shared machine a run's wall time counts the other processes' turns too).
CLOCK = [time.perf_counter]


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


#: The worker of ``--against``: reads pages (JSON lines: html, url), answers the ms of
#: ``extract(html, url)`` (the product's defaults), timed inside the worker.
WORKER = """
import json, os, sys, time
from scrapy_maintext.extraction import extract
clock = getattr(time, sys.argv[1])
for line in sys.stdin:
    page = json.loads(line)
    start = clock()
    extract(page["html"], page["url"])
    print((clock() - start) * 1000.0, flush=True)
"""
#: The worker of ``--stages --against``: the commit's own stage hooks (its
#: ``benchmarks.extract_speed``) around its ``extract()``; answers each stage's ms and the total.
STAGE_WORKER = """
import json, sys, time
from benchmarks import extract_speed as bench
bench.CLOCK[0] = getattr(time, sys.argv[1])
stages = bench.StageClock()
stages.install()
from scrapy_maintext.extraction import extract
for line in sys.stdin:
    page = json.loads(line)
    stages.page.clear()
    start = bench.CLOCK[0]()
    extract(page["html"], page["url"])
    spent = (bench.CLOCK[0]() - start) * 1000.0
    print(json.dumps({**stages.page, "extract() total": spent}), flush=True)
"""


class AtCommit:
    """``extract()`` of an earlier commit (exported with ``git archive``, as
    ``benchmarks.huge_pages`` does) in a long-lived process; a call answers its own time."""

    def __init__(self, commit: str, folder: Path, stages: bool = False) -> None:
        from benchmarks.huge_pages import importable

        path = importable(commit, folder)
        if stages:  # the commit's own benchmark, beside its package
            path += os.pathsep + str(folder / "tree")
        env = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", STAGE_WORKER if stages else WORKER, CLOCK[0].__name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tempfile.gettempdir(),
        )

    def __call__(self, html: str, url: str | None) -> Any:
        """The ms of ``extract()`` (with ``stages``: a dict of each stage's ms and the total)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"html": html, "url": url}) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def pages(data: str, limit: int) -> list[Page]:
    counts: dict[str, int] = defaultdict(int)
    out = []
    for page in iter_pages(data, DATASETS):
        if page.split == "test" and counts[page.dataset] < limit:
            counts[page.dataset] += 1
            out.append(page)
    return out


def run(
    todo: list[Page],
    repeat: int,
    models: tuple[str, ...] = (),
    no_images: bool = False,
    against: tuple[str, ...] = (),
) -> dict[str, list[float]]:
    funcs: dict[str, Callable[[str, str | None], object]] = dict(systems(models, no_images))
    with tempfile.TemporaryDirectory() as tmp:
        for number, commit in enumerate(against):
            (Path(tmp) / str(number)).mkdir()
            funcs[f"extract() at {commit}"] = AtCommit(commit, Path(tmp) / str(number))
        try:
            return _rotate(todo, repeat, funcs)
        finally:
            for func in funcs.values():
                if isinstance(func, AtCommit):
                    func.stop()


def _rotate(
    todo: list[Page], repeat: int, funcs: dict[str, Callable[[str, str | None], object]]
) -> dict[str, list[float]]:
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
                t0 = CLOCK[0]()
                answer = funcs[name](page.html, page.url)
                spent = (CLOCK[0]() - t0) * 1000.0
                # An earlier commit's worker times itself (no pipe in its figure).
                times[name].append(answer if isinstance(answer, float) else spent)
    return times


#: Every stage of ``extract()``: (stage, module, attribute) wrapped in place for the run, in
#: the order a page meets them. A stage's time excludes the stages it calls (a second
#: opinion's trafilatura run and its convention count as those stages); "other" is the rest
#: of ``extract()`` (argument checks, the Document, glue).
STAGE_HOOKS = (
    ("parse", "scrapy_maintext.extraction.core", "parse_page"),
    ("metadata", "scrapy_maintext.extraction.core", "apply_metadata"),
    ("page type", "scrapy_maintext.extraction.page_type", "predict"),
    ("segment", "scrapy_maintext.neural", "segment_page"),
    ("features", "scrapy_maintext.neural", "featurize"),
    ("inference", "scrapy_maintext.neural.inference", "BlockModel.predict"),
    ("decision", "scrapy_maintext.neural", "decide"),
    ("groups", "scrapy_maintext.neural", "path_signatures"),
    ("groups", "scrapy_maintext.neural", "keep_group_slots"),
    ("repeats", "scrapy_maintext.neural", "drop_repeated_runs"),
    ("markup", "scrapy_maintext.extraction.engines", "_kept_markup"),
    ("trafilatura fallback", "scrapy_maintext.extraction.engines", "run_trafilatura"),
    ("trafilatura fallback", "scrapy_maintext.extraction.core", "run_trafilatura"),
    ("convention", "scrapy_maintext.extraction.core", "settle_body"),
    ("authors", "scrapy_maintext.extraction.core", "split_authors"),
    ("images", "scrapy_maintext.extraction.core", "add_images"),
    ("fingerprint", "scrapy_maintext.extraction.core", "fingerprint"),
    ("language", "scrapy_maintext.extraction.core", "apply_language"),
)


class StageClock:
    """Self time per stage of one page (ms): each hooked call's time less its hooked callees'."""

    def __init__(self) -> None:
        self.page: dict[str, float] = defaultdict(float)
        self._inner: list[float] = []

    def wrap(self, stage: str, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._inner.append(0.0)
            t0 = CLOCK[0]()
            try:
                return func(*args, **kwargs)
            finally:
                spent = CLOCK[0]() - t0
                inner = self._inner.pop()
                self.page[stage] += (spent - inner) * 1000.0
                if self._inner:
                    self._inner[-1] += spent

        return timed

    def install(self) -> None:
        """Every hook of ``STAGE_HOOKS`` wrapped, for the rest of the process."""
        for stage, module_name, attribute in STAGE_HOOKS:
            owner: Any = importlib.import_module(module_name)
            *path, name = attribute.split(".")
            for part in path:
                owner = getattr(owner, part)
            setattr(owner, name, self.wrap(stage, getattr(owner, name)))


def stage_names() -> list[str]:
    return [*dict.fromkeys(stage for stage, _, _ in STAGE_HOOKS), "other"]


def time_stages(
    todo: list[Page], repeat: int, against: str | None = None
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per page run, each stage's ms of the default ``extract()``, its total, and
    trafilatura's ``bare_extraction(with_metadata=True)`` on the same page; with ``against``,
    the same stages of that commit's ``extract()`` (its own hooks, in its own process), in
    the same rotation. The systems take turns at going first from page to page."""
    funcs = systems()
    ours, theirs = funcs["extract() default"], funcs[THEIRS]
    clock = StageClock()
    clock.install()
    timings: dict[str, list[float]] = defaultdict(list)
    old: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        other = AtCommit(against, Path(tmp), stages=True) if against else None
        names = ["ours", "theirs", *(["old"] if other else [])]
        try:
            for page in todo[:WARMUP_PAGES]:
                ours(page.html, page.url)
                if other:
                    other(page.html, page.url)
            for _ in range(repeat):
                for i, page in enumerate(todo):
                    shift = i % len(names)
                    for name in names[shift:] + names[:shift]:
                        if name == "old":
                            _add_stages(old, other(page.html, page.url))  # type: ignore[misc]
                            continue
                        clock.page.clear()
                        t0 = CLOCK[0]()
                        (ours if name == "ours" else theirs)(page.html, page.url)
                        spent = (CLOCK[0]() - t0) * 1000.0
                        if name == "theirs":
                            timings[THEIRS].append(spent)
                        else:
                            _add_stages(timings, {**clock.page, "extract() total": spent})
        finally:
            if other:
                other.stop()
    return timings, old


def _add_stages(timings: dict[str, list[float]], page: dict[str, float]) -> None:
    """One page's stage times (and total) into ``timings``; "other" is the rest."""
    staged = stage_names()[:-1]
    for stage in staged:
        timings[stage].append(page.get(stage, 0.0))
    spent = page["extract() total"]
    timings["extract() total"].append(spent)
    timings["other"].append(spent - sum(page.get(stage, 0.0) for stage in staged))


def print_stages(
    timings: dict[str, list[float]], old: dict[str, list[float]], against: str | None = None
) -> None:
    theirs = np.array(timings[THEIRS])
    print(f"{len(theirs)} page runs, one thread, ms per page (interleaved with trafilatura)")
    head = "| stage | median | p90 | mean | share of the mean | mean / trafilatura's mean |"
    print(head + (f" at {against}: median | mean | share |" if old else ""))
    print("|---|---|---|---|---|---|" + ("---|---|---|" if old else ""))
    for stage in [*stage_names(), "extract() total", THEIRS]:
        over = np.mean(timings[stage]) / theirs.mean()
        row = f"| {stage} | {_stage_cells(timings, stage)} | {over:.3f} |"
        if old:
            row += f" {_stage_cells(old, stage, p90=False)} |" if stage != THEIRS else " | | |"
        print(row)
    for name, values in (("extract()", timings), (f"extract() at {against}", old)):
        if values:
            median = np.median(values["extract() total"]) / np.median(theirs)
            mean = np.mean(values["extract() total"]) / theirs.mean()
            print(f"\n{name} / trafilatura: ratio of medians {median:.2f}, of means {mean:.2f}")


def _stage_cells(timings: dict[str, list[float]], stage: str, p90: bool = True) -> str:
    v = np.array(timings[stage])
    total = float(np.mean(timings["extract() total"]))
    share = f"{v.mean() / total:.1%}" if stage in stage_names() else ""
    spread = f" {np.percentile(v, 90):.2f} |" if p90 else ""
    return f"{np.median(v):.2f} |{spread} {v.mean():.2f} | {share}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--limit", type=int, default=60, help="held-out pages per dataset")
    parser.add_argument("--repeat", type=int, default=1, help="passes over the pages")
    parser.add_argument("--stages", action="store_true", help="time every stage of extract()")
    parser.add_argument(
        "--model", action="append", default=[], help="also extract() with this model folder"
    )
    parser.add_argument(
        "--no-images",
        action="store_true",
        help="also extract() without the article's images (what the image step costs)",
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="time by the wall clock or by each process's CPU time (time.process_time)",
    )
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        help="also extract() of this commit (its own process), interleaved; repeatable",
    )
    args = parser.parse_args(argv)
    CLOCK[0] = time.process_time if args.clock == "cpu" else time.perf_counter
    todo = pages(args.data, args.limit)
    if args.stages:
        commit = args.against[0] if args.against else None
        print_stages(*time_stages(todo, args.repeat, commit), commit)
        return
    times = run(todo, args.repeat, tuple(args.model), args.no_images, tuple(args.against))
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
    for commit in args.against:
        ours, old = times["extract() default"], times[f"extract() at {commit}"]
        median = statistics.median(ours) / statistics.median(old)
        mean = statistics.fmean(ours) / statistics.fmean(old)
        print(f"\nextract() / at {commit}: ratio of medians {median:.2f}, of means {mean:.2f}")


if __name__ == "__main__":
    main()
