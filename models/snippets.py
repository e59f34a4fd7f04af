"""Weak block labels from the trafilatura snippet set, and the evaluation that goes with them.

    python -m scrapy_maintext.models.train --data ../shared/data --out /tmp/base --stack "" \
        --modern-weight 1
    python -m scrapy_maintext.models.train --data ../shared/data --out /tmp/snip10 --stack "" \
        --modern-weight 1 --snippet-weight 10
    python -m scrapy_maintext.models.snippets --data ../shared/data /tmp/base /tmp/snip10

The snippet set has no ground-truth text, only snippets a correct extraction must (``with``) or
must not (``without``) contain: mostly German pages, unlike the rest of the training data.
Half of its sites (its training split, ``models.dataset.is_snippet_train``) give partial labels: a
block that contains a ``with`` snippet is content, one that contains a ``without`` snippet is
not, and every other block of those pages has loss weight 0 (``Example.mask``). The
evaluation scores each model folder's neural output (no cascade, no fallback) on the other
half of the snippet sites, the wcxb-dev held-out sites by page type and the 2007-2013 sets,
beside trafilatura's defaults. Training writes ``tests/fixtures/neural/<out name>.float.onnx``
as for every model: delete it after such an experiment.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scrapy_maintext.models.dataset import (
    MODERN,
    SNIPPETS,
    Example,
    Page,
    group_of,
    held_out_pages,
    iter_pages,
)
from scrapy_maintext.models.metrics import prf, snippet_score, tokens
from scrapy_maintext.models.systems import parse_html, trafilatura_system
from scrapy_maintext.neural.features import featurize
from scrapy_maintext.neural.segment import segment

#: Shorter snippets ("Foto", "mehr") match too many blocks to label one.
MIN_SNIPPET_CHARS = 8


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def snippet_example(page: Page, keep_hidden: bool = False) -> Example | None:
    """A page of the snippet set with labels only where a snippet falls in a block."""
    try:
        raw = segment(parse_html(page.html), keep_hidden)
    except Exception:  # unparsable pages are skipped, as in build_example
        return None
    texts = [_norm(b.text) for b in raw]
    labels = np.zeros(len(raw), dtype=np.float32)
    mask = np.zeros(len(raw), dtype=np.float32)
    marked = [(s, 1.0) for s in page.with_] + [(s, 0.0) for s in page.without]
    for snippet, label in marked:
        needle = _norm(snippet)
        if len(needle) < MIN_SNIPPET_CHARS:
            continue
        for i, text in enumerate(texts):
            if needle in text:
                labels[i], mask[i] = label, 1.0
    if not mask.any():
        return None
    block_tokens = [tokens(b.text) for b in raw]
    features = featurize(raw)
    gold: list[str] = []  # no ground-truth text: the mask says which labels are known
    example = Example(page.id, SNIPPETS, "train", page.site, features, labels, block_tokens, gold)
    example.mask = mask
    return example


def snippet_examples(data: str | Path, keep_hidden: bool = False) -> list[Example]:
    """Training examples of the snippet set's training half."""
    pages = (p for p in iter_pages(data, (SNIPPETS,)) if p.split == "train")
    examples = (snippet_example(page, keep_hidden) for page in pages)
    return [ex for ex in examples if ex is not None]


@dataclass
class SnippetPage:
    """A held-out page of the snippet set, segmented once, for scoring many models."""

    example: Example
    texts: list[str]
    with_: list[str]
    without: list[str]


def snippet_test_pages(data: str | Path) -> list[SnippetPage]:
    """The snippet set's held-out half (``dataset.is_snippet_train`` false), segmented."""
    out = []
    for page in iter_pages(data, (SNIPPETS,)):
        if page.split != "test":
            continue
        try:
            raw = segment(parse_html(page.html))
        except Exception:  # unparsable pages are skipped, as in build_example
            continue
        if not raw:
            continue
        toks = [tokens(b.text) for b in raw]
        labels = np.zeros(len(raw), dtype=np.float32)
        feats = featurize(raw)
        ex = Example(page.id, SNIPPETS, "test", page.site, feats, labels, toks, [])
        out.append(SnippetPage(ex, [b.text for b in raw], page.with_, page.without))
    return out


def evaluate(data: str, folders: list[Path]) -> None:
    from scrapy_maintext.document import blocks_to_text
    from scrapy_maintext.neural import NeuralExtractor

    trafilatura = trafilatura_system()()

    models = {str(f): NeuralExtractor.load(f) for f in folders}
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    snippets: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for page in held_out_pages(data, None):
        tree = parse_html(page.html)
        outputs = {n: blocks_to_text(m.extract(tree, page.url).blocks) for n, m in models.items()}
        if page.dataset in (SNIPPETS, MODERN):
            outputs["trafilatura"] = trafilatura(page.html, page.url)
        for name, text in outputs.items():
            if page.dataset == SNIPPETS:
                correct, total = snippet_score(text, page.with_, page.without)
                snippets[name][0] += correct
                snippets[name][1] += total
            else:
                scores[name][group_of(page)].append(prf(tokens(text), tokens(page.text))[2])
    _report(scores, snippets)


def _report(scores: dict[str, dict[str, list[float]]], snippets: dict[str, list[int]]) -> None:
    types = sorted({g for s in scores.values() for g in s if g.startswith(f"{MODERN}/")})
    names = " | ".join(t.split("/")[1] for t in types)
    print(f"| model | snippets (held-out half) | wcxb-dev macro | legacy macro | {names} |")
    print("|---" * (4 + len(types)) + "|")
    for name, groups in scores.items():
        means = {g: statistics.fmean(v) for g, v in groups.items()}
        modern = statistics.fmean(means[t] for t in types if t in means)
        legacy_groups = [g for g in means if not g.startswith(f"{MODERN}/")]
        legacy = "-"
        if legacy_groups:
            legacy = f"{statistics.fmean(means[g] for g in legacy_groups):.4f}"
        correct, total = snippets[name]
        cells = " | ".join(f"{means[t]:.3f}" if t in means else "-" for t in types)
        print(f"| {name} | {correct / max(total, 1):.4f} | {modern:.4f} | {legacy} | {cells} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("folders", nargs="+", type=Path, help="model folders to compare")
    args = parser.parse_args(argv)
    evaluate(args.data, args.folders)


if __name__ == "__main__":
    main()
