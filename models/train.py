"""Train the block classifier from scratch, tune decoding, export ONNX int8.

    python -m scrapy_maintext.models.train --data ../shared/data --out crawler/neural/models/v2

Deterministic (fixed seed, two threads). Trains on the training split only (see
``models.dataset``); decoding parameters are tuned on held-out training *sites* (validation).
``--stack ""`` trains without trafilatura's per-block decisions as inputs (the v1 recipe);
``--stack trafilatura-fast`` stacks trafilatura's ``fast=True`` output instead of its defaults.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scrapy_maintext.models.dataset import (
    Example,
    follow_convention,
    is_validation,
    load_examples,
)
from scrapy_maintext.models.export import export_model
from scrapy_maintext.models.metrics import token_f1
from scrapy_maintext.models.net import BlockNet, Ensemble, NetConfig
from scrapy_maintext.models.pack import load_pack
from scrapy_maintext.models.page_inputs import SLOT_STACK, attach_slot_stacks
from scrapy_maintext.models.snippets import snippet_examples
from scrapy_maintext.models.tune import predict_page, tune_decoding
from scrapy_maintext.neural.features import DENSE_SIZE, HASH_SIZE
from scrapy_maintext.neural.groups import SLOT_COLUMNS
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR
from scrapy_maintext.neural.stack import REFERENCES, STACK_SIZE

logger = logging.getLogger(__name__)

SEED = 1234
#: Longest window of blocks seen in training; longer pages are cropped at random.
MAX_LEN = 512
BATCH_PAGES = 16
#: Validation F1 peaked around epoch 7 of 14 in the first run; later epochs overfit.
EPOCHS = 8
LEARNING_RATE = 2e-3
WEIGHT_DECAY = 1e-2
#: Loss weight of the modern (2025-26, seven page types) pages relative to the 2007-2013 ones.
MODERN_WEIGHT = 2.0
MODERN_DATASETS = frozenset({"wcxb-dev", "fundus-dev"})


@dataclass
class Recipe:
    """What varies between training runs (the rest are module constants)."""

    #: Reference stacked as block inputs (``neural.stack.REFERENCES``), or "" for none.
    stack: str = "trafilatura"
    modern_weight: float = MODERN_WEIGHT
    epochs: int = EPOCHS
    #: torch device for training ("cpu", or "cuda" on a GPU machine); export is always on CPU.
    device: str = "cpu"
    seed: int = SEED
    d_model: int = 96
    layers: int = 2
    #: Members of the shipped ensemble (seeds seed, seed + 1, ...); 1 for a single model.
    ensemble: int = 1
    #: Loss weight of the snippet set's partially labelled pages (``models.snippets``);
    #: 0 leaves them out.
    snippet_weight: float = 0.0
    #: Train on the blocks hidden by markup too (``segment(keep_hidden=True)``), marked so.
    keep_hidden: bool = False
    #: Labelled sets trained on (``dataset.DATASETS``; the snippet set comes with
    #: ``snippet_weight``); empty: all. v5: only those whose licence allows commercial use.
    datasets: tuple[str, ...] = ()
    #: Sets trained on whole, their held-out sites included (v5: wcxb-dev, whose unseen-site
    #: figures come from the site folds, ``models.sources``, instead).
    whole: tuple[str, ...] = ()
    #: Loss weight of a labelled set's pages (times ``modern_weight`` for a modern set), so that
    #: no single source dominates: ``(("fundus-dev", 3.0),)``.
    set_weights: tuple[tuple[str, float], ...] = ()
    #: Columns ``stack`` adds to the dense inputs (``models.page_inputs``' differ).
    stack_size: int = STACK_SIZE

    @property
    def slots(self) -> bool:
        """Whether blocks read their repeated-structure columns (``neural.groups.slot_columns``,
        v7) instead of a reference."""
        return self.stack == SLOT_STACK


def trains_on(ex: Example, recipe: Recipe) -> bool:
    """Whether ``recipe`` trains (or validates) on ``ex``: its training split, or all of a
    set in ``recipe.whole``; only the sets in ``recipe.datasets`` when it names any."""
    if recipe.datasets and ex.dataset not in recipe.datasets:
        return False
    return ex.split == "train" or ex.dataset in recipe.whole


@dataclass
class Batch:
    dense: torch.Tensor
    struct_ids: torch.Tensor
    word_ids: torch.Tensor
    labels: torch.Tensor
    weights: torch.Tensor
    pad_mask: torch.Tensor


def block_weights(ex: Example, recipe: Recipe) -> np.ndarray:
    """Loss weight per block: longer blocks matter more for token F1, with diminishing returns;
    modern pages weigh more."""
    page = recipe.modern_weight if ex.dataset in MODERN_DATASETS else 1.0
    page *= dict(recipe.set_weights).get(ex.dataset, 1.0)
    weights = np.array([page * np.log1p(len(t)) for t in ex.block_tokens], dtype=np.float32)
    if ex.mask is not None:
        weights *= ex.mask * recipe.snippet_weight
    return weights


def model_dense(ex: Example, stack: str) -> np.ndarray:
    return ex.features.model_dense() if stack else ex.features.dense


def select_stack(examples: list[Example], reference: str) -> None:
    """Point every example's ``features.stack`` at the recipe's reference (None: no stack)."""
    for ex in examples:
        ex.features.stack = ex.stacks[reference] if reference else None


def make_batch(examples: list[Example], rng: random.Random, recipe: Recipe) -> Batch:
    crops = []
    for ex in examples:
        n = len(ex.features)
        start = rng.randrange(0, n - MAX_LEN + 1) if n > MAX_LEN else 0
        crops.append((ex, start, min(n, start + MAX_LEN)))
    width = max(hi - lo for _, lo, hi in crops)
    b = len(crops)
    f0 = examples[0].features
    dense = np.zeros((b, width, model_dense(examples[0], recipe.stack).shape[1]), dtype=np.float32)
    struct = np.zeros((b, width, f0.struct_ids.shape[1]), dtype=np.int64)
    words = np.zeros((b, width, f0.word_ids.shape[1]), dtype=np.int64)
    labels = np.zeros((b, width), dtype=np.float32)
    weights = np.zeros((b, width), dtype=np.float32)
    pad = np.ones((b, width), dtype=bool)
    for i, (ex, lo, hi) in enumerate(crops):
        k = hi - lo
        dense[i, :k] = model_dense(ex, recipe.stack)[lo:hi]
        struct[i, :k] = ex.features.struct_ids[lo:hi]
        words[i, :k] = ex.features.word_ids[lo:hi]
        labels[i, :k] = ex.labels[lo:hi]
        weights[i, :k] = block_weights(ex, recipe)[lo:hi]
        pad[i, :k] = False
    arrays = (dense, struct, words, labels, weights, pad)
    return Batch(*(torch.from_numpy(a).to(recipe.device) for a in arrays))


def batches(examples: list[Example], rng: random.Random) -> list[list[Example]]:
    """Shuffled batches of pages of similar length (less padding)."""
    order = sorted(examples, key=lambda e: (min(len(e.features), MAX_LEN), rng.random()))
    groups = [order[i : i + BATCH_PAGES] for i in range(0, len(order), BATCH_PAGES)]
    rng.shuffle(groups)
    return groups


def page_f1(ex: Example, keep: np.ndarray) -> float:
    return token_f1(ex.kept_tokens(keep), ex.gold_tokens)


def train_epoch(
    model: BlockNet,
    opt: torch.optim.Optimizer,
    sched: object,
    train: list[Example],
    rng: random.Random,
    recipe: Recipe,
) -> float:
    model.train()
    total = 0.0
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="none")
    for group in batches(train, rng):
        batch = make_batch(group, rng, recipe)
        if not bool(batch.weights.sum() > 0):
            continue  # crops of partially labelled pages that hold no labelled block
        logits = model(batch.dense, batch.struct_ids, batch.word_ids, pad_mask=batch.pad_mask)
        loss = (loss_fn(logits, batch.labels) * batch.weights).sum() / batch.weights.sum()
        total += optimizer_step(model, opt, sched, loss)
    return total


def optimizer_step(
    model: torch.nn.Module, opt: torch.optim.Optimizer, sched: object, loss: torch.Tensor
) -> float:
    """One step on ``loss`` (gradients clipped to norm 1, the schedule advanced); the loss."""
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()  # type: ignore[attr-defined]
    return float(loss.detach())


def validate(model: torch.nn.Module, val: list[Example]) -> float:
    model.eval()
    return float(np.mean([page_f1(ex, predict_page(model, ex) >= 0.5) for ex in val]))


def net_config(recipe: Recipe) -> NetConfig:
    dense_size = DENSE_SIZE + (recipe.stack_size if recipe.stack else 0)
    net = NetConfig(dense_size, HASH_SIZE, d_model=recipe.d_model, layers=recipe.layers)
    net.ff_dim = 2 * recipe.d_model
    return net


#: One training epoch: (model, optimiser, scheduler, pages, rng, recipe) -> summed loss.
EpochFn = Callable[..., float]


def fit(
    train: list[Example],
    val: list[Example],
    recipe: Recipe,
    model: torch.nn.Module | None = None,
    epoch_fn: EpochFn | None = None,
) -> Any:
    """``model`` (default: a new BlockNet) trained with ``epoch_fn`` (default: ``train_epoch``),
    at the epoch of best validation F1."""
    rng = random.Random(recipe.seed)
    model = (model or BlockNet(net_config(recipe))).to(recipe.device)
    run_epoch = epoch_fn or train_epoch
    opt = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    steps = recipe.epochs * len(batches(train, random.Random(0)))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, LEARNING_RATE, total_steps=steps)
    best, best_state = -1.0, None
    for epoch in range(recipe.epochs):
        t0 = time.time()
        loss = run_epoch(model, opt, sched, train, rng, recipe)
        f1 = validate(model, val)
        logger.info("epoch %d loss %.3f val F1 %.4f (%.0fs)", epoch, loss, f1, time.time() - t0)
        if f1 > best:
            best, best_state = f1, {k: v.clone() for k, v in model.state_dict().items()}
    assert best_state is not None
    model.load_state_dict(best_state)
    model.cpu().eval()
    return model


def fit_ensemble(train: list[Example], val: list[Example], recipe: Recipe) -> BlockNet | Ensemble:
    if recipe.ensemble == 1:
        return fit(train, val, recipe)
    members = []
    for k in range(recipe.ensemble):
        torch.manual_seed(recipe.seed + k)
        members.append(fit(train, val, replace(recipe, seed=recipe.seed + k)))
    model = Ensemble(members)
    logger.info("ensemble of %d: val F1 %.4f", recipe.ensemble, validate(model, val))
    return model.eval()


def set_weight(spec: str, parser: argparse.ArgumentParser) -> tuple[str, float]:
    name, _, weight = spec.partition("=")
    try:
        return name, float(weight)
    except ValueError:
        parser.error(f"--set-weight {spec}: SET=WEIGHT, the weight a number")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="crawler/neural/models/v2")
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument(
        "--stack", default="trafilatura", help=f"one of {REFERENCES}, or '' for v1 inputs"
    )
    parser.add_argument("--modern-weight", type=float, default=MODERN_WEIGHT)
    parser.add_argument("--pack", default=None, help="examples from models.pack.save_pack")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--d-model", type=int, default=96)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--ensemble", type=int, default=1)
    parser.add_argument(
        "--snippet-weight", type=float, default=0.0, help="train on snippet labels too"
    )
    parser.add_argument(
        "--keep-hidden", action="store_true", help="blocks hidden by markup too, marked so"
    )
    parser.add_argument(
        "--slots", action="store_true", help="blocks read their repeated-structure columns (v7)"
    )
    parser.add_argument("--datasets", default="", help="comma list of sets to train on (all)")
    parser.add_argument("--whole", default="", help="comma list of sets trained on whole")
    parser.add_argument(
        "--set-weight", action="append", default=[], help="SET=WEIGHT, a set's page weight"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    recipe = Recipe(args.stack, args.modern_weight, args.epochs, args.device, args.seed)
    recipe.d_model, recipe.layers, recipe.ensemble = args.d_model, args.layers, args.ensemble
    recipe.snippet_weight = args.snippet_weight
    recipe.datasets = tuple(d for d in args.datasets.split(",") if d)
    recipe.whole = tuple(d for d in args.whole.split(",") if d)
    recipe.set_weights = tuple(set_weight(x, parser) for x in args.set_weight)
    if recipe.snippet_weight and recipe.stack:
        parser.error("--snippet-weight needs --stack '': snippet pages have no stacking inputs")
    if args.slots:
        if args.pack or args.keep_hidden:
            parser.error("--slots needs --data and the default segmentation")
        recipe.stack, recipe.stack_size = SLOT_STACK, SLOT_COLUMNS
    random.seed(recipe.seed)
    np.random.seed(recipe.seed)
    torch.manual_seed(recipe.seed)
    torch.set_num_threads(args.threads)
    t0 = time.time()
    recipe.keep_hidden = args.keep_hidden
    if args.pack and recipe.keep_hidden:
        parser.error("--keep-hidden needs --data: packs hold the default segmentation")
    loaded = (
        load_pack(Path(args.pack))
        if args.pack
        else load_examples(args.data, keep_hidden=recipe.keep_hidden)
    )
    examples = [e for e in loaded if trains_on(e, recipe)]
    for example in examples:
        follow_convention(example)
    val = [e for e in examples if is_validation(e)]
    train = [e for e in examples if not is_validation(e)]
    if recipe.snippet_weight:
        train += snippet_examples(args.data, recipe.keep_hidden)
    if recipe.slots:
        # The slot columns are computed from each page as at run time, into ``stacks``.
        attach_slot_stacks(train + val, args.data)
    select_stack(train + val, recipe.stack)
    logger.info("train %d pages, validation %d pages, %s", len(train), len(val), recipe)
    model = fit_ensemble(train, val, recipe)
    decoding = tune_decoding(model, val)
    out = Path(args.out)
    export_model(model, out, decoding, train, val, time.time() - t0, recipe)
    if out.resolve() == (MODELS_DIR / DEFAULT_VERSION).resolve():
        # Imported here: the goldens run the extractor (trafilatura), which training needs not.
        from scrapy_maintext.models.golden import write_goldens

        write_goldens(out)


if __name__ == "__main__":
    main()
