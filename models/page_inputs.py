"""Page-level inputs of a type-aware block model (issue 45, item 2: v7 tried).

    python -m scrapy_maintext.models.page_inputs build --data ../shared/data --out DIR
    python -m scrapy_maintext.models.sources run --recipe typed \\
        --page-inputs DIR/page-inputs.npz ...

Every block of a page gets, beside its own inputs, columns that describe the page or the
block's place in a repeated structure:

* the page-type model's probability of each type (``extraction.page_type.PAGE_TYPES``), out
  of fold: each wcxb-dev and fundus-dev page predicted by the model trained on the other
  folds (``models.page_type``' folds, by registered domain), every other page (the
  evaluation-only sets, Readability's training sites, the snippet set) by the model of all
  labelled pages, as at run time;
* what rs-trafilatura's listing profile looks for, as inputs rather than a rule
  (``neural.groups.slot_columns``, which v7 computes at run time): the block's *slot* (the
  blocks sharing its element path) has 3 rows or more; the slot's size (log); its share of
  the page's characters; its rows' mean words (15 or more: items with text of their own).

``build`` writes ``DIR/page-inputs.npz`` (ids, per page the type probabilities and its
blocks' group columns end to end) and ``DIR/page-types.json`` (id -> [type, probability], as
``models.page_type folds`` writes it, for ``models.sources rescore --page-types``).
"""

from __future__ import annotations

import argparse
import json
import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from lxml import html as lxml_html
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.extraction.page_type import PAGE_TYPES, page_features
from scrapy_maintext.models.dataset import Example, Page, domain_fold, iter_pages
from scrapy_maintext.models.page_type import FOLDED, OTHERS, Table, fit_chosen, labels_of
from scrapy_maintext.models.systems import parse_html
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.features import PageFeatures, featurize
from scrapy_maintext.neural.groups import SLOT_COLUMNS, SlotInputs, path_signatures, slot_columns
from scrapy_maintext.neural.segment import RawBlock, segment

logger = logging.getLogger(__name__)

SNIPPETS = "trafilatura"
GROUP_COLUMNS = SLOT_COLUMNS
PAGE_COLUMNS = len(PAGE_TYPES)
#: Columns appended to every block's dense inputs.
SIZE = PAGE_COLUMNS + GROUP_COLUMNS
#: Which of them a recipe reads: every column, the type probabilities alone, or the
#: repeated-structure (listing-profile) columns alone.
SELECTIONS = {
    "all": slice(0, SIZE),
    "types": slice(0, PAGE_COLUMNS),
    "groups": slice(PAGE_COLUMNS, SIZE),
}


def selection_size(which: str) -> int:
    """How many columns the selection ``which`` appends."""
    part = SELECTIONS[which]
    return int(part.stop - part.start)


def group_columns(raw: Sequence[RawBlock]) -> np.ndarray:
    """The repeated-structure columns of a page's blocks, as v7 reads them at run time
    (``neural.groups.slot_columns`` with the default ``SlotInputs``)."""
    return slot_columns(path_signatures(raw), [b.text for b in raw], SlotInputs())


def page_blocks(page: Page) -> list[RawBlock] | None:
    """``page``'s blocks as its training example segmented them (``dataset.build_example``;
    the snippet set: ``models.snippets``); None when it cannot be parsed."""
    try:
        tree = (
            parse_html(page.html) if page.dataset == SNIPPETS else lxml_html.fromstring(page.html)
        )
        return segment(tree, False)
    except Exception:  # unparsable: no example was built either
        return None


def slot_inputs(data: str, sets: Sequence[str]) -> dict[str, np.ndarray]:
    """Every page's blocks' repeated-structure columns, by page id, for the sets ``sets``."""
    out = {}
    for page in iter_pages(data, tuple(sets)):
        raw = page_blocks(page)
        if raw is not None:
            out[page.id] = group_columns(raw)
    return out


#: ``Example.stacks`` key of the page's slot columns (``attach_slot_stacks``).
SLOT_STACK = "slots"


def attach_slot_stacks(examples: Sequence[Example], data: str) -> int:
    """Every example's slot columns under ``stacks[SLOT_STACK]``, computed from its page as
    at run time; zeros, as in the site-fold runs, where its blocks differ in number from the
    example's. Returns how many pages got zeros."""
    columns = slot_inputs(data, sorted({e.dataset for e in examples}))
    missing = 0
    for ex in examples:
        found = columns.get(ex.id)
        if found is None or len(found) != len(ex.features):
            found, missing = np.zeros((len(ex.features), SLOT_COLUMNS), np.float32), missing + 1
        ex.stacks[SLOT_STACK] = found
    logger.info("slot columns of %d pages (%d without)", len(examples), missing)
    return missing


def shipped_inputs(extractor: NeuralExtractor, ex: Example) -> PageFeatures:
    """``ex``'s inputs as the shipped ``extractor`` reads them: its slot columns
    (``attach_slot_stacks`` first), its trafilatura reference's columns, or none."""
    f = ex.features
    if extractor.slots is not None:
        stack: np.ndarray | None = ex.stacks[SLOT_STACK]
    else:
        stack = ex.stacks[extractor.reference] if extractor.needs_reference else None
    return PageFeatures(f.dense, f.struct_ids, f.word_ids, stack)


def _page_rows(data: str) -> tuple[Table, dict[str, np.ndarray]]:
    """Every page's type features (``Table``, as ``models.page_type`` builds it, plus the
    snippet set, unlabelled) and its blocks' group columns, each page parsed as its
    training example was (``dataset.build_example``; the snippet set: ``models.snippets``)."""
    rows: list[np.ndarray] = []
    ids, sets, sites, labels = [], [], [], []
    groups: dict[str, np.ndarray] = {}
    for page in iter_pages(data, FOLDED + OTHERS + (SNIPPETS,)):
        tree = parse_page(page.html, ExtractOptions()).tree
        if tree is None:
            continue
        rows.append(page_features(tree, page.url))
        ids.append(page.id)
        sets.append(page.dataset)
        sites.append(page.site)
        labels.append(page.page_type or ("article" if page.dataset == "fundus-dev" else ""))
        raw = page_blocks(page)
        if raw is not None:
            groups[page.id] = group_columns(raw)
    return Table(ids, sets, sites, labels, np.vstack(rows)), groups


def type_probabilities(table: Table, folds: int) -> np.ndarray:
    """Out of fold as ``models.page_type folds`` predicts (the same models, the same
    pages), and the pages of no fold by the model of every labelled page."""
    labels = labels_of(table)
    labelled = np.array([lab in PAGE_TYPES for lab in labels])
    y = np.array([PAGE_TYPES.index(lab) if lab in PAGE_TYPES else -1 for lab in labels])
    folded = np.isin(np.array(table.sets), FOLDED)
    fold = np.array([domain_fold(s, folds) for s in table.sites])
    probs = np.zeros((len(table.ids), len(PAGE_TYPES)))
    for f in range(folds):
        train = labelled & (fold != f)
        held = labelled & folded & (fold == f)
        sites = [s for s, t in zip(table.sites, train, strict=True) if t]
        model, _ = fit_chosen(table.x[train], y[train], sites)
        probs[held] = model.probabilities(table.x[held])
    every = list(np.array(table.sites)[labelled])
    full, _ = fit_chosen(table.x[labelled], y[labelled], every)
    probs[~folded] = full.probabilities(table.x[~folded])
    return probs


def build(args: argparse.Namespace) -> None:
    table, groups = _page_rows(args.data)
    probs = type_probabilities(table, args.folds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    known = [i for i, pid in enumerate(table.ids) if pid in groups]
    ids = [table.ids[i] for i in known]
    ends = np.cumsum([len(groups[pid]) for pid in ids])
    flat = np.vstack([groups[pid] for pid in ids])
    np.savez_compressed(
        out / "page-inputs.npz",
        ids=np.array(ids),
        types=probs[known].astype(np.float32),
        ends=ends,
        groups=flat,
    )
    predicted = {
        pid: [PAGE_TYPES[int(np.argmax(p))], round(float(p.max()), 3)]
        for pid, p, s in zip(table.ids, probs, table.sets, strict=True)
        if s != SNIPPETS
    }
    (out / "page-types.json").write_text(json.dumps(predicted), encoding="utf-8")
    logger.info("page inputs of %d pages in %s", len(ids), out)


class PageInputs:
    """``build``'s file: the columns appended to a page's blocks."""

    def __init__(self, path: str | Path) -> None:
        with np.load(path, allow_pickle=False) as z:  # each read of z[key] inflates it again
            ids, types, ends, groups = (z[k] for k in ("ids", "types", "ends", "groups"))
        starts = np.concatenate([[0], ends[:-1]]).astype(int)
        self.types = {str(i): t for i, t in zip(ids, types, strict=True)}
        self.groups = {str(i): groups[a:b] for i, a, b in zip(ids, starts, ends, strict=True)}

    def columns(self, ex: Example) -> tuple[np.ndarray, str]:
        """``ex``'s columns, and what was missing ("": nothing; "type"; "groups": its
        blocks differ in number from the example's)."""
        n = len(ex.features)
        types = self.types.get(ex.id)
        groups = self.groups.get(ex.id)
        missing = ""
        if groups is None or len(groups) != n:
            groups, missing = np.zeros((n, GROUP_COLUMNS), dtype=np.float32), "groups"
        if types is None:
            types, missing = np.zeros(PAGE_COLUMNS, dtype=np.float32), "type"
        page = np.broadcast_to(types.astype(np.float32), (n, PAGE_COLUMNS))
        return np.hstack([page, groups]).astype(np.float32), missing

    def attach(self, examples: Sequence[Example], which: str = "all") -> None:
        """Point every example's ``features.stack`` at its columns of the selection
        ``which`` (``SELECTIONS``)."""
        part = SELECTIONS[which]
        missing: Counter[str] = Counter()
        for ex in examples:
            columns, lack = self.columns(ex)
            ex.features.stack = np.ascontiguousarray(columns[:, part])
            missing[lack or "none"] += 1
        logger.info("page inputs (%s) attached: %s", which, dict(missing))


def cost(args: argparse.Namespace) -> None:
    """CPU of the group columns beside the segmenter's walk and the block features, page by
    page in turn on the same parsed trees (ratios: the machine is shared)."""
    import time

    clock = time.process_time
    spent = {"segment+featurize": 0.0, "groups": 0.0}
    pages = [p for p in iter_pages(args.data, ("wcxb-dev",))][: args.limit]
    for _ in range(args.rounds):
        for page in pages:
            tree = lxml_html.fromstring(page.html)
            t0 = clock()
            raw = segment(tree, False)
            featurize(raw)
            t1 = clock()
            group_columns(raw)
            spent["segment+featurize"] += t1 - t0
            spent["groups"] += clock() - t1
    base = spent["segment+featurize"]
    print(
        f"{len(pages)} wcxb-dev pages x {args.rounds}: segment+featurize {base:.2f} s CPU, "
        f"group columns {spent['groups']:.2f} s ({spent['groups'] / base:.2f}x)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("build", help="type probabilities out of fold and group columns")
    make.add_argument("--data", default="../shared/data")
    make.add_argument("--out", required=True)
    make.add_argument("--folds", type=int, default=5)
    price = sub.add_parser("cost", help="CPU of the group columns against the features'")
    price.add_argument("--data", default="../shared/data")
    price.add_argument("--limit", type=int, default=200)
    price.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    {"build": build, "cost": cost}[args.command](args)


if __name__ == "__main__":
    main()
