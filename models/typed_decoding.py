"""Decoding per page type (issue 45): the block model's threshold and smoothing, and whether
repeated structures are kept whole (``neural.groups``), chosen per predicted page type inside
the folds, from the block probabilities the fold runs saved (``models.sources run``): no
training again.

    python -m scrapy_maintext.models.typed_decoding choose --data ../shared/data --out DIR \\
        --base news --page-types PT/page-types.json --as typed [--groups]
    python -m scrapy_maintext.models.sources rescore --data ../shared/data --out DIR \\
        --base typed --as typed-routed ...    # the convention, the gate, the routing

For fold k, each predicted type's decoding is the candidate with the best mean token F1 on the
wcxb-dev and fundus-dev pages of the other folds predicted that type (each page decoded from
its own fold's model: out of fold), when it beats the run's own decoding there by
``MIN_GAIN``; otherwise, and for a type with fewer than ``MIN_PAGES`` such pages, the run's
decoding stays. Candidates move the run's tuned threshold by a step (so that a choice carries
over to a model whose own threshold differs: the shipped one), set the smoothing margin and,
with ``--groups``, keep repeated structures whole. Fold k's pages and its evaluation-only
pages are decoded with fold k's choice and written as runs of recipe NAME, which ``sources
rescore`` and ``report`` read as any other; the choice over every fold's pages is printed.

Result (issue 45, ``models/CHANGELOG.md``): no variant passed, nothing shipped; the run-time
half (a model folder's ``"by_type"`` decodings, the engines passing the predicted type, the
goldens pinning them) is in git at 54d82ac.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import re
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.models.dataset import Example
from scrapy_maintext.models.sources import FOLDED, convention_examples, load_probs
from scrapy_maintext.models.tune import block_lengths
from scrapy_maintext.neural.decision import DecodeParams, decide
from scrapy_maintext.neural.groups import GroupParams, keep_groups

logger = logging.getLogger(__name__)

DELTAS = [round(-0.2 + 0.05 * i, 2) for i in range(9)]
MARGINS = [0.0, 0.1, 0.2]
GROUPS = [
    GroupParams(min_rows, share, page)
    for min_rows, share, page in itertools.product((3, 6), (0.3, 0.6), (0.2,))
]
#: Fewest out-of-fold pages of a predicted type for it to get a decoding of its own.
MIN_PAGES = 20
#: A type's own decoding must beat the run's by this much (mean token F1) on those pages.
MIN_GAIN = 0.005


@dataclass(frozen=True)
class Candidate:
    #: Added to the run's tuned threshold.
    delta: float
    smooth_margin: float
    groups: GroupParams | None = None

    def params(self, base: DecodeParams) -> DecodeParams:
        threshold = min(max(base.threshold + self.delta, 0.05), 0.95)
        return DecodeParams(threshold, self.smooth_margin, base.min_confidence, base.min_chars)


def candidates(groups: bool) -> list[Candidate]:
    found = [Candidate(d, m) for d, m in itertools.product(DELTAS, MARGINS)]
    if groups:
        found += [Candidate(d, m, g) for d, m, g in itertools.product(DELTAS, MARGINS, GROUPS)]
    return found


class BagScorer:
    """Token F1 of any kept set of one page's blocks (the same bags as ``metrics.token_f1``),
    from the page's token ids end to end: linear in the page's tokens per set scored."""

    def __init__(self, ex: Example) -> None:
        vocab: dict[str, int] = {}
        rows = [[vocab.setdefault(t, len(vocab)) for t in toks] for toks in ex.block_tokens]
        gold = [vocab.setdefault(t, len(vocab)) for t in ex.gold_tokens]
        self.size = len(vocab)
        self.flat = np.array([i for row in rows for i in row], dtype=np.int64)
        self.per_block = np.array([len(row) for row in rows], dtype=np.int64)
        self.gold = np.bincount(np.array(gold, dtype=np.int64), minlength=self.size)
        self.n_gold = len(gold)

    def f1(self, keep: np.ndarray) -> float:
        kept = self.flat[np.repeat(keep.astype(bool), self.per_block)]
        if not len(kept) or not self.n_gold:
            return 0.0
        pred = np.bincount(kept, minlength=self.size)
        overlap = float(np.minimum(pred, self.gold).sum())
        if overlap == 0:
            return 0.0
        p, r = overlap / len(kept), overlap / self.n_gold
        return 2 * p * r / (p + r)


def keep_of(
    probs: np.ndarray, lengths: np.ndarray, signatures: list[str] | None, params: DecodeParams,
    groups: GroupParams | None,
) -> tuple[np.ndarray, bool]:  # fmt: skip
    decision = decide(probs, lengths, params)
    keep = decision.keep
    if groups is not None and signatures is not None and len(signatures) == len(keep):
        keep = keep_groups(signatures, lengths, keep, groups)
    return keep, decision.fallback


def base_params(run: dict[str, Any]) -> DecodeParams:
    d = run["decoding"]
    return DecodeParams(d["threshold"], d["smooth_margin"], d["min_confidence"], d["min_chars"])


def type_of(types: dict[str, list[Any]], page_id: str, min_probability: float) -> str:
    """The page's predicted type where its probability reaches ``min_probability``, else ""
    (decoded as the folder's default)."""
    name, probability = types.get(page_id, ["", 0.0])
    return str(name) if float(probability) >= min_probability else ""


def score_table(
    runs: list[tuple[Path, dict[str, Any]]],
    examples: dict[str, Example],
    types: dict[str, list[Any]],
    min_probability: float,
    found: list[Candidate],
    signatures: dict[str, list[str]],
) -> dict[str, tuple[int, str, np.ndarray]]:
    """Per out-of-fold page of the folded sets: (its fold, its predicted type, its token F1
    under every candidate)."""
    table = {}
    for path, run in runs:
        probs = load_probs(path.parent / "probs" / path.with_suffix(".npz").name)
        base = base_params(run)
        for page in run["pages"]:
            ex = examples[page["id"]]
            if ex.dataset not in FOLDED:
                continue
            scorer, lengths = BagScorer(ex), block_lengths(ex)
            sig = signatures.get(ex.id)
            row = [
                scorer.f1(keep_of(probs[ex.id], lengths, sig, c.params(base), c.groups)[0])
                for c in found
            ]
            table[ex.id] = (int(run["fold"]), type_of(types, ex.id, min_probability), np.array(row))
    return table


def choose(
    table: dict[str, tuple[int, str, np.ndarray]],
    found: list[Any],
    fold: int | None,
    group_types: frozenset[str] | None = None,
    types: frozenset[str] | None = None,
    default: int | None = None,
) -> dict[str, Any]:
    """Per predicted type, the candidate chosen on the pages outside ``fold`` (None: all);
    candidates that keep groups whole only for ``group_types`` (None: every type);
    ``default``: the index of the run's own decoding among ``found``."""
    if default is None:
        default = found.index(Candidate(0.0, 0.2)) if Candidate(0.0, 0.2) in found else 0
    by_type: dict[str, list[np.ndarray]] = defaultdict(list)
    for f, name, row in table.values():
        if f != fold:
            by_type[name].append(row)
    chosen = {}
    for name, rows in sorted(by_type.items()):
        if not name or len(rows) < MIN_PAGES or (types is not None and name not in types):
            continue
        means = np.mean(rows, axis=0)
        if group_types is not None and name not in group_types:
            # Groups cost a pass over every block's element path: only where they pay.
            means = np.where([c.groups is None for c in found], means, -1.0)
        best = int(np.argmax(means))
        if means[best] >= means[default] + MIN_GAIN:
            chosen[name] = found[best]
            logger.info("fold %s %s (%d pages): %s %.4f over %.4f", fold, name, len(rows),
                        found[best], means[best], means[default])  # fmt: skip
    return chosen


def page_signatures(data: str, ids: set[str], cache: Path) -> dict[str, list[str]]:
    """The path signatures of the blocks of every page of ``ids`` (segmented again: the
    example cache keeps no element paths), cached in ``cache``."""
    known: dict[str, list[str]] = {}
    if cache.exists():
        known = json.loads(cache.read_text("utf-8"))
    missing = ids - set(known)
    if not missing:
        return known
    from lxml import html as lxml_html
    from scrapy_maintext.models.dataset import DATASETS, iter_pages
    from scrapy_maintext.neural.groups import path_signatures
    from scrapy_maintext.neural.segment import segment

    found = dict(known)
    for page in iter_pages(data, tuple(d for d in DATASETS if d != "trafilatura")):
        if page.id in missing:
            try:  # as ``dataset.build_example`` parses it
                tree = lxml_html.fromstring(page.html)
            except Exception:
                continue
            found[page.id] = path_signatures(segment(tree, False))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(found), encoding="utf-8")
    return found


def write_runs(
    runs: list[tuple[Path, dict[str, Any]]],
    examples: dict[str, Example],
    types: dict[str, list[Any]],
    choices: dict[int, dict[str, Candidate]],
    signatures: dict[str, list[str]],
    name: str,
    base: str,
    min_probability: float,
) -> None:
    for path, run in runs:
        fold = int(run["fold"])
        probs = load_probs(path.parent / "probs" / path.with_suffix(".npz").name)
        params = base_params(run)
        for page in run["pages"]:
            ex = examples[page["id"]]
            pick = choices[fold].get(type_of(types, ex.id, min_probability))
            if pick is None:
                continue
            sig = signatures.get(ex.id)
            lengths = block_lengths(ex)
            keep, fallback = keep_of(probs[ex.id], lengths, sig, pick.params(params), pick.groups)
            page["decisions"][""] = [[int(i) for i in np.flatnonzero(keep)], bool(fallback)]
        write_run(path, run, name, base, "typed_decoding", choices[fold])


def write_run(
    path: Path, run: dict[str, Any], name: str, base: str, key: str, chosen: dict[str, Any]
) -> None:
    """``run`` (its pages' decisions decoded again) beside ``path`` as recipe ``name``, with
    the decodings ``chosen`` per type under ``key``."""
    run["recipe"] = name
    run[key] = {t: asdict(c) for t, c in chosen.items()}
    out = path.with_name(path.name.replace(base, name, 1))
    out.write_text(json.dumps(run), encoding="utf-8")
    logger.info("wrote %s", out)


def choice_parser(doc: str, base: str) -> argparse.ArgumentParser:
    """The options every ``choose`` of a decoding per type takes."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("command", choices=["choose"])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", required=True)
    parser.add_argument("--base", default=base)
    parser.add_argument("--page-types", required=True)
    parser.add_argument("--as", dest="name", required=True)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = choice_parser(__doc__, "news")
    parser.add_argument("--groups", action="store_true", help="candidates keep groups whole")
    parser.add_argument("--types", default="", help="only these types get their own (comma list)")
    parser.add_argument("--group-types", default="", help="... for these types only (comma list)")
    parser.add_argument(
        "--min-probability", type=float, default=0.0, help="a type counts from this probability"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    own = re.compile(rf"{re.escape(args.base)}-fold\d+-seed\d+\.json$")
    runs = [(p, json.loads(p.read_text("utf-8"))) for p in sorted(out.glob("*.json"))]
    runs = [(p, r) for p, r in runs if own.match(p.name)]
    types = json.loads(Path(args.page_types).read_text("utf-8"))
    wanted = {p["id"] for _, r in runs for p in r["pages"]}
    examples = {e.id: e for e in convention_examples(args.data, lambda e: e.id in wanted)}
    signatures = (
        page_signatures(args.data, wanted, out / "signatures" / "signatures.json")
        if args.groups
        else {}
    )
    found = candidates(args.groups)
    table = score_table(runs, examples, types, args.min_probability, found, signatures)
    folds = sorted({int(r["fold"]) for _, r in runs})
    grouped = frozenset(args.group_types.split(",")) if args.group_types else None
    only = frozenset(args.types.split(",")) if args.types else None
    choices = {f: choose(table, found, f, grouped, only) for f in folds}
    overall = choose(table, found, None, grouped, only)
    print(json.dumps({t: asdict(c) for t, c in overall.items()}, indent=2))
    write_runs(
        runs, examples, types, choices, signatures, args.name, args.base, args.min_probability
    )


if __name__ == "__main__":
    main()
