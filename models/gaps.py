"""What the gold keeps that a recipe's out-of-fold decisions drop, per WCXB page type (issue 45,
item 2: where v6 trails rs-trafilatura).

    python -m scrapy_maintext.models.gaps --data ../shared/data --out DIR --recipe news \\
        --types documentation,collection,listing,product

Per type, over the recipe's out-of-fold wcxb-dev pages (``models.sources run``' decisions,
before the convention and the routing), shares of the gold's tokens:

* *unsegmented*: in the gold but in no block of the page (the segmenter's loss: no decoding
  can win them back);
* *dropped*: in a block the alignment calls content (``dataset.align_labels``) that the
  decisions did not keep, by the block's kind (paragraph, item, row, code, heading...);
* *extra*: tokens of kept blocks the alignment calls boilerplate, per gold token, by kind;

and the token F1 of the decisions beside the F1 of keeping exactly the content blocks (the
ceiling of any decoding of these blocks).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.models.dataset import Example
from scrapy_maintext.models.sources import convention_examples
from scrapy_maintext.models.typed_decoding import BagScorer


def gold_outside_blocks(ex: Example) -> int:
    """Gold tokens that no block of the page holds (multiset difference)."""
    held = Counter(t for row in ex.block_tokens for t in row)
    gold = Counter(ex.gold_tokens)
    return sum((gold - held).values())


def page_gaps(ex: Example, kept: list[int]) -> dict[str, Any]:
    assert ex.view is not None
    keep = np.zeros(len(ex.block_tokens), dtype=bool)
    keep[kept] = True
    dropped: Counter[str] = Counter()
    extra: Counter[str] = Counter()
    for i, (block, row) in enumerate(zip(ex.view.blocks, ex.block_tokens, strict=True)):
        content = bool(ex.labels[i])
        if content and not keep[i]:
            dropped[block.kind] += len(row)
        elif keep[i] and not content:
            extra[block.kind] += len(row)
    scorer = BagScorer(ex)
    return {
        "gold": len(ex.gold_tokens),
        "unsegmented": gold_outside_blocks(ex),
        "dropped": dropped,
        "extra": extra,
        "f1": scorer.f1(keep),
        "ceiling": scorer.f1(ex.labels.astype(bool)),
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    gold = sum(r["gold"] for r in rows) or 1
    dropped: Counter[str] = sum((r["dropped"] for r in rows), Counter())
    extra: Counter[str] = sum((r["extra"] for r in rows), Counter())
    return {
        "pages": len(rows),
        "f1": round(float(np.mean([r["f1"] for r in rows])), 3),
        "ceiling": round(float(np.mean([r["ceiling"] for r in rows])), 3),
        "unsegmented": round(sum(r["unsegmented"] for r in rows) / gold, 3),
        "dropped": {k: round(v / gold, 3) for k, v in dropped.most_common()},
        "extra": {k: round(v / gold, 3) for k, v in extra.most_common()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", required=True, help="a models.sources run folder")
    parser.add_argument("--recipe", default="news")
    parser.add_argument("--types", default="documentation,collection,listing,product")
    parser.add_argument("--worst", type=int, default=0, help="list the N worst pages per type")
    args = parser.parse_args(argv)
    own = re.compile(rf"{re.escape(args.recipe)}-fold\d+-seed\d+\.json$")
    runs = [json.loads(p.read_text("utf-8")) for p in sorted(Path(args.out).glob("*.json"))
            if own.match(p.name)]  # fmt: skip
    types = set(args.types.split(","))
    pages = {p["id"]: p for r in runs for p in r["pages"]
             if p["set"] == "wcxb-dev" and p.get("type") in types}  # fmt: skip
    examples = convention_examples(args.data, lambda e: e.id in pages)
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for ex in examples:
        row = page_gaps(ex, pages[ex.id]["decisions"][""][0])
        row["id"] = ex.id
        by_type[ex.page_type].append(row)
    for name, rows in sorted(by_type.items()):
        print(name, json.dumps(summarise(rows)))
        for r in sorted(rows, key=lambda r: r["f1"] - r["ceiling"])[: args.worst]:
            print(f"  {r['id']} f1 {r['f1']:.2f} ceiling {r['ceiling']:.2f} gold {r['gold']} "
                  f"unsegmented {r['unsegmented']} dropped {dict(r['dropped'])} "
                  f"extra {dict(r['extra'])}")  # fmt: skip


if __name__ == "__main__":
    main()
