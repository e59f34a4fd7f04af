"""Tables of a site-fold run (``models.folds``): every recipe beside trafilatura, per fold.

With several seeds per fold and recipe, a fold's figure is the mean over its seeds; the
spread shown is over folds, and the seed tables give the spread over seeds.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.models.paired import group_lines, paired_lines, wcxb_lines

MODERN = "wcxb-dev"
#: Index of precision, recall and F1 in a page's (P, R, F1) triple.
P, R, F1 = 0, 1, 2


#: Seed of the runs written before ``folds run --seed`` existed (``models.train.SEED``).
DEFAULT_SEED = 1234
Runs = dict[str, dict[int, list[dict[str, Any]]]]


def _load(out: Path) -> Runs:
    """Per recipe and fold, the runs of every seed (in seed order)."""
    runs: Runs = defaultdict(lambda: defaultdict(list))
    for path in sorted(out.glob("*-fold*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        data.setdefault("seed", DEFAULT_SEED)
        runs[data["recipe"]][data["fold"]].append(data)
    for folds in runs.values():
        for seeds in folds.values():
            seeds.sort(key=lambda d: d["seed"])
    return runs


def _seed_means(seeds: list[dict[str, Any]], system: str, metric: int) -> dict[str, float]:
    """``_fold_means`` of a fold, averaged over its seeds."""
    per_seed = [_fold_means(run, system, metric) for run in seeds]
    return {k: float(np.mean([m[k] for m in per_seed])) for k in per_seed[0]}


def _fold_means(run: dict[str, Any], system: str, metric: int) -> dict[str, float]:
    """Per group (page type, legacy set) mean of ``metric``, plus the wcxb-dev macro over
    types ("macro"), page mean ("pages") and the legacy macro ("legacy")."""
    groups: dict[str, list[float]] = defaultdict(list)
    for page in run["pages"]:
        groups[page["group"]].append(page[system][metric])
    means = {g: float(np.mean(v)) for g, v in groups.items()}
    modern = [g for g in means if g.startswith(MODERN)]
    means["macro"] = float(np.mean([means[g] for g in modern]))
    means["pages"] = float(np.mean([x for g in modern for x in groups[g]]))
    means["legacy"] = float(np.mean([means[g] for g in means if "/" not in g and g in groups]))
    return means


def _cell(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{np.mean(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def report(out: Path) -> str:
    runs = _load(out)
    recipes = sorted(runs)
    folds = sorted(set.intersection(*(set(runs[r]) for r in recipes)))
    any_run = runs[recipes[0]][folds[0]][0]
    seeds = {r: sorted({d["seed"] for k in folds for d in runs[r][k]}) for r in recipes}
    systems = [("trafilatura", recipes[0], "trafilatura")]
    for r in recipes:
        systems += [(f"{r} neural", r, "neural"), (f"{r} auto", r, "auto")]
    rows = sorted({p["group"] for p in any_run["pages"] if p["group"].startswith(MODERN)})
    rows += ["macro", "pages", "legacy"]
    head = " | ".join(name for name, _, _ in systems)
    lines = [
        f"Folds {folds} of {any_run['folds']}; epochs {any_run['epochs']}; legacy share "
        f"{any_run['legacy_percent']}%; seeds {seeds}. Token F1, mean over folds (min-max "
        "over folds; each fold's figure the mean over its seeds).",
        "",
        f"| group | {head} |",
        "|---|" + "---|" * len(systems),
    ]
    for row in rows:
        cells = []
        for _, recipe, system in systems:
            values = [_seed_means(runs[recipe][k], system, F1)[row] for k in folds]
            cells.append(_cell(values))
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    lines += ["", "Fold by fold (wcxb-dev macro over types / page mean):", ""]
    lines += [f"| fold | {head} |", "|---|" + "---|" * len(systems)]
    for k in folds:
        cells = []
        for _, recipe, system in systems:
            m = _seed_means(runs[recipe][k], system, F1)
            cells.append(f"{m['macro']:.3f} / {m['pages']:.3f}")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    lines += ["", "Article pages, precision / recall (mean over folds):", ""]
    lines += [f"| | {head} |", "|---|" + "---|" * len(systems)]
    cells = []
    for _, recipe, system in systems:
        article = f"{MODERN}/article"
        p = np.mean([_seed_means(runs[recipe][k], system, P)[article] for k in folds])
        r = np.mean([_seed_means(runs[recipe][k], system, R)[article] for k in folds])
        cells.append(f"{p:.3f} / {r:.3f}")
    lines.append("| article | " + " | ".join(cells) + " |")
    lines += _seed_lines(runs, recipes, folds)
    lines += wcxb_lines(runs, systems)
    lines += paired_lines(runs, _pairs(recipes))
    lines += group_lines(runs, [p for p in _pairs(recipes) if p[1][1] != "trafilatura"])
    lines += ["", "Snippet accuracy (held-out half), neural output, per fold's model:", ""]
    for r in recipes:
        values = [float(np.mean([d["snippets"] for d in runs[r][k]])) for k in folds]
        lines.append(f"- {r}: " + _cell(values))
    lines.append("")
    for r in recipes:
        secs = [[d["train_seconds"] for d in runs[r][k]] for k in folds]
        lines.append(f"- {r} training seconds per fold (per seed): {secs}")
    return "\n".join(lines)


def _pairs(recipes: list[str]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """Every recipe against v4, a *snip recipe against v4snip too (neural and auto), and
    every recipe's auto against trafilatura on the same pages."""
    pairs = [
        ((r, system), (base, system))
        for r in recipes
        for base in ("v4", "v4snip")
        if r != base and base in recipes and (base == "v4" or r.endswith("snip"))
        for system in ("neural", "auto")
    ]
    return pairs + [((r, "auto"), (r, "trafilatura")) for r in recipes]


def _seed_lines(runs: Runs, recipes: list[str], folds: list[int]) -> list[str]:
    """Per recipe and seed, macro / page mean over the folds; and each recipe's difference
    from v4 per fold and seed (the runs of one fold and seed share their pages)."""
    lines = ["", "Seed by seed (wcxb-dev macro / page mean, mean over folds; neural, auto):", ""]
    for r in recipes:
        by_seed: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for k in folds:
            for d in runs[r][k]:
                by_seed[d["seed"]].append(d)
        for seed, group in sorted(by_seed.items()):
            cells = []
            for system in ("neural", "auto"):
                ms = [_fold_means(d, system, F1) for d in group]
                macro, pages = (float(np.mean([m[key] for m in ms])) for key in ("macro", "pages"))
                cells.append(f"{macro:.3f} / {pages:.3f}")
            lines.append(f"- {r} seed {seed} ({len(group)} folds): " + "; ".join(cells))
    if "v4" not in recipes:
        return lines
    lines += ["", "Difference from v4 (macro / page mean, points), per fold and seed:", ""]
    for r in (r for r in recipes if r != "v4"):
        for system in ("neural", "auto"):
            diffs = []
            for k in folds:
                base = {d["seed"]: _fold_means(d, system, F1) for d in runs["v4"][k]}
                for d in runs[r][k]:
                    if d["seed"] in base:
                        m, b = _fold_means(d, system, F1), base[d["seed"]]
                        diffs.append((m["macro"] - b["macro"], m["pages"] - b["pages"]))
            cells = ", ".join(f"{100 * a:+.1f} / {100 * b:+.1f}" for a, b in diffs)
            mean = np.mean(diffs, axis=0) * 100 if diffs else (np.nan, np.nan)
            lines.append(f"- {r} {system}: {cells}; mean {mean[0]:+.1f} / {mean[1]:+.1f}")
    return lines
