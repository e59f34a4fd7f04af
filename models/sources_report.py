"""Tables of ``models.sources`` runs: every source, every system, paired intervals.

A page scored by several runs of one recipe (an evaluation-only page, which every fold's model
scores) counts once, with its scores averaged over those runs. Paired differences are taken
page by page and their 95% interval comes from drawing whole registered domains (publishers,
sites) with replacement (``interval``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.models.dataset import registered_domain

#: Columns of a page record's system entry: token P, R, F1, WCXB's word F1, then the text's
#: length in characters (runs before issue 39 lack it).
P, R, F1, WCXB, CHARS = 0, 1, 2, 3, 4
WCXB_TYPES = ("article", "service", "forum", "listing", "documentation", "collection", "product")
SOURCES = ("fundus-dev", "wcxb-dev", *(f"wcxb-dev/{t}" for t in WCXB_TYPES), "readability",
           "cleaneval", "dragnet", "l3s-gn1")  # fmt: skip
#: A page is empty for a system whose text is empty where trafilatura's holds this many
#: characters; a system collapses on a page where its F1 is this far below the other's.
EMPTY_OTHER_CHARS = 200
COLLAPSE = 0.5
LEGACY = ("cleaneval", "dragnet", "l3s-gn1", "readability")
#: Systems of the shipped models and trafilatura, as every run scores them.
BASELINES = (
    "trafilatura",
    "rs-trafilatura",
    "readability-lxml",
    "v7:auto",
    "v6:auto",
    "v5:auto-raw",
    "v4.1:auto-raw",
)
#: Other extractors, whose empty pages and collapses the failure table counts too.
PEERS = ("rs-trafilatura", "readability-lxml")
IN_SAMPLE = (
    "rs-trafilatura on wcxb-dev is in-sample: it comes from WCXB's author, its per-type "
    "profiles were most likely tuned on these pages, and their gold was drafted from its "
    "output (a ceiling to approach, not a fair comparison); the other sources are fair."
)
Pages = dict[str, dict[str, Any]]

#: Draws of whole registered domains behind every interval.
BOOTSTRAP = 2000


def interval(diffs: np.ndarray, domains: list[str], seed: int = 0) -> str:
    """ "mean [low, high]" in points: the page mean of ``diffs`` and its 95% interval when
    whole registered domains (``domains``, one per page) are drawn with replacement."""
    names = sorted(set(domains))
    index = {d: i for i, d in enumerate(names)}
    at = np.array([index[d] for d in domains])
    sums = np.bincount(at, weights=diffs, minlength=len(names))
    counts = np.bincount(at, minlength=len(names)).astype(np.float64)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(names), size=(BOOTSTRAP, len(names)))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5]) * 100
    return f"{sums.sum() / counts.sum() * 100:+.1f} [{lo:+.1f}, {hi:+.1f}]"


def load(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text("utf-8")) for p in sorted(out.glob("*.json"))]


def merged(runs: list[dict[str, Any]]) -> dict[str, Pages]:
    """Per run kind ("<recipe>" for fold runs, "<recipe> loso-<set>"), the pages with their
    scores averaged over the runs that scored them."""
    gathered: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        kind = run["recipe"] + (f" loso-{run['without']}" if run["without"] else "")
        for page in run["pages"]:
            gathered[kind][page["id"]].append(page)
    out: dict[str, Pages] = {}
    for kind, pages in gathered.items():
        out[kind] = {}
        for pid, records in pages.items():
            first = dict(records[0])
            for key, value in first.items():
                if isinstance(value, list) and all(isinstance(v, int | float) for v in value):
                    first[key] = list(np.mean([r[key] for r in records], axis=0))
            out[kind][pid] = first
    return out


def source_of(page: dict[str, Any], source: str) -> bool:
    if source.startswith("wcxb-dev/"):
        return page["set"] == "wcxb-dev" and page["type"] == source.split("/", 1)[1]
    return bool(page["set"] == source)


def recipe_of(kind: str) -> str:
    """The system a run kind scores as ours: "news" of "news loso-fundus-dev", "v6" of
    "frozen v6"."""
    words = kind.split()
    return words[1] if words[0] == "frozen" else words[0]


def systems_of(kind: str, pages: Pages) -> list[tuple[str, str]]:
    """(label, key) of the systems to show for one run kind: the recipe's, then the rest."""
    recipe = recipe_of(kind)
    ours = [(f"{recipe} {s}", s) for s in ("auto", "neural", "auto-raw")]
    keys = next(iter(pages.values())).keys()
    others = [(k, k) for k in (*BASELINES, "v5:auto", "v4.1:auto") if k in keys]
    return ours + others


def mean_table(kind: str, pages: Pages) -> list[str]:
    systems = systems_of(kind, pages)
    lines = [f"### {kind}: mean per page, token F1 (P / R) and WCXB's word F1", ""]
    lines.append("| source | pages | " + " | ".join(label for label, _ in systems) + " |")
    lines.append("|---|---|" + "---|" * len(systems))
    for source in SOURCES:
        rows = [p for p in pages.values() if source_of(p, source)]
        if not rows:
            continue
        cells = []
        for _, key in systems:
            m = np.mean([p[key] for p in rows], axis=0)
            cells.append(f"{m[F1]:.3f} ({m[P]:.2f}/{m[R]:.2f}) w{m[WCXB]:.3f}")
        lines.append(f"| {source} | {len(rows)} | " + " | ".join(cells) + " |")
    legacy = [
        np.mean([p[key][F1] for p in pages.values() if p["set"] == s])
        for _, key in systems
        for s in LEGACY
        if any(p["set"] == s for p in pages.values())
    ]
    if legacy and len(legacy) % len(systems) == 0:
        per = np.array(legacy).reshape(len(systems), -1).mean(axis=1)
        lines.append("| 2007-2013 + Readability macro | | " + " | ".join(f"{v:.3f}" for v in per))
    return lines


def paired_table(kind: str, pages: Pages, against: list[tuple[str, Pages, str]]) -> list[str]:
    """Our auto minus each baseline, per source: token F1 and WCXB's metric, points."""
    recipe = recipe_of(kind)
    lines = [f"### {kind}: {recipe} auto minus ..., points [95% interval over domains]", ""]
    lines.append("| source | against | token F1 | WCXB word F1 |")
    lines.append("|---|---|---|---|")
    for source in SOURCES:
        ids = [i for i, p in pages.items() if source_of(p, source)]
        if not ids:
            continue
        for label, other, key in against:
            both = [i for i in ids if i in other]
            if not both:
                continue
            domains = [registered_domain(pages[i]["site"]) for i in both]
            cells = []
            for m in (F1, WCXB):
                diffs = np.array([pages[i]["auto"][m] - other[i][key][m] for i in both])
                cells.append(interval(diffs, domains))
            lines.append(f"| {source} | {label} | " + " | ".join(cells) + " |")
    return lines


def failure_table(kind: str, pages: Pages, others: list[tuple[str, Pages, str]]) -> list[str]:
    """Per source and system: pages empty where trafilatura keeps ``EMPTY_OTHER_CHARS``
    characters, and collapses (token F1 ``COLLAPSE`` below trafilatura's / trafilatura's
    below the system's)."""
    recipe = recipe_of(kind)
    lines = [
        f"### {kind}: empty pages (trafilatura {EMPTY_OTHER_CHARS}+ characters) and "
        f"collapses (token F1 {COLLAPSE} below trafilatura / trafilatura below it)",
        "",
        "| source | system | pages | empty | collapses | trafilatura collapses against it |",
        "|---|---|---|---|---|---|",
    ]
    systems = [(f"{recipe} auto", pages, "auto"), *others]
    for source in SOURCES:
        ids = [i for i, p in pages.items() if source_of(p, source)]
        for label, other, key in systems:
            both = [i for i in ids if i in other and key in other[i]]
            if not both or len(other[both[0]][key]) <= CHARS:
                continue
            pairs = [(other[i][key], pages[i]["trafilatura"]) for i in both]
            empty = sum(m[CHARS] == 0 and t[CHARS] >= EMPTY_OTHER_CHARS for m, t in pairs)
            down = sum(m[F1] <= t[F1] - COLLAPSE for m, t in pairs)
            up = sum(t[F1] <= m[F1] - COLLAPSE for m, t in pairs)
            lines.append(f"| {source} | {label} | {len(both)} | {empty} | {down} | {up} |")
    return lines


def report(out: Path) -> str:
    runs = load(out)
    kinds = merged(runs)
    lines = [f"{len(runs)} runs in {out}", ""]
    if any("rs-trafilatura" in next(iter(p.values()), {}) for p in kinds.values()):
        lines += [IN_SAMPLE, ""]
    for kind in sorted(kinds):
        pages = kinds[kind]
        lines += [*mean_table(kind, pages), ""]
        keys = next(iter(pages.values())).keys()
        against = [(b, pages, b) for b in (*BASELINES, "v5:auto") if b in keys]
        for other in sorted(kinds):
            same_runs = other.split()[1:] == kind.split()[1:]
            if other != kind and same_runs:
                against.append((f"{other} auto", kinds[other], "auto"))
        lines += [*paired_table(kind, pages, against), ""]
        failing = [(b, pages, b) for b in ("v7:auto", "v6:auto", *PEERS) if b in keys]
        failing += [(label, other, key) for label, other, key in against if label.endswith(" auto")]
        lines += [*failure_table(kind, pages, failing), ""]
    return "\n".join(lines)
