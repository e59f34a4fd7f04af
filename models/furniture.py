"""Where the shipped model's false positives sit on article pages (issue 23's news furniture).

    python -m scrapy_maintext.models.furniture --data ../shared/data [--model v4.1] [--samples 20]
    python -m scrapy_maintext.models.furniture --data ../shared/data --comments

Pages: wcxb-dev article pages of the sites no shipped model trained on (held-out and
validation sites), from the cached blocks (``models.dataset.load_examples``). Prints the
token precision and recall of the model's own output (no fallback) beside trafilatura's
defaults on the same pages, then the model's false-positive tokens (kept blocks that the
ground truth does not hold) by where they sit: before the first content block (titles,
bylines, dates), between the first and the last content block (captions, teasers, comments
in the text's flow) or after the last (related articles, comments, newsletter boxes), and
``--samples`` random blocks of each (on the terminal only; never commit page text).

``--comments``: the kept tokens, content and false positives, per wcxb-dev page type, that sit
under an element whose class or id names a comment section (``COMMENTISH``), segmenting the
unseen pages again from their HTML (a rule dropping those blocks would gain the false
positives and lose the content).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.models.dataset import Example, is_validation, load_examples
from scrapy_maintext.models.heldout import decide_cached, load_version
from scrapy_maintext.models.metrics import prf
from scrapy_maintext.models.systems import parse_html

PLACES = ("before", "inside", "after")
COMMENTISH = re.compile(r"comment|disqus|respond|repl(?:y|ies)", re.I)


def unseen_articles(data: str) -> list[Example]:
    return [
        e
        for e in load_examples(data)
        if e.dataset == "wcxb-dev"
        and e.page_type == "article"
        and (e.split == "test" or is_validation(e))
    ]


def place(index: int, content: list[int]) -> str:
    if not content or index < content[0]:
        return "before"
    return "after" if index > content[-1] else "inside"


def under_comments(element: Any) -> bool:
    while element is not None:
        names = f"{element.get('class') or ''} {element.get('id') or ''}"
        if COMMENTISH.search(names):
            return True
        element = element.getparent()
    return False


def comment_sections(data: str, model_name: str) -> None:
    """Kept tokens under comment-like markup, content vs false positives, per page type."""
    pages = {
        e.id: e
        for e in load_examples(data)
        if e.dataset == "wcxb-dev" and (e.split == "test" or is_validation(e))
    }
    model = load_version(model_name)
    kept: Counter[tuple[str, bool, bool]] = Counter()
    with gzip.open(Path(data) / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            ex = pages.get(record["id"])
            if ex is None:
                continue
            raw, _ = model.features(parse_html(record["html"]))
            decision, _ = decide_cached(model, ex)
            for i, (block, keep) in enumerate(zip(raw, decision.keep, strict=True)):
                if keep:
                    where = (ex.page_type, bool(ex.labels[i] > 0.5), under_comments(block.element))
                    kept[where] += len(ex.block_tokens[i])
    print("page type | content kept: under comment markup / all | false positives: under / all")
    for kind in sorted({k[0] for k in kept}):
        gold = kept[(kind, True, True)], kept[(kind, True, True)] + kept[(kind, True, False)]
        fp = kept[(kind, False, True)], kept[(kind, False, True)] + kept[(kind, False, False)]
        print(f"{kind} | {gold[0]} / {gold[1]} | {fp[0]} / {fp[1]}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--model", default="v4.1")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--comments", action="store_true", help="comment markup, per type")
    args = parser.parse_args(argv)
    if args.comments:
        comment_sections(args.data, args.model)
        return
    pages = unseen_articles(args.data)
    model = load_version(args.model)
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    tokens: Counter[str] = Counter()
    blocks: dict[str, list[str]] = defaultdict(list)
    for ex in pages:
        decision, _ = decide_cached(model, ex)
        kept = ex.kept_tokens(decision.keep)
        ours.append(prf(kept, ex.gold_tokens)[:2])
        theirs.append(prf(ex.fallback_tokens, ex.gold_tokens)[:2])
        content = [i for i, label in enumerate(ex.labels) if label > 0.5]
        for i, (toks, keep) in enumerate(zip(ex.block_tokens, decision.keep, strict=True)):
            if keep and ex.labels[i] <= 0.5 and toks:
                where = place(i, content)
                tokens[where] += len(toks)
                blocks[where].append(" ".join(toks[:14]))
    p, r = np.mean(ours, axis=0)
    tp, tr = np.mean(theirs, axis=0)
    print(f"{len(pages)} article pages; {args.model}: P {p:.3f} R {r:.3f}")
    print(f"trafilatura (default): P {tp:.3f} R {tr:.3f}")
    total = sum(tokens.values()) or 1
    shares = ", ".join(f"{w} {tokens[w] / total:.1%}" for w in PLACES)
    print(f"false-positive tokens: {total}; {shares}")
    rng = random.Random(1)
    for where in PLACES:
        print(f"-- {where}:")
        for text in rng.sample(blocks[where], min(args.samples, len(blocks[where]))):
            print(f"   {text}")


if __name__ == "__main__":
    main()
