"""How long must a run of repeated blocks be before ``extract()`` drops it? (``neural.repeats``)

    python -m scrapy_maintext.models.repeats --data ../shared/data [--reveal-share S]

Runs the shipped model (its cascade and trafilatura's defaults as the fallback, as ``auto``
does, and without trailing headings, as ``extract()``) once per page, then rebuilds the text
under each rule from the deciding model's keep mask
(``NeuralResult.decided``): no rule, runs of N or more repeats from another parent element
(N = 1, 2, 3), and runs of 2 or more repeats under any parent. Prints wcxb-dev macro F1 over page
types, product F1 and the 2007-2013 macro on the training sites (less validation), the
validation sites and the held-out sites, the held-out half of the snippet set, and how many
pages each rule changed. Choose on the training and validation sites. ``--reveal-share``
sets the segmenter's ``REVEAL_SHARE`` for the run (1.0 turns off reading hidden page
wrappers as visible), to compare that rule the same way.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import Pool

import numpy as np
import scrapy_maintext.neural.segment as segmentation
from scrapy_maintext.document import blocks_to_text
from scrapy_maintext.extraction.core import without_trailing_headings
from scrapy_maintext.extraction.engines import run_trafilatura
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.models.dataset import Page, iter_pages, usable_for_f1
from scrapy_maintext.models.evaluate import LEGACY, MODERN, PAGE_TYPES, SNIPPETS, group_of
from scrapy_maintext.models.metrics import prf, snippet_score, tokens
from scrapy_maintext.models.recall_guard import PARTS, _part
from scrapy_maintext.models.systems import parse_html
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.repeats import drop_repeated_runs, drop_runs, repeat_key
from scrapy_maintext.neural.segment import RawBlock

Rule = Callable[[list[RawBlock], np.ndarray], np.ndarray]


def _any_parent(raw: list[RawBlock], keep: np.ndarray) -> np.ndarray:
    """Runs of 2+ kept blocks whose text a kept block already had, under any parent."""
    seen: set[str] = set()
    rep = np.zeros(len(raw), dtype=bool)
    for i in np.flatnonzero(keep).tolist():
        key = repeat_key(raw[i].text)
        rep[i] = bool(key) and key in seen
        seen.add(key)
    return drop_runs(rep, keep, 2)


RULES: dict[str, Rule | None] = {
    "none": None,
    "other parent, runs >= 1": lambda r, k: drop_repeated_runs(r, k, 1),
    "other parent, runs >= 2 (shipped)": lambda r, k: drop_repeated_runs(r, k, 2),
    "other parent, runs >= 3": lambda r, k: drop_repeated_runs(r, k, 3),
    "any parent, runs >= 2": _any_parent,
}


@dataclass
class Outcome:
    group: str
    part: str
    #: Per rule: token F1 (pages with a ground truth) or snippets (correct, total).
    f1: dict[str, float] = field(default_factory=dict)
    snippets: dict[str, tuple[int, int]] = field(default_factory=dict)
    changed: dict[str, bool] = field(default_factory=dict)


def _texts(page_html: str, url: str | None) -> dict[str, str] | None:
    try:
        tree = parse_html(page_html)
    except Exception:  # unparsable pages are skipped, as in training
        return None
    result = NeuralExtractor.load().extract(tree, url)
    if result.fallback or result.decided is None or result.segments is None:
        blocks = run_trafilatura(tree, url, ExtractOptions()).blocks
        text = blocks_to_text(without_trailing_headings(blocks))
        return {name: text for name in RULES}
    raw, keep = result.segments, result.decided
    texts = {}
    for name, rule in RULES.items():
        mask = keep if rule is None else rule(raw, keep)
        kept = [b.to_block() for b, k in zip(raw, mask, strict=True) if k]
        texts[name] = blocks_to_text(without_trailing_headings(kept))
    return texts


def outcome(page: Page) -> Outcome | None:
    texts = _texts(page.html, page.url)
    if texts is None:
        return None
    out = Outcome(group_of(page), "snippets" if page.dataset == SNIPPETS else _part(page))
    for name, text in texts.items():
        out.changed[name] = text != texts["none"]
        if page.dataset == SNIPPETS:
            out.snippets[name] = snippet_score(text, page.with_, page.without)
        else:
            out.f1[name] = prf(tokens(text), tokens(page.text))[2]
    return out


def _set_reveal_share(share: float) -> None:
    """Pool initializer: each worker segments with the run's ``REVEAL_SHARE``."""
    segmentation.REVEAL_SHARE = share


def _row(name: str, mine: list[Outcome]) -> str:
    by: dict[str, list[float]] = defaultdict(list)
    for o in mine:
        by[o.group].append(o.f1[name])
    macro = np.mean([np.mean(by[f"{MODERN}/{t}"]) for t in PAGE_TYPES if by[f"{MODERN}/{t}"]])
    legacy = np.mean([np.mean(by[g]) for g in LEGACY if by[g]])
    product = np.mean(by[f"{MODERN}/product"] or [np.nan])
    changed = sum(o.changed[name] for o in mine)
    return f"| {name} | {macro:.4f} | {product:.4f} | {legacy:.4f} | {changed} |"


def _snippet_row(name: str, mine: list[Outcome]) -> str:
    correct = sum(o.snippets[name][0] for o in mine)
    total = sum(o.snippets[name][1] for o in mine)
    changed = sum(o.changed[name] for o in mine)
    return f"| {name} | {correct / max(total, 1):.4f} | {changed} |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument(
        "--reveal-share",
        type=float,
        default=segmentation.REVEAL_SHARE,
        help="segment.REVEAL_SHARE for this run (1.0: hidden wrappers stay hidden)",
    )
    args = parser.parse_args(argv)

    pages = [
        p
        for p in iter_pages(args.data, (MODERN, *LEGACY, SNIPPETS))
        if (p.dataset == SNIPPETS and p.split != "train") or usable_for_f1(p)
    ]
    with Pool(args.processes, _set_reveal_share, (args.reveal_share,)) as pool:
        outcomes = [o for o in pool.map(outcome, pages, chunksize=8) if o is not None]
    for part in PARTS:
        mine = [o for o in outcomes if o.part == part]
        print(f"\n{part} sites ({len(mine)} pages)\n")
        print("| rule | wcxb-dev macro | product | legacy macro | pages changed |")
        print("|---|---|---|---|---|")
        for name in RULES:
            print(_row(name, mine))
    mine = [o for o in outcomes if o.part == "snippets"]
    print(f"\nsnippet set, held-out half ({len(mine)} pages)\n")
    print("| rule | snippets correct | pages changed |")
    print("|---|---|---|")
    for name in RULES:
        print(_snippet_row(name, mine))


if __name__ == "__main__":
    main()
