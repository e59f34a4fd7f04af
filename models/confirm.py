"""Would trafilatura's decisions, as a precision filter, lift the neural output? (issue 34)

    python -m scrapy_maintext.models.confirm --data ../shared/data DIR/news-fold0-seed1234.json ...

For the pages of ``models.sources`` runs, from their saved decisions: the recipe's output under
the convention (``neural``), the same keeping only the blocks trafilatura's text covers (a
block's tokens inside trafilatura's token 3-grams, share at least 0.5 or 0.3; pages where
trafilatura finds under 50 tokens keep the neural output), and trafilatura alone. Token F1 with
precision and recall, mean per page, per set (wcxb-dev split into articles and the rest).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from scrapy_maintext.extraction.phrases import Phrases
from scrapy_maintext.models.dataset import Example
from scrapy_maintext.models.metrics import prf, tokens
from scrapy_maintext.models.sources import (
    convention_examples,
    kept_markup,
    output_text,
    run_phrases,
)
from scrapy_maintext.neural.stack import covered_shares

#: Shares of a block's tokens that trafilatura's text must cover for it to stay.
SHARES = (0.5, 0.3)
#: Below this many tokens of trafilatura's text, the filter is not applied.
MIN_REFERENCE_TOKENS = 50


def group_of(ex: Example) -> str:
    if ex.dataset != "wcxb-dev":
        return ex.dataset
    return "wcxb-dev/article" if ex.page_type == "article" else "wcxb-dev/other"


def texts(ex: Example, kept: list[int], fallback: bool, phrases: Phrases) -> dict[str, str]:
    view = ex.view
    assert view is not None
    if fallback:
        text = output_text(view.fallback, None, view.facts, phrases)
        return {"neural": text, **{f"confirmed {s}": text for s in SHARES}}
    keep = np.zeros(len(view.blocks), dtype=bool)
    keep[kept] = True
    reference = tokens("\n".join(b.text for b in view.fallback))
    covered = covered_shares(ex.block_tokens, reference)
    out = {}
    for name, share in (("neural", None), *((f"confirmed {s}", s) for s in SHARES)):
        mask = keep
        if share is not None and len(reference) >= MIN_REFERENCE_TOKENS:
            mask = keep & (covered >= share)
        index = [int(i) for i in np.flatnonzero(mask)]
        blocks = [view.blocks[i] for i in index]
        out[name] = output_text(blocks, kept_markup(ex, index), view.facts, phrases)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("runs", nargs="+", help="models.sources run files")
    args = parser.parse_args(argv)
    examples = {e.id: e for e in convention_examples(args.data)}
    scores: dict[str, dict[str, list[tuple[float, float, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for path in args.runs:
        run = json.loads(Path(path).read_text("utf-8"))
        phrases = run_phrases(run)
        for page in run["pages"]:
            ex = examples[page["id"]]
            kept, fallback = page["decisions"][""]
            for name, text in texts(ex, kept, fallback, phrases).items():
                scores[group_of(ex)][name].append(prf(tokens(text), ex.gold_tokens))
            scores[group_of(ex)]["trafilatura"].append(prf(ex.fallback_tokens, ex.gold_tokens))
    print("| set | pages | " + " | ".join(next(iter(scores.values()))) + " |")
    for group, systems in sorted(scores.items()):
        cells = []
        for values in systems.values():
            p, r, f = np.mean(values, axis=0)
            cells.append(f"{f:.3f} ({p:.2f}/{r:.2f})")
        print(f"| {group} | {len(systems['trafilatura'])} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
