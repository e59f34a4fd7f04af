"""Decoding of predicted listing and collection pages by their repeated items (issue 45;
``neural.items``), chosen inside the folds from the probabilities the fold runs saved
(``models.sources run``): no training again, ``models.typed_decoding``'s pattern.

    python -m scrapy_maintext.models.list_decoding choose --data ../shared/data --out DIR \\
        --base listonly --page-types PI/page-types.json --as listdec
    python -m scrapy_maintext.models.sources rescore --data ../shared/data --out DIR \\
        --base listdec --as listdec-routed ...    # the convention, the gate, the routing

For fold k, each type of ``--types`` gets the candidate (``neural.items.ListDecoding``) with
the best mean token F1 on the wcxb-dev and fundus-dev pages of the other folds predicted that
type (each decoded from its own fold's model), when it beats the run's own decoding there by
``typed_decoding.MIN_GAIN``; fold k's pages and its evaluation-only pages predicted that type
are decoded with it and written as runs of recipe NAME. The choice over every fold's pages
(what a shipped folder's ``"by_type"`` takes) is printed, with each type's mean token F1 per
candidate family on the out-of-fold pages (``--show``).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.extraction.phrases import Phrases
from scrapy_maintext.models.dataset import DATASETS, Example, iter_pages
from scrapy_maintext.models.page_inputs import page_blocks
from scrapy_maintext.models.sources import FOLDED, convention_examples, load_probs, run_phrases
from scrapy_maintext.models.sources_pages import Typing, system_texts
from scrapy_maintext.models.tune import block_lengths
from scrapy_maintext.models.typed_decoding import (
    BagScorer,
    base_params,
    choice_parser,
    write_run,
)
from scrapy_maintext.models.typed_decoding import choose as typed_choose
from scrapy_maintext.models.wcxb import word_prf
from scrapy_maintext.neural.groups import path_signatures
from scrapy_maintext.neural.items import Items, ListDecoding, decide_listing, repeated_items

logger = logging.getLogger(__name__)

DELTAS = [-0.25, -0.2, -0.15, -0.1, -0.05, 0.0, 0.05]
#: Candidate families (``--family``): "items", the threshold moved and items kept whole
#: where ``keep_share`` of them keep a block (what ships); "wide", also the columns'
#: pooling, the column and group shares (chose unstably from fold to fold and lost out of
#: fold: ``models/CHANGELOG.md``).
FAMILIES = {
    "items": ([0.0], [(2.0, 0.5, 0.0), *((k, 0.0, 0.0) for k in (0.3, 0.5, 0.7))]),
    "wide": (
        [0.0, 0.5, 1.0],
        [(2.0, 0.5, 0.0), *itertools.product((0.3, 0.5, 0.7), (0.0, 0.3, 0.6), (0.0, 0.2, 0.4))],
    ),
}
TYPES = ("listing", "collection")
#: The run's own decoding.
OWN = ListDecoding()
#: How the scored system reads the predicted type, as v7 ships (``sources rescore
#: --threshold 0.6 --second-opinion --route product``): ``Typing``'s other fields.
TYPING = (0.6, True, frozenset({"product"}))


def candidates(family: str = "items") -> list[ListDecoding]:
    """Every candidate of ``family``: (pools, (keep_share, column_share, min_group_share))
    crossed with ``DELTAS``; a keep_share above 1 keeps no items whole."""
    pools, rules = FAMILIES[family]
    return [
        ListDecoding(d, p, k, c, g) for d, p, (k, c, g) in itertools.product(DELTAS, pools, rules)
    ]


def page_items(data: str, ids: set[str], cache: Path, min_rows: int = 3) -> dict[str, Items]:
    """The items of every page of ``ids`` (segmented again as its example was: the example
    cache keeps no element paths), cached in ``cache``."""
    known: dict[str, Any] = json.loads(cache.read_text("utf-8")) if cache.exists() else {}
    missing = ids - set(known)
    if missing:
        for page in iter_pages(data, tuple(d for d in DATASETS if d != "trafilatura")):
            if page.id in missing:
                raw = page_blocks(page)
                if raw is not None:
                    known[page.id] = repeated_items(raw, path_signatures(raw), min_rows).to_json()
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(known), encoding="utf-8")
    return {k: Items.from_json(v) for k, v in known.items() if k in ids}


def type_of(types: dict[str, list[Any]], page_id: str) -> str:
    return str(types.get(page_id, [""])[0])


def runs_of(out: Path, base: str) -> list[tuple[Path, dict[str, Any]]]:
    own = re.compile(rf"{re.escape(base)}-fold\d+-seed\d+\.json$")
    found = [(p, json.loads(p.read_text("utf-8"))) for p in sorted(out.glob("*.json"))]
    return [(p, r) for p, r in found if own.match(p.name)]


def decoded(
    probs: np.ndarray, ex: Example, items: Items | None, run: dict[str, Any], c: ListDecoding
) -> tuple[np.ndarray, bool]:
    lengths = block_lengths(ex)
    if items is None or len(items.column) != len(probs):
        items = Items(*(np.full(len(probs), -1, dtype=np.int64) for _ in range(3)))
    decision = decide_listing(probs, lengths, items, base_params(run), c)
    return decision.keep, decision.fallback


class FinalScorer:
    """WCXB's word F1 of the text ``auto`` makes of a decision on one page, as ``sources
    rescore`` scores it (the convention, the article gate, the second opinion: ``TYPING``),
    memoised per kept set (many candidates keep the same blocks)."""

    def __init__(self, ex: Example, phrases: Phrases, typing: Typing) -> None:
        self.ex, self.phrases, self.typing = ex, phrases, typing
        self.known: dict[bytes, float] = {}

    def f1(self, keep: np.ndarray, fallback: bool) -> float:
        key = np.packbits(keep).tobytes() + bytes([fallback])
        if key not in self.known:
            texts = system_texts(self.ex, keep, fallback, self.phrases, "", self.typing)
            assert self.ex.view is not None
            self.known[key] = word_prf(texts["auto"], self.ex.view.gold)[2]
        return self.known[key]


def score_table(
    runs: list[tuple[Path, dict[str, Any]]],
    examples: dict[str, Example],
    types: dict[str, list[Any]],
    items: dict[str, Items],
    found: list[ListDecoding],
    wanted: frozenset[str],
    objective: str = "wcxb",
) -> dict[str, tuple[int, str, np.ndarray]]:
    """Per out-of-fold page of the folded sets predicted one of ``wanted``: (its fold, its
    predicted type, its score under every candidate: WCXB's word F1 of ``auto``'s text, or
    the token F1 of the kept blocks before the convention, ``objective`` "token")."""
    table = {}
    typing = Typing(types, *TYPING)
    for path, run in runs:
        probs = load_probs(path.parent / "probs" / path.with_suffix(".npz").name)
        phrases = run_phrases(run)
        for page in run["pages"]:
            ex = examples.get(page["id"])
            name = type_of(types, page["id"])
            if ex is None or ex.dataset not in FOLDED or name not in wanted:
                continue
            made = [decoded(probs[ex.id], ex, items.get(ex.id), run, c) for c in found]
            if objective == "token":
                bags = BagScorer(ex)
                row = [bags.f1(keep) for keep, _ in made]
            else:
                final = FinalScorer(ex, phrases, typing)
                row = [final.f1(keep, fallback) for keep, fallback in made]
            table[ex.id] = (int(run["fold"]), name, np.array(row))
    return table


def choose(
    table: dict[str, tuple[int, str, np.ndarray]], found: list[ListDecoding], fold: int | None
) -> dict[str, ListDecoding]:
    """Per predicted type, the candidate chosen on the pages outside ``fold`` (None: all):
    ``typed_decoding.choose`` from the run's own decoding."""
    return typed_choose(table, found, fold, default=found.index(OWN))


def families(table: dict[str, tuple[int, str, np.ndarray]], found: list[ListDecoding]) -> str:
    """Per type, the best mean token F1 over all folds' pages of each candidate family (the
    threshold alone, pooling, items), beside the run's own: where the gain comes from."""
    lines = []
    by_type: dict[str, list[np.ndarray]] = defaultdict(list)
    for _, name, row in table.values():
        by_type[name].append(row)
    kinds = {
        "own": lambda c: c == OWN,
        "threshold": lambda c: c.pool == 0 and not c.by_items,
        "pool": lambda c: not c.by_items,
        "items": lambda c: c.by_items,
    }
    for name, rows in sorted(by_type.items()):
        means = np.mean(rows, axis=0)
        parts = []
        for kind, test in kinds.items():
            idx = [i for i, c in enumerate(found) if test(c)]
            best = max(idx, key=lambda i: means[i])
            parts.append(f"{kind} {means[best]:.4f} ({found[best]})")
        lines.append(f"{name} ({len(rows)} pages): " + "; ".join(parts))
    return "\n".join(lines)


def write_runs(
    runs: list[tuple[Path, dict[str, Any]]],
    examples: dict[str, Example],
    types: dict[str, list[Any]],
    items: dict[str, Items],
    choices: dict[int, dict[str, ListDecoding]],
    name: str,
    base: str,
) -> None:
    for path, run in runs:
        fold = int(run["fold"])
        probs = load_probs(path.parent / "probs" / path.with_suffix(".npz").name)
        for page in run["pages"]:
            pick = choices[fold].get(type_of(types, page["id"]))
            ex = examples.get(page["id"])
            if pick is None or ex is None:
                continue
            keep, fallback = decoded(probs[ex.id], ex, items.get(ex.id), run, pick)
            page["decisions"][""] = [[int(i) for i in np.flatnonzero(keep)], bool(fallback)]
        write_run(path, run, name, base, "list_decoding", choices[fold])


def main(argv: list[str] | None = None) -> None:
    parser = choice_parser(__doc__, "listonly")
    parser.add_argument("--types", default=",".join(TYPES), help="types decoded (comma list)")
    parser.add_argument("--show", action="store_true", help="print the candidate families")
    parser.add_argument("--objective", choices=["wcxb", "token"], default="wcxb")
    parser.add_argument("--family", choices=sorted(FAMILIES), default="items")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    runs = runs_of(out, args.base)
    types = json.loads(Path(args.page_types).read_text("utf-8"))
    wanted = frozenset(args.types.split(","))
    ids = {p["id"] for _, r in runs for p in r["pages"] if type_of(types, p["id"]) in wanted}
    examples = {e.id: e for e in convention_examples(args.data, lambda e: e.id in ids)}
    items = page_items(args.data, ids, out / "items" / "items.json")
    found = candidates(args.family)
    table = score_table(runs, examples, types, items, found, wanted, args.objective)
    if args.show:
        print(families(table, found))
    folds = sorted({int(r["fold"]) for _, r in runs})
    choices = {f: choose(table, found, f) for f in folds}
    overall = choose(table, found, None)
    print(json.dumps({t: asdict(c) for t, c in overall.items()}, indent=2))
    write_runs(runs, examples, types, items, choices, args.name, args.base)


if __name__ == "__main__":
    main()
