"""Compare the neural extractor with other main-text extractors on held-out pages.

    python -m scrapy_maintext.models.evaluate --data ../shared/data [--limit N] [--out FILE]

Held-out pages only (see ``models.dataset``): dragnet's official test split, about 30% of the
sites of cleaneval, l3s-gn1, readability and wcxb-dev, and the whole trafilatura snippet set.
Every system runs on every page in the same process, in an order rotated from page to page,
so the per-page times are comparable.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scrapy_maintext.models.dataset import DATASETS, Page, iter_pages, usable_for_f1
from scrapy_maintext.models.metrics import rouge_n, snippet_score, token_f1, tokens
from scrapy_maintext.models.systems import FACTORIES, System

logger = logging.getLogger(__name__)

F1_DATASETS = tuple(d for d in DATASETS if d != "trafilatura")
SNIPPETS = "trafilatura"


@dataclass
class Scores:
    f1: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    rouge: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    snippets: list[int] = field(default_factory=lambda: [0, 0])
    ms: list[float] = field(default_factory=list)
    errors: int = 0


def held_out_pages(data: str, limit: int | None) -> list[Page]:
    counts: dict[str, int] = defaultdict(int)
    pages = []
    for page in iter_pages(data):
        if page.split != "test" or (limit is not None and counts[page.dataset] >= limit):
            continue
        if page.dataset == SNIPPETS or usable_for_f1(page):
            counts[page.dataset] += 1
            pages.append(page)
    return pages


def run_system(system: System, page: Page, scores: Scores) -> None:
    t0 = time.perf_counter()
    try:
        text = system(page.html, page.url)
    except Exception as exc:  # a crash scores as empty output
        logger.debug("system failed on %s: %r", page.id, exc)
        text, scores.errors = "", scores.errors + 1
    scores.ms.append((time.perf_counter() - t0) * 1000.0)
    if page.dataset == SNIPPETS:
        correct, total = snippet_score(text, page.with_, page.without)
        scores.snippets[0] += correct
        scores.snippets[1] += total
        return
    pred, gold = tokens(text), tokens(page.text)
    scores.f1[page.dataset].append(token_f1(pred, gold))
    scores.rouge[page.dataset].append(rouge_n(pred, gold))


def load_systems() -> tuple[dict[str, System], dict[str, str]]:
    systems, missing = {}, {}
    for name, factory in FACTORIES.items():
        try:
            systems[name] = factory()
        except Exception as exc:  # report the row as unavailable
            missing[name] = f"{type(exc).__name__}: {exc}"
    return systems, missing


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def _row(name: str, s: Scores, datasets: list[str]) -> str:
    f1 = [_mean(s.f1[d]) for d in datasets]
    rouge = [_mean(s.rouge[d]) for d in datasets]
    snip = s.snippets[0] / s.snippets[1] if s.snippets[1] else float("nan")
    ms = sorted(s.ms)
    cells = [
        f"**{_mean(f1):.3f}**",
        f"{_mean(rouge):.3f}",
        *(f"{v:.3f}" for v in f1),
        f"{snip:.3f}",
        f"{statistics.median(ms):.1f}",
        f"{ms[int(0.9 * (len(ms) - 1))]:.1f}",
    ]
    return f"| {name} | " + " | ".join(cells) + " |"


def table(results: dict[str, Scores], missing: dict[str, str], pages: list[Page]) -> str:
    datasets = [d for d in F1_DATASETS if any(p.dataset == d for p in pages)]
    counts = {d: sum(p.dataset == d for p in pages) for d in [*datasets, SNIPPETS]}
    head = [
        "system",
        "macro F1",
        "macro ROUGE-5",
        *(f"{d} F1 ({counts[d]})" for d in datasets),
        f"snippets ({counts[SNIPPETS]} pages)",
        "ms median",
        "ms p90",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [_row(name, s, datasets) for name, s in results.items()]
    lines += [
        f"| {name} | not run: {why} |" + " |" * (len(head) - 2) for name, why in missing.items()
    ]
    return "\n".join(lines)


def evaluate(data: str, limit: int | None) -> str:
    pages = held_out_pages(data, limit)
    systems, missing = load_systems()
    results = {name: Scores() for name in systems}
    names = list(systems)
    for i, page in enumerate(pages):
        # Rotate the order so that no system always runs first on a page (cold caches).
        k = i % len(names)
        for name in names[k:] + names[:k]:
            run_system(systems[name], page, results[name])
        if i % 200 == 0:
            logger.info("%d/%d pages", i, len(pages))
    for name, s in results.items():
        if s.errors:
            logger.warning("%s raised on %d pages (scored as empty)", name, s.errors)
    return table(results, missing, pages)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--limit", type=int, default=None, help="pages per dataset")
    parser.add_argument("--out", default=None, help="also write the table here (markdown)")
    args = parser.parse_args(argv)
    # Baseline libraries log a warning per odd page; keep only this package's progress.
    logging.basicConfig(level=logging.ERROR, format="%(asctime)s %(message)s")
    for name in ("models", __name__):
        logging.getLogger(name).setLevel(logging.INFO)
    result = evaluate(args.data, args.limit)
    print(result)
    if args.out:
        command = "python -m scrapy_maintext.models.evaluate --data ../shared/data"
        if args.limit is not None:
            command += f" --limit {args.limit}"
        header = (
            f"# Evaluation results\n\nGenerated by `{command} --out {args.out}`.\n\n"
            "Token F1 per page averaged per dataset; macro = mean over datasets. "
            "Snippet accuracy on the trafilatura set. Times in ms per page, same run.\n\n"
        )
        Path(args.out).write_text(header + result + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
