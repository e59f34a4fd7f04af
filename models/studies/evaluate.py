"""Compare the neural extractor with other main-text extractors on held-out pages.

    python -m scrapy_maintext.models.studies.evaluate --data ../shared/data [--limit N] [--out FILE]
        [--systems "neural v2,auto v2,trafilatura (default)"]

Held-out pages only (see ``models.dataset``): dragnet's official test split, about 30% of the
sites of cleaneval, l3s-gn1, readability and wcxb-dev, and half of the sites of trafilatura's
snippet set (the other half may label training blocks, ``models.snippets``).
Every system runs on every page in the same process, in an order rotated from page to page,
so the per-page times are comparable.

Two tables: the modern pages, on which model decisions are made (wcxb-dev by page type, with
the macro over page types; trafilatura's snippet set), and the 2007-2013 sets, which are
regression checks. Token precision, recall and F1 are per page, then averaged.
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
from scrapy_maintext.models.dataset import MODERN, SNIPPETS, Page, group_of, held_out_pages
from scrapy_maintext.models.metrics import prf, rouge_n, snippet_score, tokens
from scrapy_maintext.models.systems import FACTORIES, System

logger = logging.getLogger(__name__)

LEGACY = ("cleaneval", "dragnet", "l3s-gn1", "readability")
#: wcxb-dev page types, in the order of the table.
PAGE_TYPES = ("article", "service", "forum", "listing", "documentation", "collection", "product")
METRICS = ("p", "r", "f1", "rouge")


@dataclass
class Scores:
    #: group ("cleaneval", "wcxb-dev/forum", ...) -> metric -> per-page values.
    pages: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    snippets: list[int] = field(default_factory=lambda: [0, 0])
    ms: list[float] = field(default_factory=list)
    errors: int = 0

    def mean(self, group: str, metric: str) -> float:
        values = self.pages[group][metric]
        return float(np.mean(values)) if values else float("nan")

    def macro(self, groups: list[str], metric: str) -> float:
        values = [self.mean(g, metric) for g in groups if self.pages[g][metric]]
        return float(np.mean(values)) if values else float("nan")


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
    group = scores.pages[group_of(page)]
    for name, value in zip(("p", "r", "f1"), prf(pred, gold), strict=True):
        group[name].append(value)
    group["rouge"].append(rouge_n(pred, gold))


def load_systems(wanted: list[str] | None) -> tuple[dict[str, System], dict[str, str]]:
    systems, missing = {}, {}
    for name, factory in FACTORIES.items():
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        try:
            systems[name] = factory()
        except Exception as exc:  # report the row as unavailable
            missing[name] = f"{type(exc).__name__}: {exc}"
    return systems, missing


def _f(value: float) -> str:
    return f"{value:.3f}"


def _times(s: Scores) -> list[str]:
    ms = sorted(s.ms)
    return [f"{statistics.median(ms):.1f}", f"{ms[int(0.9 * (len(ms) - 1))]:.1f}"]


def modern_table(results: dict[str, Scores], counts: dict[str, int]) -> str:
    types = [t for t in PAGE_TYPES if counts.get(f"{MODERN}/{t}")]
    groups = [f"{MODERN}/{t}" for t in types]
    head = [
        "system",
        f"{MODERN} macro F1 over types",
        "P",
        "R",
        "ROUGE-5",
        *(f"{t} ({counts[g]})" for t, g in zip(types, groups, strict=True)),
        f"snippets ({counts.get(SNIPPETS, 0)} pages)",
        "ms median",
        "ms p90",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in results.items():
        snip = s.snippets[0] / s.snippets[1] if s.snippets[1] else float("nan")
        cells = [f"**{_f(s.macro(groups, 'f1'))}**"]
        cells += [_f(s.macro(groups, m)) for m in ("p", "r", "rouge")]
        cells += [_f(s.mean(g, "f1")) for g in groups]
        cells += [_f(snip), *_times(s)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def legacy_table(results: dict[str, Scores], counts: dict[str, int]) -> str:
    sets = [d for d in LEGACY if counts.get(d)]
    head = ["system", "macro F1", "P", "R", "ROUGE-5", *(f"{d} ({counts[d]})" for d in sets)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in results.items():
        cells = [f"**{_f(s.macro(sets, 'f1'))}**"]
        cells += [_f(s.macro(sets, m)) for m in ("p", "r", "rouge")]
        cells += [_f(s.mean(d, "f1")) for d in sets]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(results: dict[str, Scores], missing: dict[str, str], pages: list[Page]) -> str:
    counts: dict[str, int] = defaultdict(int)
    for page in pages:
        counts[group_of(page)] += 1
    parts = [
        "## Modern pages (decisions are made here)\n",
        modern_table(results, counts),
        "\n## 2007-2013 sets (regression checks)\n",
        legacy_table(results, counts),
    ]
    if missing:
        parts.append("\nNot run: " + "; ".join(f"{n} ({why})" for n, why in missing.items()))
    return "\n".join(parts)


def evaluate(data: str, limit: int | None, wanted: list[str] | None = None) -> str:
    pages = held_out_pages(data, limit)
    systems, missing = load_systems(wanted)
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
    return report(results, missing, pages)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--limit", type=int, default=None, help="pages per dataset")
    parser.add_argument("--out", default=None, help="also write the tables here (markdown)")
    parser.add_argument("--systems", default="", help="comma-separated row name prefixes")
    args = parser.parse_args(argv)
    # Baseline libraries log a warning per odd page; keep only this package's progress.
    logging.basicConfig(level=logging.ERROR, format="%(asctime)s %(message)s")
    for name in ("models", __name__):
        logging.getLogger(name).setLevel(logging.INFO)
    wanted = [w.strip() for w in args.systems.split(",") if w.strip()]
    result = evaluate(args.data, args.limit, wanted)
    print(result)
    if args.out:
        command = "python -m scrapy_maintext.models.studies.evaluate --data ../shared/data"
        if args.limit is not None:
            command += f" --limit {args.limit}"
        if wanted:
            command += f' --systems "{args.systems}"'
        header = (
            f"# Evaluation results\n\nGenerated by `{command} --out {args.out}`.\n\n"
            "Held-out sites only. Token precision, recall and F1 per page, averaged per page "
            "type (wcxb-dev) or per dataset; macro = mean over page types or datasets. "
            "Snippet accuracy on the held-out half of the trafilatura set's sites. Times in "
            "ms per page, same run, all pages.\n\n"
        )
        Path(args.out).write_text(header + result + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
