"""Where the listing decoding can reach (issue 45; ``models.list_decoding``): which pages each
predicted type holds, and how far the candidates get on the gold types asked for.

    python -m scrapy_maintext.models.list_room --data ../shared/data --out DIR \\
        --base listonly --page-types PI/page-types.json --gold listing,collection

Prints, over the runs' pages, the count of every (source or wcxb-dev gold type, predicted
type) pair; then per (gold type, predicted type) of the wcxb-dev pages of ``--gold``, the
kept blocks' token F1 before the convention: the run's own decoding, the best single
candidate of ``--family`` on those very pages (in-sample: an upper bound of what a choice
made elsewhere can get), the best candidate page by page, and the block ceiling (keeping
exactly the blocks the alignment calls content).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from scrapy_maintext.models.list_decoding import (
    FAMILIES,
    OWN,
    candidates,
    decoded,
    page_items,
    runs_of,
    type_of,
)
from scrapy_maintext.models.sources import convention_examples, load_probs
from scrapy_maintext.models.typed_decoding import BagScorer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", required=True)
    parser.add_argument("--base", default="listonly")
    parser.add_argument("--page-types", required=True)
    parser.add_argument("--gold", default="listing,collection", help="wcxb-dev gold types")
    parser.add_argument("--family", choices=sorted(FAMILIES), default="items")
    args = parser.parse_args(argv)
    runs = runs_of(Path(args.out), args.base)
    types = json.loads(Path(args.page_types).read_text("utf-8"))
    counts: Counter[tuple[str, str]] = Counter()
    seen: set[str] = set()
    for _, run in runs:
        for page in run["pages"]:
            if page["id"] not in seen:
                seen.add(page["id"])
                where = f"wcxb-dev/{page['type']}" if page["set"] == "wcxb-dev" else page["set"]
                counts[(where, type_of(types, page["id"]))] += 1
    for (where, predicted), n in sorted(counts.items()):
        print(f"{where} predicted {predicted}: {n}")
    gold = set(args.gold.split(","))
    ids = {p["id"] for _, r in runs for p in r["pages"] if p["set"] == "wcxb-dev"}
    examples = {
        e.id: e for e in convention_examples(args.data, lambda e: e.id in ids)
        if e.page_type in gold
    }  # fmt: skip
    items = page_items(args.data, set(examples), Path(args.out) / "items" / "items.json")
    found = candidates(args.family)
    own = found.index(OWN)
    rows: dict[tuple[str, str], list[tuple[np.ndarray, float]]] = defaultdict(list)
    for path, run in runs:
        probs = load_probs(path.parent / "probs" / path.with_suffix(".npz").name)
        for page in run["pages"]:
            ex = examples.get(page["id"])
            if ex is None:
                continue
            bags = BagScorer(ex)
            scores = [
                bags.f1(decoded(probs[ex.id], ex, items.get(ex.id), run, c)[0]) for c in found
            ]
            ceiling = bags.f1(ex.labels.astype(bool))
            rows[(ex.page_type, type_of(types, ex.id))].append((np.array(scores), ceiling))
    print("gold type | predicted | pages | own | best single (in-sample) | best per page | ceiling")
    for (name, predicted), found_rows in sorted(rows.items()):
        table = np.array([r for r, _ in found_rows])
        means = table.mean(axis=0)
        best = int(np.argmax(means))
        print(f"{name} | {predicted} | {len(table)} | {means[own]:.3f} | {means[best]:.3f} "
              f"({found[best]}) | {table.max(axis=1).mean():.3f} | "
              f"{np.mean([c for _, c in found_rows]):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
