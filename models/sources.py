"""Judge a recipe on sources it did not train on (issue 34): folds over sites and publishers,
and leave-one-source-out runs.

    python -m scrapy_maintext.models.sources run --data ../shared/data \\
        --recipe clean,news --out DIR                   # 5 folds + leave-one-source-out
    python -m scrapy_maintext.models.sources report --out DIR

Folds. Every wcxb-dev page and every fundus-dev page falls in one of ``--folds`` folds by a
hash of its registered domain (``dataset.domain_fold``: a publisher's pages stay together).
For each fold, a model of the recipe trains on the other folds' pages of the sets the recipe
trains on, plus Readability's training sites and the snippet set's training half (the
recipes' clean sources); its decoding is tuned and its epoch chosen on the validation sites
of those pages; the furniture lines (``models.phrases``) are learnt from the same training
pages. It is scored on the fold's wcxb-dev and fundus-dev pages, and on every page of the
evaluation-only sources: Readability's held-out sites, the snippet set's held-out half, the
2007-2013 sets (CleanEval, Dragnet, L3S-GN1); there each page's score is averaged over the
folds.

Leave one source out (``loso-<set>``): the recipe trained on every other source (every
wcxb-dev fold), scored on all pages of the set left out (fundus-dev, Readability).

Systems per page: the recipe's ``neural`` and ``auto`` output under the text convention
(``extraction.convention``, as ``extract()`` applies it), ``auto`` without it, trafilatura's
text as it comes (product defaults), and the shipped v5 and v4.1 (``auto``, with and without
the convention). Scores: token P/R/F1 against the convention's ground truth, and WCXB's own
metric (word F1) against the set's own text. ``models.sources_report`` pairs them page by
page with a bootstrap interval over sites (publishers).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scrapy_maintext.extraction.phrases import Phrases
from scrapy_maintext.models.dataset import (
    Example,
    follow_convention,
    is_validation_site,
    load_examples,
)
from scrapy_maintext.models.dataset import domain_fold as fold_of
from scrapy_maintext.models.page_inputs import attach_slot_stacks, selection_size
from scrapy_maintext.models.phrases import SEED_LEADS, learn, seed_phrases
from scrapy_maintext.models.sources_pages import (
    SECOND_OPINIONS,
    Shipped,
    Typing,
    decisions,
    score,
)
from scrapy_maintext.models.train import SEED, Recipe, fit, select_stack
from scrapy_maintext.models.tune import block_lengths, predict_page, tune_decoding
from scrapy_maintext.neural.decision import DecodeParams, decide

logger = logging.getLogger(__name__)

#: Sets folded by registered domain (trained on outside the fold, scored inside it).
FOLDED = ("wcxb-dev", "fundus-dev")
#: Evaluation-only sets, scored on their held-out sites by every fold's model.
EVALUATED = ("cleaneval", "dragnet", "l3s-gn1", "readability")
#: Sets a leave-one-source-out run may leave out.
LEFT_OUT = ("fundus-dev", "readability")
SNIPPET_WEIGHT = 10.0
#: ``Recipe.stack`` of a recipe whose blocks read ``models.page_inputs``' columns.
PAGE_STACK = "page"


@dataclass(frozen=True)
class SourceRecipe:
    """What a recipe trains on, beyond wcxb-dev, Readability's training sites and the
    snippet set's training half (the clean sources every recipe here has)."""

    name: str
    #: fundus-dev's pages of the other folds, at this page weight (0: not trained on).
    fundus_weight: float = 0.0
    #: Blocks read ``models.page_inputs``' columns (from ``--page-inputs``) of this
    #: selection: "all" (the page's type probabilities and the block's repeated-structure
    #: columns), "types" or "groups" alone (``page_inputs.SELECTIONS``); "": none.
    page_inputs: str = ""


RECIPES = {
    "clean": SourceRecipe("clean"),
    "news": SourceRecipe("news", fundus_weight=3.0),
    "news1": SourceRecipe("news1", fundus_weight=1.0),
    "typed": SourceRecipe("typed", fundus_weight=3.0, page_inputs="all"),
    "typeonly": SourceRecipe("typeonly", fundus_weight=3.0, page_inputs="types"),
    "listonly": SourceRecipe("listonly", fundus_weight=3.0, page_inputs="groups"),
}


def training_pages(
    examples: list[Example], recipe: SourceRecipe, fold: int | None, folds: int, without: str
) -> list[Example]:
    """The pages ``recipe`` trains and validates on for ``fold`` (None: every fold, for a
    leave-one-source-out run without ``without``)."""
    pages = []
    for e in examples:
        if e.dataset == without:
            continue
        if e.dataset == "wcxb-dev" or (e.dataset == "fundus-dev" and recipe.fundus_weight):
            if fold is None or fold_of(e.site, folds) != fold:
                pages.append(e)
        elif e.dataset == "readability" and e.split == "train":
            pages.append(e)
    return pages


def scored_pages(
    examples: list[Example], fold: int | None, folds: int, without: str
) -> list[Example]:
    if fold is None:
        return [e for e in examples if e.dataset == without]
    inside = [e for e in examples if e.dataset in FOLDED and fold_of(e.site, folds) == fold]
    return inside + [e for e in examples if e.dataset in EVALUATED and e.split == "test"]


def run_one(
    examples: list[Example],
    recipe: SourceRecipe,
    fold: int | None,
    args: argparse.Namespace,
    shipped: list[Shipped],
    snippets: list[Example],
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    without = args.without if fold is None else ""
    pool = training_pages(examples, recipe, fold, args.folds, without)
    val = [e for e in pool if is_validation_site(e.site)]
    train = [e for e in pool if not is_validation_site(e.site)]
    phrases = learn(train + val)
    train = train + snippets
    settings = Recipe(stack="", modern_weight=1.0, epochs=args.epochs, seed=args.seed)
    if recipe.page_inputs:
        size = selection_size(recipe.page_inputs)
        settings = replace(settings, stack=PAGE_STACK, stack_size=size)
    settings = replace(settings, snippet_weight=SNIPPET_WEIGHT)
    settings.set_weights = (("fundus-dev", recipe.fundus_weight),)
    t0 = time.time()
    model = fit(train, val, settings)
    seconds = time.time() - t0
    decoding = tune_decoding(model, val)
    params = DecodeParams(*(decoding[k] for k in DecodeParams.__dataclass_fields__))
    pages, probs = [], {}
    for ex in scored_pages(examples, fold, args.folds, without):
        probs[ex.id] = predict_page(model, ex)
        decision = decide(probs[ex.id], block_lengths(ex), params)
        pages.append(score(ex, decisions(ex, (decision.keep, decision.fallback), shipped), phrases))
    result = {
        "recipe": recipe.name,
        "fold": fold,
        "without": without,
        "folds": args.folds,
        "seed": args.seed,
        "epochs": args.epochs,
        "train_pages": len(train),
        "train_seconds": round(seconds),
        "decoding": decoding,
        "phrases": sorted(phrases.lines),
        "pages": pages,
    }
    return result, probs


def save_probs(path: Path, probs: dict[str, np.ndarray]) -> None:
    """A run's block probabilities per page (``models.typed_decoding`` decodes them again
    without training): the ids, every page's probabilities end to end, and the offsets."""
    ids = sorted(probs)
    ends = np.cumsum([len(probs[i]) for i in ids])
    flat = np.concatenate([probs[i] for i in ids]) if ids else np.zeros(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, ids=np.array(ids), ends=ends, probs=flat.astype(np.float32))


def load_probs(path: Path) -> dict[str, np.ndarray]:
    z = np.load(path, allow_pickle=False)
    starts = np.concatenate([[0], z["ends"][:-1]]).astype(int)
    return {str(i): z["probs"][a:b] for i, a, b in zip(z["ids"], starts, z["ends"], strict=True)}


def convention_examples(
    data: str, wanted: Callable[[Example], bool] | None = None
) -> list[Example]:
    """The cached pages (those ``wanted``) with a view, their ground truths under the
    convention, with the models' own inputs (no stacking columns)."""
    examples = [
        e for e in load_examples(data) if e.view is not None and (wanted is None or wanted(e))
    ]
    for e in examples:
        follow_convention(e)
    select_stack(examples, "")
    return examples


def run_phrases(run: dict[str, Any]) -> Phrases:
    """The furniture a run's pages are scored with: the lines it learnt, today's seed."""
    learnt = Phrases.from_json({"lines": run["phrases"], "leads": list(SEED_LEADS)})
    return Phrases(learnt.lines | seed_phrases().lines, learnt.leads)


def run(args: argparse.Namespace) -> None:
    from scrapy_maintext.models.snippets import snippet_examples

    examples = convention_examples(args.data)
    shipped = [Shipped(v) for v in args.shipped.split(",") if v]
    if any(m.needs_slots for m in shipped):
        attach_slot_stacks(examples, args.data)
    snippets = snippet_examples(args.data)
    inputs = None
    if any(RECIPES[name].page_inputs for name in args.recipe.split(",")):
        from scrapy_maintext.models.page_inputs import PageInputs

        inputs = PageInputs(args.page_inputs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs: list[int | None] = [None]
    if not args.without:
        runs = [int(f) for f in args.only.split(",")] if args.only else [*range(args.folds)]
    for fold in runs:
        for name in args.recipe.split(","):
            tag = f"fold{fold}" if fold is not None else f"loso-{args.without}"
            path = out / f"{name}-{tag}-seed{args.seed}.json"
            if path.exists():
                logger.info("kept %s", path)
                continue
            recipe = RECIPES[name]
            for pages in (examples, snippets):
                if inputs is not None and recipe.page_inputs:
                    inputs.attach(pages, recipe.page_inputs)
                else:
                    select_stack(pages, "")
            torch.manual_seed(args.seed)
            np.random.seed(args.seed)
            result, probs = run_one(examples, recipe, fold, args, shipped, snippets)
            save_probs(out / "probs" / path.with_suffix(".npz").name, probs)
            path.write_text(json.dumps(result), encoding="utf-8")
            logger.info("wrote %s (%d s of training)", path, result["train_seconds"])


def rescore(args: argparse.Namespace) -> None:
    """Every run's pages scored again from their saved decisions, with the convention's
    code as it is now (the run's learnt lines, today's seed). With ``--page-types``, the
    scored system reads the predicted types (``Typing``); with ``--as NAME``, the runs are
    written beside the originals as recipe NAME (``report`` pairs the two)."""
    examples = {e.id: e for e in convention_examples(args.data)}
    types = json.loads(Path(args.page_types).read_text("utf-8")) if args.page_types else {}
    routed = frozenset(t for t in args.route.split(",") if t)
    typing = Typing(types, args.threshold, args.second_opinion, routed)
    runs = sorted(Path(args.out).glob("*.json"))
    if args.name:
        own = re.compile(rf"{re.escape(args.base)}-(?:fold\d|loso-)")
        runs = [p for p in runs if own.match(p.name)]
    if args.only:
        runs = [p for p in runs if any(f"-fold{f}-" in p.name for f in args.only.split(","))]
    wanted = {p["id"] for path in runs for p in json.loads(path.read_text("utf-8"))["pages"]}
    others = other_texts(args, wanted)
    for path in runs:
        run = json.loads(path.read_text("utf-8"))
        phrases = run_phrases(run)
        SECOND_OPINIONS.clear()
        run["pages"] = [
            score(
                examples[p["id"]],
                {k: (v[0], v[1]) for k, v in p["decisions"].items()},
                phrases,
                typing,
                others.get(p["id"]),
            )
            for p in run["pages"]
        ]
        run["second_opinions"] = len(SECOND_OPINIONS)
        if args.name:
            run["recipe"] = args.name
            path = path.with_name(path.name.replace(args.base, args.name, 1))
        path.write_text(json.dumps(run), encoding="utf-8")
        logger.info("rescored %s (%d second opinions)", path, len(SECOND_OPINIONS))


def other_texts(args: argparse.Namespace, wanted: set[str]) -> dict[str, dict[str, str]]:
    """Per page of ``wanted``, the texts of the other systems the options ask for
    (readability-lxml; rs-trafilatura, in its own Python, skipped when there is none)."""
    others: dict[str, dict[str, str]] = defaultdict(dict)
    if args.readability:
        from scrapy_maintext.models.systems import readability_texts

        # Cached beside the runs: every rescore of the same pages reads the same texts.
        cache = Path(args.out) / "readability-lxml" / "texts.json"
        known = json.loads(cache.read_text("utf-8")) if cache.exists() else {}
        if wanted - set(known):
            known.update(readability_texts(args.data, wanted - set(known)))
            cache.parent.mkdir(parents=True, exist_ok=True)
            part = cache.with_suffix(f".{os.getpid()}.part")
            part.write_text(json.dumps(known), encoding="utf-8")
            part.replace(cache)  # whole or not at all: rescores of other folds read it
        for i in wanted:
            others[i]["readability-lxml"] = known[i]
    if args.rs_trafilatura:
        from scrapy_maintext.models.rs_trafilatura import NAME, python_of, rs_texts

        cache = Path(args.rs_cache or Path(args.out) / "rs-trafilatura" / "texts.json")
        found = rs_texts(args.data, wanted, python_of(args.rs_python), cache)
        for i, text in (found or {}).items():
            others[i][NAME] = text
    return dict(others)


def other_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--readability", action="store_true", help="score readability-lxml too")
    parser.add_argument(
        "--rs-trafilatura", action="store_true", help="score rs-trafilatura too (trafipy)"
    )
    parser.add_argument(
        "--rs-python", default="", help="a Python with trafipy (default $MAINTEXT_TRAFIPY_PYTHON)"
    )
    parser.add_argument(
        "--rs-cache", default="", help="its texts' cache (default OUT/rs-trafilatura/texts.json)"
    )


def frozen(args: argparse.Namespace) -> None:
    """The shipped models as they are (the first one's output is ``auto``), with the
    package's furniture lines, on the held-out sites of the evaluation-only sets (CleanEval,
    Dragnet, L3S-GN1, Readability), which no shipped model trained on: ``frozen-seed0.json``.
    (The shipped models train on every fundus-dev and wcxb-dev page: the folds measure those.)"""
    from scrapy_maintext.extraction.phrases import shipped_phrases

    examples = convention_examples(
        args.data, lambda e: e.dataset in EVALUATED and e.split == "test"
    )
    first, *others = [Shipped(v) for v in args.shipped.split(",") if v]
    if any(m.needs_slots for m in (first, *others)):
        attach_slot_stacks(examples, args.data)
    phrases = shipped_phrases()
    texts = other_texts(args, {ex.id for ex in examples})
    pages = [
        score(ex, decisions(ex, first.decide(ex), others), phrases, None, texts.get(ex.id))
        for ex in examples
    ]
    run = {"recipe": f"frozen {first.name}", "fold": None, "without": "", "pages": pages}
    run["phrases"] = sorted(phrases.lines)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "frozen-seed0.json").write_text(json.dumps(run), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    from scrapy_maintext.models.sources_report import report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="train and score recipes on every fold")
    go.add_argument("--data", default="../shared/data")
    go.add_argument("--recipe", required=True, help=f"comma list of {sorted(RECIPES)}")
    go.add_argument("--out", required=True)
    go.add_argument("--folds", type=int, default=5)
    go.add_argument("--only", default="", help="comma list of folds (default: all)")
    go.add_argument(
        "--without", default="", help=f"instead of the folds, the run without one of {LEFT_OUT}"
    )
    go.add_argument("--epochs", type=int, default=4)
    go.add_argument("--threads", type=int, default=1)
    go.add_argument("--seed", type=int, default=SEED)
    go.add_argument("--shipped", default="v4.1", help="model folders scored beside")
    go.add_argument("--page-inputs", default="", help="models.page_inputs' file (recipe typed)")
    still = sub.add_parser("frozen", help="score the shipped models as they are")
    still.add_argument("--data", default="../shared/data")
    still.add_argument("--out", required=True)
    still.add_argument("--shipped", default="v7,v6", help="model folders; the first is ours")
    other_options(still)
    again = sub.add_parser("rescore", help="score the runs' decisions with today's convention")
    again.add_argument("--data", default="../shared/data")
    again.add_argument("--out", required=True)
    again.add_argument("--page-types", default="", help="models.page_type folds' predictions")
    again.add_argument("--threshold", type=float, default=0.0)
    again.add_argument("--second-opinion", action="store_true")
    again.add_argument("--base", default="news", help="the recipe whose runs are rescored")
    again.add_argument("--as", dest="name", default="", help="write them as this recipe")
    other_options(again)
    again.add_argument("--only", default="", help="comma list of folds (default: every run)")
    again.add_argument("--route", default="", help="predicted types auto gives trafilatura")
    show = sub.add_parser("report", help="tables from the runs' JSON files")
    show.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args.command == "run":
        if set(args.recipe.split(",")) - set(RECIPES):
            parser.error(f"--recipe: a comma list of {sorted(RECIPES)}")
        if any(RECIPES[n].page_inputs for n in args.recipe.split(",")) and not args.page_inputs:
            parser.error(f"--recipe {args.recipe} needs --page-inputs")
        if args.without and args.without not in LEFT_OUT:
            parser.error(f"--without: one of {LEFT_OUT}")
        torch.set_num_threads(args.threads)
        run(args)
    elif args.command == "frozen":
        frozen(args)
    elif args.command == "rescore":
        rescore(args)
    else:
        print(report(Path(args.out)))


if __name__ == "__main__":
    main()
