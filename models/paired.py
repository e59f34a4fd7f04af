"""Paired per-page differences between two recipes of a site-fold run, with site-bootstrap
intervals, and WCXB's metric beside our token F1 (``models.folds report``).

Two recipes run on the same fold with the same seed score the same pages, so the difference
of their scores page by page removes the pages' own difficulty (a fold spread of 3 points
hides differences that a paired interval resolves). A page's difference is averaged over the
seeds both recipes ran; a 2007-2013 page, which every fold's model scores, over the folds too.
The interval resamples sites with replacement (every page of a drawn site comes with it, as
often as the site is drawn) and takes the 2.5 and 97.5 percentiles of the statistic: the page
mean of the differences, and the macro over groups (wcxb-dev page types; the four 2007-2013
sets) of the groups' means.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

MODERN = "wcxb-dev"
F1 = 2
#: Bootstrap draws of the interval.
DRAWS = 2000
#: (label, page key) of the two metrics: our token F1, and WCXB's word F1 (``models.wcxb``).
METRICS = (("token F1", None), ("WCXB word F1", "wcxb"))
Runs = dict[str, dict[int, list[dict[str, Any]]]]


def f1_of(page: dict[str, Any], system: str, key: str | None) -> float | None:
    scores = page.get(key) if key else page
    return None if scores is None else float(scores[system][F1])


def page_diffs(
    runs: Runs, a: tuple[str, str], b: tuple[str, str], folds: list[int], key: str | None
) -> dict[str, tuple[str, str, float]]:
    """Per page id: (group, site, mean difference a - b) over the folds and seeds both ran;
    ``a`` and ``b`` are (recipe, system) pairs."""
    diffs: dict[str, list[float]] = defaultdict(list)
    where: dict[str, tuple[str, str]] = {}
    for k in folds:
        base = {d["seed"]: d for d in runs[b[0]][k]}
        for run in runs[a[0]][k]:
            other = base.get(run["seed"])
            if other is None:
                continue
            theirs = {p["id"]: p for p in other["pages"]}
            for page in run["pages"]:
                mine, ref = f1_of(page, a[1], key), f1_of(theirs[page["id"]], b[1], key)
                if mine is None or ref is None:
                    continue
                diffs[page["id"]].append(mine - ref)
                where[page["id"]] = (page["group"], page.get("site", page["id"]))
    return {i: (*where[i], float(np.mean(v))) for i, v in diffs.items()}


def site_bootstrap(
    pages: list[tuple[str, str, float]], draws: int = DRAWS, seed: int = 0
) -> dict[str, tuple[float, float, float]]:
    """(estimate, low, high) of the page mean ("pages") and of the macro over groups
    ("macro") of the differences ``pages`` (group, site, difference)."""
    sites = sorted({s for _, s, _ in pages})
    groups = sorted({g for g, _, _ in pages})
    si = {s: i for i, s in enumerate(sites)}
    gi = {g: i for i, g in enumerate(groups)}
    sums = np.zeros((len(sites), len(groups)))
    counts = np.zeros((len(sites), len(groups)))
    for g, s, d in pages:
        sums[si[s], gi[g]] += d
        counts[si[s], gi[g]] += 1

    def stats(weights: np.ndarray) -> tuple[float, float]:
        total, n = weights @ sums, weights @ counts
        with np.errstate(invalid="ignore", divide="ignore"):
            macro = float(np.nanmean(np.where(n > 0, total / n, np.nan)))
        return float(total.sum() / n.sum()), macro

    rng = np.random.default_rng(seed)
    drawn = np.array(
        [
            stats(np.bincount(rng.integers(0, len(sites), len(sites)), minlength=len(sites)))
            for _ in range(draws)
        ]
    )
    estimate = stats(np.ones(len(sites)))
    out = {}
    for j, name in enumerate(("pages", "macro")):
        low, high = np.percentile(drawn[:, j], [2.5, 97.5])
        out[name] = (estimate[j], float(low), float(high))
    return out


def _cell(value: tuple[float, float, float]) -> str:
    est, low, high = (100 * v for v in value)
    return f"{est:+.1f} ({low:+.1f} to {high:+.1f})"


def paired_lines(runs: Runs, pairs: list[tuple[tuple[str, str], tuple[str, str]]]) -> list[str]:
    """A table of the paired differences (points) for each (a, b) pair of (recipe, system)."""
    folds = sorted(set.intersection(*(set(runs[r]) for r in runs)))
    lines = [
        "",
        f"Paired per-page difference, points, with the 95% site-bootstrap interval ({DRAWS} "
        "draws, sites resampled with replacement):",
        "",
        "| a - b | metric | wcxb-dev page mean | wcxb-dev macro over types | sites / pages "
        "| legacy page mean | legacy macro over sets |",
        "|---|---|---|---|---|---|---|",
    ]
    for a, b in pairs:
        if a[0] not in runs or b[0] not in runs:
            continue
        for label, key in METRICS:
            diffs = page_diffs(runs, a, b, folds, key)
            modern = [v for v in diffs.values() if v[0].startswith(MODERN)]
            legacy = [v for v in diffs.values() if not v[0].startswith(MODERN)]
            if not modern:
                continue
            m = site_bootstrap(modern)
            n_sites = len({s for _, s, _ in modern})
            cells = [_cell(m["pages"]), _cell(m["macro"]), f"{n_sites} / {len(modern)}"]
            if legacy:
                old = site_bootstrap(legacy)
                cells += [_cell(old["pages"]), _cell(old["macro"])]
            else:
                cells += ["-", "-"]
            name = f"{a[0]} {a[1]} - {b[0]} {b[1]}"
            lines.append(f"| {name} | {label} | " + " | ".join(cells) + " |")
    return lines


def wcxb_lines(runs: Runs, systems: list[tuple[str, str, str]]) -> list[str]:
    """WCXB's metric per wcxb-dev page type, macro and page mean: the mean over folds (each
    fold's figure the mean over its seeds), for every (label, recipe, system)."""
    folds = sorted(set.intersection(*(set(runs[r]) for r in runs)))
    per: dict[str, dict[str, list[float]]] = {}
    for label, recipe, system in systems:
        rows: dict[str, list[float]] = defaultdict(list)
        for k in folds:
            fold_rows: dict[str, list[float]] = defaultdict(list)
            for run in runs[recipe][k]:
                groups: dict[str, list[float]] = defaultdict(list)
                for page in run["pages"]:
                    f1 = f1_of(page, system, "wcxb")
                    if f1 is not None:
                        groups[page["group"]].append(f1)
                if not groups:
                    continue
                means = {g: float(np.mean(v)) for g, v in groups.items()}
                means["macro"] = float(np.mean(list(means.values())))
                means["pages"] = float(np.mean([x for v in groups.values() for x in v]))
                for g, mean in means.items():
                    fold_rows[g].append(mean)
            for g, seeds in fold_rows.items():
                rows[g].append(float(np.mean(seeds)))
        per[label] = rows
    if not any(per.values()):
        return []
    names = sorted({g for rows in per.values() for g in rows if g.startswith(MODERN)})
    lines = [
        "",
        "WCXB's metric (word F1 of re.findall(r'\\w+', text.lower()), mean over pages), "
        "wcxb-dev pages, mean over folds (min-max over folds):",
        "",
        "| group | " + " | ".join(label for label, _, _ in systems) + " |",
        "|---|" + "---|" * len(systems),
    ]
    for g in [*names, "macro", "pages"]:
        cells = []
        for label, _, _ in systems:
            folds_of = per[label].get(g, [])
            spread = f"({min(folds_of):.3f}-{max(folds_of):.3f})"
            cells.append(f"{np.mean(folds_of):.3f} {spread}" if folds_of else "-")
        lines.append(f"| {g} | " + " | ".join(cells) + " |")
    return lines


def group_lines(runs: Runs, pairs: list[tuple[tuple[str, str], tuple[str, str]]]) -> list[str]:
    """Per group (wcxb-dev page type, 2007-2013 set), the paired token-F1 difference of each
    pair with its site-bootstrap interval (points)."""
    folds = sorted(set.intersection(*(set(runs[r]) for r in runs)))
    table: dict[str, dict[str, str]] = defaultdict(dict)
    names = []
    for a, b in pairs:
        if a[0] not in runs or b[0] not in runs:
            continue
        name = f"{a[0]} {a[1]} - {b[0]} {b[1]}"
        names.append(name)
        diffs = list(page_diffs(runs, a, b, folds, None).values())
        for group in sorted({g for g, _, _ in diffs}):
            pages = [d for d in diffs if d[0] == group]
            table[group][name] = _cell(site_bootstrap(pages)["pages"])
    if not names:
        return []
    lines = [
        "",
        "Paired token-F1 difference per group (points, 95% site-bootstrap interval):",
        "",
        "| group | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for group in sorted(table, key=lambda g: (not g.startswith(MODERN), g)):
        lines.append(f"| {group} | " + " | ".join(table[group].get(n, "-") for n in names) + " |")
    return lines
