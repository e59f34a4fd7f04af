"""Train the block classifier from scratch, tune decoding, export ONNX int8.

    python -m scrapy_maintext.models.train --data ../shared/data --out crawler/neural/models/v1

Deterministic (fixed seed, two threads). Trains on the training split only (see
``models.dataset``); decoding parameters are tuned on held-out training *sites* (validation).
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from scrapy_maintext.models.dataset import FLOAT_MODEL, Example, is_validation, load_examples
from scrapy_maintext.models.export import export_model
from scrapy_maintext.models.golden import write_goldens
from scrapy_maintext.models.metrics import token_f1
from scrapy_maintext.models.net import BlockNet, NetConfig
from scrapy_maintext.models.tune import predict_page, tune_decoding
from scrapy_maintext.neural.features import DENSE_SIZE, HASH_SIZE

logger = logging.getLogger(__name__)

SEED = 1234
#: Longest window of blocks seen in training; longer pages are cropped at random.
MAX_LEN = 512
BATCH_PAGES = 16
#: Validation F1 peaked around epoch 7 of 14 in the first run; later epochs overfit.
EPOCHS = 8
LEARNING_RATE = 2e-3
WEIGHT_DECAY = 1e-2


@dataclass
class Batch:
    dense: torch.Tensor
    struct_ids: torch.Tensor
    word_ids: torch.Tensor
    labels: torch.Tensor
    weights: torch.Tensor
    pad_mask: torch.Tensor


def block_weights(ex: Example) -> np.ndarray:
    """Loss weight per block: longer blocks matter more for token F1, with diminishing returns."""
    return np.array([np.log1p(len(t)) for t in ex.block_tokens], dtype=np.float32)


def make_batch(examples: list[Example], rng: random.Random) -> Batch:
    crops = []
    for ex in examples:
        n = len(ex.features)
        start = rng.randrange(0, n - MAX_LEN + 1) if n > MAX_LEN else 0
        crops.append((ex, start, min(n, start + MAX_LEN)))
    width = max(hi - lo for _, lo, hi in crops)
    b = len(crops)
    f0 = examples[0].features
    dense = np.zeros((b, width, f0.dense.shape[1]), dtype=np.float32)
    struct = np.zeros((b, width, f0.struct_ids.shape[1]), dtype=np.int64)
    words = np.zeros((b, width, f0.word_ids.shape[1]), dtype=np.int64)
    labels = np.zeros((b, width), dtype=np.float32)
    weights = np.zeros((b, width), dtype=np.float32)
    pad = np.ones((b, width), dtype=bool)
    for i, (ex, lo, hi) in enumerate(crops):
        k = hi - lo
        dense[i, :k] = ex.features.dense[lo:hi]
        struct[i, :k] = ex.features.struct_ids[lo:hi]
        words[i, :k] = ex.features.word_ids[lo:hi]
        labels[i, :k] = ex.labels[lo:hi]
        weights[i, :k] = block_weights(ex)[lo:hi]
        pad[i, :k] = False
    tensors = [torch.from_numpy(a) for a in (dense, struct, words, labels, weights, pad)]
    return Batch(*tensors)


def batches(examples: list[Example], rng: random.Random) -> list[list[Example]]:
    """Shuffled batches of pages of similar length (less padding)."""
    order = sorted(examples, key=lambda e: (min(len(e.features), MAX_LEN), rng.random()))
    groups = [order[i : i + BATCH_PAGES] for i in range(0, len(order), BATCH_PAGES)]
    rng.shuffle(groups)
    return groups


def page_f1(ex: Example, keep: np.ndarray) -> float:
    pred = [t for toks, k in zip(ex.block_tokens, keep, strict=True) if k for t in toks]
    return token_f1(pred, ex.gold_tokens)


def train_epoch(
    model: BlockNet,
    opt: torch.optim.Optimizer,
    sched: object,
    train: list[Example],
    rng: random.Random,
) -> float:
    model.train()
    total = 0.0
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="none")
    for group in batches(train, rng):
        batch = make_batch(group, rng)
        logits = model(batch.dense, batch.struct_ids, batch.word_ids, batch.pad_mask)
        loss = (loss_fn(logits, batch.labels) * batch.weights).sum() / batch.weights.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()  # type: ignore[attr-defined]
        total += float(loss)
    return total


def validate(model: BlockNet, val: list[Example]) -> float:
    model.eval()
    return float(np.mean([page_f1(ex, predict_page(model, ex) >= 0.5) for ex in val]))


def fit(train: list[Example], val: list[Example]) -> BlockNet:
    rng = random.Random(SEED)
    model = BlockNet(NetConfig(dense_size=DENSE_SIZE, hash_size=HASH_SIZE))
    opt = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    steps = EPOCHS * len(batches(train, random.Random(0)))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, LEARNING_RATE, total_steps=steps)
    best, best_state = -1.0, None
    for epoch in range(EPOCHS):
        t0 = time.time()
        loss = train_epoch(model, opt, sched, train, rng)
        f1 = validate(model, val)
        logger.info("epoch %d loss %.3f val F1 %.4f (%.0fs)", epoch, loss, f1, time.time() - t0)
        if f1 > best:
            best, best_state = f1, {k: v.clone() for k, v in model.state_dict().items()}
    assert best_state is not None
    model.load_state_dict(best_state)
    model.eval()
    return model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="crawler/neural/models/v1")
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    globals()["EPOCHS"] = args.epochs
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    t0 = time.time()
    examples = [e for e in load_examples(args.data) if e.split == "train"]
    val = [e for e in examples if is_validation(e)]
    train = [e for e in examples if not is_validation(e)]
    logger.info("train %d pages, validation %d pages", len(train), len(val))
    model = fit(train, val)
    decoding = tune_decoding(model, val, args.data)
    export_model(model, Path(args.out), decoding, train, val, time.time() - t0)
    write_goldens(Path(args.out), FLOAT_MODEL)


if __name__ == "__main__":
    main()
