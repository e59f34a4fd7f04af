"""Quick held-out comparison of model versions from the cached examples (no re-parsing).

    python -m scrapy_maintext.models.heldout --data ../shared/data --models v4.1,DIR
    python -m scrapy_maintext.models.heldout --cascade DIR_FIRST,DIR_SECOND [--validation]
        [--set-gate 0.6] [--unseen 3]

Scores the shipped int8 models with their own decoding on the held-out sites' cached blocks
(a cascade by its first model alone; ``--cascade`` scores the two together):
neural alone, auto (trafilatura with the product's defaults on fallback pages), trafilatura
alone and the per-page oracle (better of neural and trafilatura). For choosing a recipe; the
figures of record come from ``models.evaluate``, which runs the whole product path.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scrapy_maintext.models.dataset import Example, is_validation, load_examples, site_fold
from scrapy_maintext.models.metrics import token_f1
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.decision import Decision, decide
from scrapy_maintext.neural.inference import MODELS_DIR

COLUMNS = ("neural", "auto", "trafilatura", "oracle")
#: Page-confidence gates of the cascade table (1.01: the second model on every page).
CASCADE_GATES = (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 1.01)
#: The gate row of the first model alone: trafilatura where it falls back, no second model.
NO_SECOND_MODEL = -1.0


def group_of(ex: Example) -> str:
    return f"wcxb-dev/{ex.page_type}" if ex.dataset == "wcxb-dev" else ex.dataset


def score_page(extractor: NeuralExtractor, ex: Example) -> dict[str, float]:
    decision, neural = decide_cached(extractor, ex)
    traf = token_f1(ex.fallback_tokens, ex.gold_tokens)
    return {
        "neural": neural,
        "auto": traf if decision.fallback else neural,
        "trafilatura": traf,
        "oracle": max(neural, traf),
    }


def _folder(version: str) -> Path:
    """The folder of a shipped version ("v2"), or the model folder a path names."""
    return MODELS_DIR / version if "/" not in version else Path(version)


def load_version(version: str) -> NeuralExtractor:
    """A cascade is scored here by its first model alone; ``cascade`` scores the two together."""
    return NeuralExtractor.load(_folder(version))


def table(version: str, examples: list[Example]) -> str:
    extractor = load_version(version)
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for ex in examples:
        for name, value in score_page(extractor, ex).items():
            scores[group_of(ex)][name].append(value)
    groups = sorted(scores, key=lambda g: (not g.startswith("wcxb"), g))
    modern = [g for g in groups if g.startswith("wcxb")]
    legacy = [g for g in groups if not g.startswith("wcxb")]
    lines = [f"### {version}", "", "| group | pages | " + " | ".join(COLUMNS) + " |"]
    lines.append("|---|---|" + "---|" * len(COLUMNS))
    for g in groups:
        cells = [f"{np.mean(scores[g][c]):.3f}" for c in COLUMNS]
        lines.append(f"| {g} | {len(scores[g]['neural'])} | " + " | ".join(cells) + " |")
    for label, members in (("wcxb-dev macro over types", modern), ("legacy macro", legacy)):
        cells = [f"{np.mean([np.mean(scores[g][c]) for g in members]):.3f}" for c in COLUMNS]
        lines.append(f"| **{label}** | | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def decide_cached(extractor: NeuralExtractor, ex: Example) -> tuple[Decision, float]:
    """The model's decision on a cached page and the token F1 of the blocks it keeps."""
    f = ex.features
    stack = ex.stacks[extractor.reference] if extractor.needs_reference else None
    probs = extractor.model.predict(type(f)(f.dense, f.struct_ids, f.word_ids, stack))
    lengths = np.array([len(" ".join(t)) for t in ex.block_tokens], dtype=np.float64)
    decision = decide(probs, lengths, extractor.params)
    pred = ex.kept_tokens(decision.keep)
    return decision, token_f1(pred, ex.gold_tokens)


def cascade(first: str, second: str, examples: list[Example]) -> str:
    """A cascade: ``first`` (no stacking, no trafilatura run) keeps its output on pages where
    it is confident (page confidence >= gate and no fallback); ``second`` (stacked, so
    trafilatura runs) decides the rest. Per gate: F1 and the share of pages spared trafilatura.
    """
    rows = _rows(first, second, examples)
    lines = ["| gate | wcxb-dev types | product | legacy | all pages | pages without trafilatura |"]
    lines.append("|---|---|---|---|---|---|")
    for gate in CASCADE_GATES:
        score = gate_score(rows, gate)
        cells = [score.modern, score.product, score.legacy, score.pages, score.spared]
        lines.append(f"| {gate} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return "\n".join(lines)


def _rows(first: str, second: str, examples: list[Example]) -> list[CascadeRow]:
    models = [load_version(m) for m in (first, second)]
    rows = []
    for ex in examples:
        (d1, f1), (d2, f2) = (decide_cached(m, ex) for m in models)
        traf = token_f1(ex.fallback_tokens, ex.gold_tokens)
        second_f1 = traf if d2.fallback else f2
        rows.append(
            CascadeRow(ex.site, group_of(ex), d1.confidence, d1.fallback, f1, second_f1, traf)
        )
    return rows


@dataclass(frozen=True)
class CascadeRow:
    site: str
    group: str
    confidence: float
    fallback: bool
    first_f1: float
    second_f1: float
    trafilatura_f1: float


@dataclass(frozen=True)
class GateScore:
    modern: float
    product: float
    legacy: float
    spared: float
    #: Mean over all pages.
    pages: float


def gate_score(rows: list[CascadeRow], gate: float) -> GateScore:
    """The cascade at ``gate``; a negative gate: no second model (trafilatura's text where
    the first model falls back)."""
    scores: dict[str, list[float]] = defaultdict(list)
    spared = 0
    every = []
    for row in rows:
        use_first = row.confidence >= gate and not row.fallback
        spared += use_first
        other = row.second_f1 if gate >= 0 else row.trafilatura_f1
        every.append(row.first_f1 if use_first else other)
        scores[row.group].append(every[-1])
    modern = [np.mean(v) for g, v in scores.items() if g.startswith("wcxb")]
    legacy = [np.mean(v) for g, v in scores.items() if not g.startswith("wcxb")]
    product = np.mean(scores.get("wcxb-dev/product", [np.nan]))
    return GateScore(
        float(np.mean(modern)),
        float(product),
        float(np.mean(legacy)),
        spared / len(rows),
        float(np.mean(every)),
    )


def cascade_folds(first: str, second: str, examples: list[Example], folds: int) -> str:
    """The gate table per site fold of the pages given (pages neither model trained on), and
    the gate chosen by cross-validation: for each fold, the gate with the best wcxb-dev macro
    over the other folds' pages (ties: the gate that spares trafilatura most), scored on the
    fold's own pages."""
    rows = _rows(first, second, examples)
    by_fold = [[r for r in rows if site_fold(r.site, folds) == k] for k in range(folds)]
    lines = [
        f"{len(rows)} pages in {folds} site folds ("
        + ", ".join(str(len(f)) for f in by_fold)
        + ")",
        "",
    ]
    lines.append("| gate | wcxb-dev types, per fold | mean | product | legacy | spared |")
    lines.append("|---|---|---|---|---|---|")
    for gate in (NO_SECOND_MODEL, *CASCADE_GATES):
        per = [gate_score(f, gate) for f in by_fold]
        cells = " / ".join(f"{p.modern:.3f}" for p in per)
        mean = np.mean([p.modern for p in per])
        product = np.nanmean([p.product for p in per])
        legacy = np.mean([p.legacy for p in per])
        spared = np.mean([p.spared for p in per])
        lines.append(
            f"| {gate} | {cells} | {mean:.3f} | {product:.3f} | {legacy:.3f} | {spared:.0%} |"
        )
    lines += ["", "| fold | gate chosen on the other folds | its wcxb-dev types on the fold |"]
    lines.append("|---|---|---|")
    for k in range(folds):
        rest = [r for j, f in enumerate(by_fold) if j != k for r in f]
        gates = (NO_SECOND_MODEL, *CASCADE_GATES)
        best = max(gates, key=lambda g: (round(gate_score(rest, g).modern, 4), -g))
        lines.append(f"| {k} | {best} | {gate_score(by_fold[k], best).modern:.3f} |")
    return "\n".join(lines)


def set_gate(first: str, second: str, gate: float) -> None:
    """Make ``first`` a cascade: its config.json hands pages below ``gate`` to ``second``."""
    path = _folder(first) / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["cascade"] = {"next": Path(second).name, "gate": gate}
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    print(f"wrote cascade {config['cascade']} into {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--models", default="v4.1")
    parser.add_argument("--cascade", default="", help="FIRST,SECOND: gate table (see cascade)")
    parser.add_argument("--validation", action="store_true", help="validation pages instead")
    parser.add_argument(
        "--unseen",
        type=int,
        default=0,
        metavar="FOLDS",
        help="with --cascade: held-out and validation pages together (no model trained on them;"
        " decoding and gates were tuned on the validation sites), the gate table per site fold"
        " and the gate chosen by cross-validation over FOLDS folds",
    )
    parser.add_argument(
        "--keep-hidden", action="store_true", help="blocks of models trained with --keep-hidden"
    )
    parser.add_argument(
        "--set-gate", type=float, default=None, help="write this gate into FIRST's config.json"
    )
    args = parser.parse_args(argv)
    if args.unseen and not args.cascade:
        parser.error("--unseen goes with --cascade FIRST,SECOND")
    names = args.cascade.split(",") if args.cascade else args.models.split(",")
    for name in names:
        # Scored on the blocks it was trained on, or not at all.
        if load_version(name.strip()).keep_hidden != args.keep_hidden:
            parser.error(f"{name.strip()}: --keep-hidden must match how the model was trained")
    examples = [
        e
        for e in load_examples(args.data, keep_hidden=args.keep_hidden)
        if (e.split == "train" and is_validation(e) if args.validation else e.split == "test")
        or (args.unseen and e.split == "train" and is_validation(e))
    ]
    if args.cascade and args.unseen:
        first, second = args.cascade.split(",")
        print(cascade_folds(first.strip(), second.strip(), examples, args.unseen))
        return
    if args.cascade:
        first, second = args.cascade.split(",")
        print(cascade(first.strip(), second.strip(), examples))
        if args.set_gate is not None:
            set_gate(first.strip(), second.strip(), args.set_gate)
        return
    for version in args.models.split(","):
        print(table(version.strip(), examples) + "\n")


if __name__ == "__main__":
    main()
