"""Tables of a site-fold run (``models.folds``): every recipe beside trafilatura, per fold."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

MODERN = "wcxb-dev"
#: Index of precision, recall and F1 in a page's (P, R, F1) triple.
P, R, F1 = 0, 1, 2


def _load(out: Path) -> dict[str, dict[int, dict[str, Any]]]:
    runs: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for path in sorted(out.glob("*-fold*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        runs[data["recipe"]][data["fold"]] = data
    return runs


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
    any_run = runs[recipes[0]][folds[0]]
    systems = [("trafilatura", recipes[0], "trafilatura")]
    for r in recipes:
        systems += [(f"{r} neural", r, "neural"), (f"{r} auto", r, "auto")]
    rows = sorted({p["group"] for p in any_run["pages"] if p["group"].startswith(MODERN)})
    rows += ["macro", "pages", "legacy"]
    head = " | ".join(name for name, _, _ in systems)
    lines = [
        f"Folds {folds} of {any_run['folds']}; epochs {any_run['epochs']}; legacy share "
        f"{any_run['legacy_percent']}%. Token F1, mean over folds (min-max over folds).",
        "",
        f"| group | {head} |",
        "|---|" + "---|" * len(systems),
    ]
    for row in rows:
        cells = []
        for _, recipe, system in systems:
            values = [_fold_means(runs[recipe][k], system, F1)[row] for k in folds]
            cells.append(_cell(values))
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    lines += ["", "Fold by fold (wcxb-dev macro over types / page mean):", ""]
    lines += [f"| fold | {head} |", "|---|" + "---|" * len(systems)]
    for k in folds:
        cells = []
        for _, recipe, system in systems:
            m = _fold_means(runs[recipe][k], system, F1)
            cells.append(f"{m['macro']:.3f} / {m['pages']:.3f}")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    lines += ["", "Article pages, precision / recall (mean over folds):", ""]
    lines += [f"| | {head} |", "|---|" + "---|" * len(systems)]
    cells = []
    for _, recipe, system in systems:
        article = f"{MODERN}/article"
        p = np.mean([_fold_means(runs[recipe][k], system, P)[article] for k in folds])
        r = np.mean([_fold_means(runs[recipe][k], system, R)[article] for k in folds])
        cells.append(f"{p:.3f} / {r:.3f}")
    lines.append("| article | " + " | ".join(cells) + " |")
    lines += ["", "Snippet accuracy (held-out half), neural output, per fold's model:", ""]
    for r in recipes:
        lines.append(f"- {r}: " + _cell([runs[r][k]["snippets"] for k in folds]))
    lines.append("")
    for r in recipes:
        secs = [runs[r][k]["train_seconds"] for k in folds]
        lines.append(f"- {r} training seconds per fold: {secs}")
    return "\n".join(lines)
