"""Cross-validation over wcxb-dev SITE folds: the protocol that chooses between recipes.

    python -m scrapy_maintext.models.folds run --data ../shared/data --recipe v4 --out DIR
    python -m scrapy_maintext.models.folds run --data ../shared/data --recipe v5 --out DIR
    python -m scrapy_maintext.models.folds report --out DIR

On a machine without the run-time dependencies (trafilatura, Scrapy), ``pack --out FILE``
writes the prepared pages the folds use (``dataset.save_pack``, tree ids included, and the
snippet pages beside) and ``run --pack FILE`` trains and scores from them alone.

Protocol (issues 23 and 30). Every wcxb-dev site falls in one of ``--folds`` (5) folds by a hash
of its registered domain (``fold_of``: ``dataset.domain_fold``; before issue 30, of its
hostname, in 3 folds), whatever its train/test split, so every labelled modern site is held out
exactly once and a site's subdomains stay together. For each fold, a model of each recipe is
trained on the wcxb-dev pages of the other folds plus the 2007-2013 sets' training sites (a
``--legacy-share`` of them, by site hash, to fit the CPU budget); its decoding is tuned and its
epoch chosen on the validation sites of those training pages (``dataset.is_validation_site``);
then it is scored on the fold's pages, neural output alone and ``auto`` (trafilatura's text
where the decoding falls back), beside trafilatura's defaults on the same pages. Every fold's
model is also scored on the held-out sites of the 2007-2013 sets (a regression check) and on the
held-out half of the trafilatura snippet set. Pages whose ground truth the static HTML cannot
reproduce (``gt_coverage`` < 0.8) are neither trained on nor scored (``dataset.usable_for_f1``).

``run`` writes ``DIR/<recipe>-fold<k>-seed<s>.json`` per fold (per-page scores; ``--recipe
clean,v4`` runs both, fold by fold, each from the same seed; files already there are kept);
``report`` prints the tables: per recipe, token F1 per page type as the mean over folds and
seeds with the spread (min-max over folds, each fold's figure the mean over its seeds), macro
over types, precision and recall of article pages, the snippet accuracy and the legacy macro;
WCXB's own metric (``models.wcxb``) per page type; and the paired per-page differences with
95% site-bootstrap intervals (``models.paired``): every recipe against v4, and against
trafilatura on the same pages. Choices that sit on top of a frozen model (decoding, the
arbiter) go through ``models.protocol`` instead, on the same folds.

Recipe ``clean`` (issue 30) is v4's with the training data whose licence allows commercial
use: wcxb-dev (CC-BY-4.0) and Mozilla Readability's test pages (Apache-2.0), no Dragnet
(AGPL-3.0), L3S-GN1 or CleanEval (research use); all four stay in the evaluation.
"""

from __future__ import annotations

import argparse
import json
import logging
import pickle
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from scrapy_maintext.models.dataset import (
    Example,
    is_validation_site,
    load_examples,
    load_pack,
    open_pack,
    pack_features,
    save_pack,
    unpack_features,
)
from scrapy_maintext.models.dataset import domain_fold as fold_of
from scrapy_maintext.models.metrics import prf, snippet_score
from scrapy_maintext.models.seqtrain import fit_seq
from scrapy_maintext.models.train import SEED, Recipe, fit, select_stack
from scrapy_maintext.models.treenet import fit_tree
from scrapy_maintext.models.tune import block_lengths, predict_page, tune_decoding
from scrapy_maintext.models.wcxb import PageTexts, load_texts
from scrapy_maintext.models.wcxb import page_scores as wcxb_scores
from scrapy_maintext.neural.decision import DecodeParams, decide

if TYPE_CHECKING:
    from scrapy_maintext.models.snippets import SnippetPage

logger = logging.getLogger(__name__)

MODERN = "wcxb-dev"
#: v4: v4's first-model net (BlockNet), one member, no snippet labels; v5: SeqNet (BiGRU and
#: page-type head); v4t: v4's net plus the page-type head only; tree: v4's net plus tree
#: message passing (``models.treenet``); treeonly: tree layers in place of v4's attention;
#: clean: v4's net and schedule on the commercially usable sets only (issue 30); v4snip and
#: cleansnip: v4 and clean plus the snippet weak labels the shipped models train on.
RECIPES = ("v4", "v5", "v4t", "tree", "treeonly", "clean", "v4snip", "cleansnip")
#: Loss weight of the snippet labels in the *snip recipes (the shipped v4.1's and v5's).
SNIPPET_WEIGHT = 10.0
#: The 2007-2013 sets a recipe trains on (default: all four). "clean" leaves out Dragnet
#: (AGPL-3.0), L3S-GN1 (research use only) and CleanEval (research use): they stay in the
#: evaluation, as every recipe's regression check.
LEGACY_TRAIN = {"clean": frozenset({"readability"}), "cleansnip": frozenset({"readability"})}


def in_legacy_share(site: str, percent: int) -> bool:
    return zlib.crc32(b"legacy:" + site.encode()) % 100 < percent


@dataclass
class FoldSets:
    train: list[Example]
    val: list[Example]
    test: list[Example]


def fold_sets(
    examples: list[Example],
    fold: int,
    folds: int,
    legacy_percent: int,
    legacy: frozenset[str] | None = None,
) -> FoldSets:
    """The fold's training, validation and test pages; ``legacy``: the 2007-2013 sets
    trained on (default: all)."""
    modern = [e for e in examples if e.dataset == MODERN]
    test = [e for e in modern if fold_of(e.site, folds) == fold]
    pool = [e for e in modern if fold_of(e.site, folds) != fold]
    pool += [
        e
        for e in examples
        if e.dataset != MODERN
        and e.split == "train"
        and in_legacy_share(e.site, legacy_percent)
        and (legacy is None or e.dataset in legacy)
    ]
    val = [e for e in pool if is_validation_site(e.site)]
    train = [e for e in pool if not is_validation_site(e.site)]
    return FoldSets(train, val, test)


def train_recipe(
    name: str, sets: FoldSets, epochs: int, seed: int = SEED, device: str = "cpu"
) -> torch.nn.Module:
    recipe = Recipe(stack="", modern_weight=1.0, epochs=epochs, device=device, seed=seed)
    if name in ("v4", "clean", "v4snip", "cleansnip"):
        # The *snip recipes' training pages include the snippet set's (``run_fold``).
        recipe.snippet_weight = SNIPPET_WEIGHT if name.endswith("snip") else 0.0
        return fit(sets.train, sets.val, recipe)
    if name in ("tree", "treeonly"):
        return fit_tree(sets.train, sets.val, recipe, window=name == "tree")
    return fit_seq(sets.train, sets.val, recipe, recurrent=name == "v5")


def score_page(
    model: torch.nn.Module, params: DecodeParams, ex: Example, texts: PageTexts | None = None
) -> dict[str, Any]:
    """Token P/R/F1 of the neural output, ``auto`` and trafilatura on ``ex``; with the page's
    raw ``texts`` (wcxb-dev pages, ``models.wcxb``), WCXB's word metric of the same three."""
    probs = predict_page(model, ex)
    decision = decide(probs, block_lengths(ex), params)
    kept = ex.kept_tokens(decision.keep)
    neural = prf(kept, ex.gold_tokens)
    traf = prf(ex.fallback_tokens, ex.gold_tokens)
    auto = traf if decision.fallback else neural
    page: dict[str, Any] = {
        "id": ex.id,
        "site": ex.site,
        "group": f"{MODERN}/{ex.page_type}" if ex.dataset == MODERN else ex.dataset,
        "neural": neural,
        "auto": auto,
        "trafilatura": traf,
    }
    if texts is not None and len(texts.blocks) == len(ex.block_tokens):
        page["wcxb"] = wcxb_scores(texts, [bool(k) for k in decision.keep], decision.fallback)
    return page


def snippet_accuracy(
    model: torch.nn.Module, params: DecodeParams, pages: list[SnippetPage]
) -> float:
    correct = total = 0
    for page in pages:
        probs = predict_page(model, page.example)
        decision = decide(probs, block_lengths(page.example), params)
        text = " ".join(b for b, k in zip(page.texts, decision.keep, strict=True) if k)
        c, t = snippet_score(text, page.with_, page.without)
        correct, total = correct + c, total + t
    return correct / max(total, 1)


def used_by_folds(ex: Example, legacy_percent: int) -> bool:
    """Pages some fold trains or scores on: wcxb-dev, the 2007-2013 held-out sites and the
    training sites in the legacy share."""
    return ex.dataset == MODERN or ex.split == "test" or in_legacy_share(ex.site, legacy_percent)


def write_pack(data: str, path: Path, legacy_percent: int) -> None:
    """The pages the folds use (``dataset.save_pack``, xz) at ``path`` and the held-out
    snippet pages at ``path.snippets``, for ``run --pack`` on a machine without trafilatura."""
    from scrapy_maintext.models.snippets import snippet_test_pages

    examples = [e for e in load_examples(data) if used_by_folds(e, legacy_percent)]
    save_pack(examples, path, xz=True)
    snippets = [
        {
            "id": p.example.id,
            "site": p.example.site,
            **pack_features(p.example.features),
            "texts": p.texts,
            "with": p.with_,
            "without": p.without,
        }
        for p in snippet_test_pages(data)
    ]
    with open_pack(f"{path}.snippets", "wb", xz=True) as fh:
        pickle.dump(snippets, fh, protocol=pickle.HIGHEST_PROTOCOL)


def _load(args: argparse.Namespace) -> tuple[list[Example], list[SnippetPage]]:
    from scrapy_maintext.models.snippets import SNIPPETS, SnippetPage, snippet_test_pages

    if not args.pack:
        return load_examples(args.data), snippet_test_pages(args.data)
    with open_pack(f"{args.pack}.snippets", "rb") as fh:
        packed = pickle.load(fh)
    snippets = []
    for p in packed:
        n = len(p["texts"])
        feats = unpack_features(p)
        ex = Example(p["id"], SNIPPETS, "test", p["site"], feats, np.zeros(n), [[]] * n, [])
        snippets.append(SnippetPage(ex, p["texts"], p["with"], p["without"]))
    return load_pack(Path(args.pack)), snippets


def _sample(items: list[Any], n: int) -> list[Any]:
    """At most ``n`` items spread over the list (smoke runs); all with ``n`` = 0."""
    return items if n <= 0 else items[:: max(1, len(items) // n)][:n]


def run(args: argparse.Namespace) -> None:
    examples, snippets = _load(args)
    select_stack(examples, "")
    snippets = _sample(snippets, args.sample)
    # WCXB's metric needs the raw texts, which a pack does not carry.
    texts = {} if args.pack else load_texts(args.data)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for fold in [int(f) for f in args.only.split(",")] if args.only else range(args.folds):
        for recipe in args.recipe.split(","):
            path = out / f"{recipe}-fold{fold}-seed{args.seed}.json"
            if path.exists():  # a rerun resumes where the last one stopped
                logger.info("kept %s", path)
                continue
            # Every (recipe, fold) starts from the seed, as a run of its own would.
            torch.manual_seed(args.seed)
            np.random.seed(args.seed)
            result = run_fold(recipe, fold, examples, args)
            legacy_test = _sample(
                [e for e in examples if e.dataset != MODERN and e.split == "test"], args.sample
            )
            model, params = result.pop("model"), result.pop("params")
            result["pages"] = [
                score_page(model, params, ex, texts.get(ex.id))
                for ex in result.pop("test") + legacy_test
            ]
            result["snippets"] = snippet_accuracy(model, params, snippets)
            path.write_text(json.dumps(result), encoding="utf-8")
            logger.info("wrote %s", path)


def run_fold(recipe: str, fold: int, examples: list[Example], args: argparse.Namespace) -> Any:
    """``recipe`` trained on ``fold``'s training pages, its decoding tuned on the validation
    sites: the run's record, with the model, its decoding and the fold's test pages."""
    legacy = LEGACY_TRAIN.get(recipe)
    sets = fold_sets(examples, fold, args.folds, args.legacy_percent, legacy)
    sets = FoldSets(*(_sample(s, args.sample) for s in (sets.train, sets.val, sets.test)))
    if recipe.endswith("snip"):  # the snippet set's training half, as the shipped models
        from scrapy_maintext.models.snippets import snippet_examples

        sets.train += _sample(snippet_examples(args.data), args.sample)
    logger.info(
        "%s fold %d: train %d val %d test %d", recipe, fold, *map(len, asdict(sets).values())
    )
    t0 = time.time()
    model = train_recipe(recipe, sets, args.epochs, args.seed, args.device)
    seconds = time.time() - t0
    model.to(args.device)  # training hands it back on the CPU (for export)
    decoding = tune_decoding(model, sets.val)
    return {
        "recipe": recipe,
        "fold": fold,
        "folds": args.folds,
        "seed": args.seed,
        "epochs": args.epochs,
        "legacy_percent": args.legacy_percent,
        "legacy_train": sorted(legacy) if legacy is not None else "all",
        "device": args.device,
        "train_seconds": round(seconds),
        "decoding": decoding,
        "model": model,
        "params": DecodeParams(*(decoding[k] for k in DecodeParams.__dataclass_fields__)),
        "test": sets.test,
    }


def main(argv: list[str] | None = None) -> None:
    from scrapy_maintext.models.folds_report import report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="train and score one recipe on every fold")
    go.add_argument("--data", default="../shared/data")
    go.add_argument("--recipe", required=True, help=f"one of {RECIPES}, or a comma list")
    go.add_argument("--out", required=True)
    go.add_argument("--folds", type=int, default=5)
    go.add_argument("--only", default="", help="comma list of folds to run (default: all)")
    go.add_argument("--epochs", type=int, default=4)
    go.add_argument("--legacy-percent", type=int, default=50)
    go.add_argument("--threads", type=int, default=1)
    go.add_argument("--seed", type=int, default=SEED)
    go.add_argument("--device", default="cpu", help="torch device for training and scoring")
    go.add_argument("--pack", default="", help="prepared pages from the pack command")
    go.add_argument("--sample", type=int, default=0, help="at most N pages per set (smoke)")
    pack = sub.add_parser("pack", help="write the prepared pages for run --pack")
    pack.add_argument("--data", default="../shared/data")
    pack.add_argument("--out", required=True, help="file; FILE.snippets is written beside")
    pack.add_argument("--legacy-percent", type=int, default=50)
    show = sub.add_parser("report", help="tables from the runs' JSON files")
    show.add_argument("--out", required=True)
    show.add_argument("--data", default="../shared/data")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args.command == "run":
        if set(args.recipe.split(",")) - set(RECIPES):
            parser.error(f"--recipe: one of {RECIPES}, or a comma list of them")
        if args.pack and "snip" in args.recipe:
            parser.error("the *snip recipes need --data: a pack holds no snippet labels")
        torch.manual_seed(args.seed)
        np.random.seed(args.seed)
        torch.set_num_threads(args.threads)
        run(args)
    elif args.command == "pack":
        write_pack(args.data, Path(args.out), args.legacy_percent)
    else:
        print(report(Path(args.out)))


if __name__ == "__main__":
    main()
