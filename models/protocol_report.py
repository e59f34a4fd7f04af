"""Tables of ``models.protocol``: fold means, page types, paired intervals, collapses."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np
from scrapy_maintext.models.metrics import token_f1, tokens

if TYPE_CHECKING:
    from scrapy_maintext.models.protocol import Choices, PageData
    from scrapy_maintext.neural.decision import DecodeParams

SYSTEMS = ("trafilatura", "v4.1", "v4 (cascade)", "neural+groups", "arbiter", "oracle")
BASELINES = ("v4.1", "v4 (cascade)", "trafilatura")
OURS = ("neural+groups", "arbiter")
#: WCXB's README, dev split, its own metric (all dev pages; not the pages here).
PUBLISHED = {"rs-trafilatura": 0.859, "MinerU-HTML": 0.827, "trafilatura": 0.791}
BOOTSTRAP = 2000
#: A collapse: under this share of the words trafilatura keeps, where trafilatura scores at
#: least ``COLLAPSE_F1`` (WCXB's metric).
COLLAPSE_WORDS = 0.4
COLLAPSE_F1 = 0.5


def _mean_over_folds(rows: list[dict[str, Any]], name: str, m: int) -> tuple[float, float, float]:
    folds = sorted({r["page"].fold for r in rows})
    per = [np.mean([r[name][m] for r in rows if r["page"].fold == k]) for k in folds]
    return float(np.mean(per)), float(min(per)), float(max(per))


def _macro(rows: list[dict[str, Any]], name: str, m: int) -> float:
    by: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        by[r["page"].group].append(r[name][m])
    return float(np.mean([np.mean(v) for v in by.values()]))


def paired(rows: list[dict[str, Any]], a: str, b: str, m: int, seed: int = 0) -> str:
    """Mean per-page difference a - b (points) and its 95% bootstrap interval over domains."""
    diffs = np.array([r[a][m] - r[b][m] for r in rows])
    return interval(diffs, [r["page"].domain for r in rows], seed)


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


def collapsed(row: dict[str, Any], name: str) -> bool:
    traf_words, traf_f1 = row["trafilatura"][2], row["trafilatura"][1]
    return traf_f1 >= COLLAPSE_F1 and row[name][2] < COLLAPSE_WORDS * traf_words


def report(rows: list[dict[str, Any]]) -> str:
    folds = sorted({r["page"].fold for r in rows})
    n_per = [sum(r["page"].fold == k for r in rows) for k in folds]
    domains = len({r["page"].domain for r in rows})
    out = [
        f"{len(rows)} wcxb-dev pages of {domains} registered domains in {len(folds)} folds "
        f"({', '.join(map(str, n_per))} pages)",
        "",
        "| system | token F1, mean over folds (min-max) | macro over types | WCXB metric,"
        " mean over folds (min-max) | WCXB macro |",
        "|---|---|---|---|---|",
    ]
    for name in SYSTEMS:
        t, w = _mean_over_folds(rows, name, 0), _mean_over_folds(rows, name, 1)
        out.append(
            f"| {name} | {t[0]:.3f} ({t[1]:.3f}-{t[2]:.3f}) | {_macro(rows, name, 0):.3f} | "
            f"{w[0]:.3f} ({w[1]:.3f}-{w[2]:.3f}) | {_macro(rows, name, 1):.3f} |"
        )
    out.append("")
    out.append(
        "WCXB's published dev table (its metric, all 1,356 dev pages, not these): "
        + ", ".join(f"{k} {v:.3f}" for k, v in PUBLISHED.items())
    )
    out += ["", "Paired per-page difference, points, [95% bootstrap over domains]:", ""]
    out.append("| ours | against | token F1 | WCXB metric |")
    out.append("|---|---|---|---|")
    for ours in OURS:
        for base in BASELINES:
            cells = [paired(rows, ours, base, m) for m in (0, 1)]
            out.append(f"| {ours} | {base} | " + " | ".join(cells) + " |")
    types = sorted({r["page"].group for r in rows})
    out += ["", "Per page type, WCXB metric (pages of all folds, each scored out of fold):", ""]
    out.append("| type | pages | " + " | ".join(SYSTEMS) + " |")
    out.append("|---|---|" + "---|" * len(SYSTEMS))
    for t in types:
        sel = [r for r in rows if r["page"].group == t]
        cells = [f"{np.mean([r[s][1] for r in sel]):.3f}" for s in SYSTEMS]
        out.append(f"| {t} | {len(sel)} | " + " | ".join(cells) + " |")
    out += ["", "Collapses (under 40% of trafilatura's words where its WCXB F1 >= 0.5):", ""]
    names = SYSTEMS[1:-1]
    out.append("| type | " + " | ".join(names) + " |")
    out.append("|---|" + "---|" * len(names))
    for t in [*types, "all"]:
        sel = [r for r in rows if t in ("all", r["page"].group)]
        counts = [str(sum(collapsed(r, s) for r in sel)) for s in names]
        out.append(f"| {t} | " + " | ".join(counts) + " |")
    out += ["", oracle_line(rows)]
    return "\n".join(out)


def oracle_line(rows: list[dict[str, Any]]) -> str:
    parts = []
    for m, label in ((0, "token F1"), (1, "WCXB metric")):
        neural = np.mean([r["neural+groups"][m] for r in rows])
        arb = np.mean([r["arbiter"][m] for r in rows])
        oracle = np.mean([r["oracle"][m] for r in rows])
        share = (arb - neural) / (oracle - neural) if oracle > neural else float("nan")
        parts.append(
            f"{label}: neural+groups {neural:.3f}, arbiter {arb:.3f}, oracle {oracle:.3f}: "
            f"{share:.0%} of the gap recovered"
        )
    ran = np.mean([r["ran"] for r in rows])
    return "; ".join(parts) + f". trafilatura ran on {ran:.0%} of the pages (fallback included)."


def legacy_table(pages: list[PageData], choices: Choices, params: DecodeParams) -> str:
    from scrapy_maintext.models.protocol import apply

    by: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for page in pages:
        neural, arbiter, _ = apply(page, choices, params)
        for name, text in (
            ("trafilatura", page.rec["trafilatura"]),
            ("v4.1", page.rec["v4.1"]),
            ("v4 (cascade)", page.rec["v4"]),
            ("neural+groups", neural),
            ("arbiter", arbiter),
        ):
            by[page.rec["dataset"]][name].append(token_f1(tokens(text), page.gold_tokens))
    names = ("trafilatura", "v4.1", "v4 (cascade)", "neural+groups", "arbiter")
    out = [
        "",
        f"2007-2013 sets, held-out and validation sites ({len(pages)} pages), token F1; "
        "choices made on all wcxb-dev folds:",
        "",
        "| set | pages | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for d in sorted(by):
        cells = [f"{np.mean(by[d][n]):.3f}" for n in names]
        out.append(f"| {d} | {len(by[d]['v4.1'])} | " + " | ".join(cells) + " |")
    cells = [f"{np.mean([np.mean(by[d][n]) for d in by]):.3f}" for n in names]
    out.append("| **macro** | | " + " | ".join(cells) + " |")
    return "\n".join(out)
