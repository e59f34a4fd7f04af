"""Would a recall guard help? trafilatura's text when the default engine keeps far less.

    python -m scrapy_maintext.models.recall_guard --data ../shared/data

On wcxb-dev product pages the largest losses are pages whose description sits in an element
hidden by CSS: the segmenter drops it, the model keeps a few blocks, trafilatura (which reads
no CSS) finds the text. The guard tried here: on a page the cascade escalated (trafilatura has
run there already, so it costs nothing), return trafilatura's text when the neural output has
fewer than RATIO times as many tokens; or the same on every page (trafilatura then runs on
every page). It prints wcxb-dev macro F1 over page types, product F1 and the legacy
macro for each ratio on the training sites (less validation), the validation sites and the
held-out sites, with the number of pages the guard changed.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import dataclass

import lxml.html
import numpy as np
from scrapy_maintext.extraction.engines import blocks_to_lines, run_engine
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.models.dataset import Page, is_validation_site, iter_pages, usable_for_f1
from scrapy_maintext.models.evaluate import LEGACY, MODERN, PAGE_TYPES, group_of
from scrapy_maintext.models.metrics import prf, tokens

RATIOS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
PARTS = ("training", "validation", "held-out")


@dataclass
class Outcome:
    group: str
    part: str
    escalated: bool
    neural: bool
    ours: list[str]
    trafilatura: list[str]
    f_ours: float
    f_trafilatura: float


def _part(page: Page) -> str:
    if page.split == "test":
        return "held-out"
    return "validation" if is_validation_site(page.site) else "training"


def outcome(page: Page) -> Outcome | None:
    try:
        tree = lxml.html.fromstring(page.html)
    except Exception:  # unparsable pages are skipped, as in training
        return None
    auto = run_engine(tree, page.url, ExtractOptions(engine="auto"))
    traf = run_engine(tree, page.url, ExtractOptions(engine="trafilatura"))
    ours, theirs = tokens(blocks_to_lines(auto.blocks)), tokens(blocks_to_lines(traf.blocks))
    gold = tokens(page.text)
    return Outcome(
        group_of(page),
        _part(page),
        auto.escalated,
        auto.extractor == "neural",
        ours,
        theirs,
        prf(ours, gold)[2],
        prf(theirs, gold)[2],
    )


def guarded(o: Outcome, ratio: float, every_page: bool) -> float:
    fires = (o.escalated or every_page) and o.neural
    if fires and len(o.ours) < ratio * len(o.trafilatura):
        return o.f_trafilatura
    return o.f_ours


def _line(outcomes: list[Outcome], ratio: float, every_page: bool) -> str:
    by: dict[str, list[float]] = defaultdict(list)
    changed = 0
    for o in outcomes:
        f1 = guarded(o, ratio, every_page)
        by[o.group].append(f1)
        changed += f1 != o.f_ours
    modern = [f"{MODERN}/{t}" for t in PAGE_TYPES]
    macro = np.mean([np.mean(by[g]) for g in modern if by[g]])
    legacy = np.mean([np.mean(by[g]) for g in LEGACY if by[g]])
    product = np.mean(by[f"{MODERN}/product"] or [np.nan])
    return f"| {ratio} | {macro:.4f} | {product:.4f} | {legacy:.4f} | {changed} |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="../shared/data")
    args = parser.parse_args(argv)
    pages = (p for p in iter_pages(args.data, (MODERN, *LEGACY)) if usable_for_f1(p))
    outcomes = [o for o in map(outcome, pages) if o is not None]
    for every_page in (False, True):
        for part in PARTS:
            mine = [o for o in outcomes if o.part == part]
            where = "every page" if every_page else "escalated pages"
            print(f"\nGuard on {where}, {part} sites ({len(mine)} pages)\n")
            print("| ratio | wcxb-dev macro | product | legacy macro | pages changed |")
            print("|---|---|---|---|---|")
            for ratio in RATIOS:
                print(_line(mine, ratio, every_page))


if __name__ == "__main__":
    main()
