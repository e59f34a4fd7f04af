"""Quick held-out comparison of model versions from the cached examples (no re-parsing).

    python -m scrapy_maintext.models.heldout --data ../shared/data --models v1,v2

Scores the shipped int8 models with their own decoding on the held-out sites' cached blocks:
neural alone, auto (trafilatura with the product's defaults on fallback pages), trafilatura
alone and the per-page oracle (better of neural and trafilatura). For choosing a recipe; the
figures of record come from ``models.evaluate``, which runs the whole product path.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np
from scrapy_maintext.models.dataset import Example, load_examples
from scrapy_maintext.models.metrics import token_f1
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.decode import decide
from scrapy_maintext.neural.inference import MODELS_DIR

COLUMNS = ("neural", "auto", "trafilatura", "oracle")


def group_of(ex: Example) -> str:
    return f"wcxb-dev/{ex.page_type}" if ex.dataset == "wcxb-dev" else ex.dataset


def score_page(extractor: NeuralExtractor, ex: Example) -> dict[str, float]:
    f = ex.features
    stack = ex.stacks[extractor.reference] if extractor.needs_reference else None
    feats = type(f)(f.dense, f.struct_ids, f.word_ids, stack)
    probs = extractor.model.predict(feats)
    lengths = np.array([len(" ".join(t)) for t in ex.block_tokens], dtype=np.float64)
    decision = decide(probs, lengths, extractor.params)
    pred = [t for toks, k in zip(ex.block_tokens, decision.keep, strict=True) if k for t in toks]
    neural = token_f1(pred, ex.gold_tokens)
    traf = token_f1(ex.fallback_tokens, ex.gold_tokens)
    return {
        "neural": neural,
        "auto": traf if decision.fallback else neural,
        "trafilatura": traf,
        "oracle": max(neural, traf),
    }


def table(version: str, examples: list[Example]) -> str:
    extractor = NeuralExtractor.load(MODELS_DIR / version if "/" not in version else version)
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--models", default="v1,v2")
    args = parser.parse_args(argv)
    examples = [e for e in load_examples(args.data) if e.split == "test"]
    for version in args.models.split(","):
        print(table(version.strip(), examples) + "\n")


if __name__ == "__main__":
    main()
