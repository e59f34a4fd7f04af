"""Training of the v5 candidate (``models.seqnet.SeqNet``): v4's loop plus the page-type loss.

The batches, crops, loss weights, optimiser and epoch choice are ``models.train``'s, so the two
recipes differ only in the net and the auxiliary task.
"""

from __future__ import annotations

import logging
import random

import torch
from scrapy_maintext.models.dataset import Example
from scrapy_maintext.models.seqnet import PAGE_TYPES, SeqNet
from scrapy_maintext.models.train import (
    Recipe,
    batches,
    fit,
    make_batch,
    net_config,
    optimizer_step,
)

logger = logging.getLogger(__name__)

#: Weight of the page-type loss (mean over the batch's typed pages) beside the block loss.
TYPE_WEIGHT = 0.2


def type_labels(group: list[Example]) -> torch.Tensor:
    """Class index of each page's type, -100 (ignored) for pages without one."""
    index = {name: i for i, name in enumerate(PAGE_TYPES)}
    return torch.tensor([index.get(ex.page_type, -100) for ex in group], dtype=torch.long)


def _epoch(
    model: SeqNet,
    opt: torch.optim.Optimizer,
    sched: torch.optim.lr_scheduler.LRScheduler,
    train: list[Example],
    rng: random.Random,
    recipe: Recipe,
) -> float:
    model.train()
    total = 0.0
    block_loss = torch.nn.BCEWithLogitsLoss(reduction="none")
    type_loss = torch.nn.CrossEntropyLoss(ignore_index=-100)
    for group in batches(train, rng):
        batch = make_batch(group, rng, recipe)
        if not bool(batch.weights.sum() > 0):
            continue
        logits, types = model.with_page_type(
            batch.dense, batch.struct_ids, batch.word_ids, batch.pad_mask
        )
        loss = (block_loss(logits, batch.labels) * batch.weights).sum() / batch.weights.sum()
        labels = type_labels(group)
        if bool((labels >= 0).any()):
            loss = loss + TYPE_WEIGHT * type_loss(types, labels)
        total += optimizer_step(model, opt, sched, loss)
    return total


def fit_seq(
    train: list[Example], val: list[Example], recipe: Recipe, recurrent: bool = True
) -> SeqNet:
    """A SeqNet trained as ``models.train.fit`` trains a BlockNet (best validation epoch)."""
    torch.manual_seed(recipe.seed)
    model = SeqNet(net_config(recipe), recurrent)
    return fit(train, val, recipe, model, _epoch).eval()  # type: ignore[no-any-return]
