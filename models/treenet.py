"""The tree candidate of issue 23: v4's net plus message passing along the page's tree.

GROWN+UP (a graph network over the DOM) labelled blocks better by passing messages along
parent/child/sibling edges than by attention over the whole page, which ignores the edges.
This net keeps v4's block embeddings, convolution and transformer layers (``models.net``) and
puts ``ROUNDS`` tree layers before them: attention layers with one head per level of
``neural.features.TREE_LEVELS``, each head masked so that a block attends only to the blocks
that share its ancestor that many levels up (head 0: its siblings; the last: a wide section
of the page, or all of it). Messages thus flow between a block and the blocks of each of its
enclosing subtrees, pooled through their common ancestor, as in a round of message passing
between a block and its ancestors and their other descendants.

The mask is built in the graph from the ``tree_ids`` input with ``Equal`` (the ids are
document-order indices of the ancestors, ``neural.features.tree_ids``), so the ONNX export
uses plain operators and runs on onnxruntime's CPU provider like v4.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch
from scrapy_maintext.models.dataset import Example
from scrapy_maintext.models.export import INPUT_NAMES, export_float, quantize
from scrapy_maintext.models.net import (
    MASKED,
    EncoderLayer,
    NetConfig,
    block_embeddings,
    padding_bias,
)
from scrapy_maintext.models.train import Recipe, fit, net_config
from scrapy_maintext.neural.features import HASH_SIZE, STRUCT_SLOTS, TREE_LEVELS, WORD_SLOTS
from torch import nn

#: Rounds of tree message passing before v4's sequence layers.
ROUNDS = 2
#: The exported graph's inputs: v4's, then the tree position.
TREE_INPUT_NAMES = [*INPUT_NAMES, "tree_ids"]


def tree_bias(tree_ids: torch.Tensor) -> torch.Tensor:
    """(B, N, K) ancestor ids -> (B, K, N, N) attention bias: 0 where two blocks share the
    ancestor at level k, ``MASKED`` elsewhere (a block always shares its own)."""
    same = torch.eq(tree_ids.unsqueeze(2), tree_ids.unsqueeze(1))
    return (1.0 - same.to(torch.float32)).permute(0, 3, 1, 2) * MASKED


class TreeNet(nn.Module):
    """v4's ``BlockNet`` with ``rounds`` tree layers (one head per tree level) in front;
    ``window=False`` drops v4's attention over the whole window (GROWN+UP's claim taken
    literally: messages along the tree only, plus v4's local convolution)."""

    #: ``models.tune.predict_page`` and ``models.train.train_epoch`` pass ``tree_ids``.
    reads_tree = True

    def __init__(self, cfg: NetConfig, rounds: int = ROUNDS, window: bool = True) -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.emb = nn.Embedding(cfg.hash_size, cfg.embed_dim, padding_idx=0)
        self.dense = nn.Linear(cfg.dense_size, d)
        self.mix = nn.Linear(d + 2 * cfg.embed_dim, d)
        tree_cfg = replace(cfg, heads=len(TREE_LEVELS))
        self.tree_layers = nn.ModuleList(EncoderLayer(tree_cfg) for _ in range(rounds))
        self.conv = nn.Conv1d(d, d, cfg.conv_kernel, padding=cfg.conv_kernel // 2)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.layers if window else 0))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)

    def forward(
        self,
        dense: torch.Tensor,
        struct_ids: torch.Tensor,
        word_ids: torch.Tensor,
        tree_ids: torch.Tensor,
        pad_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits (B, N); ``pad_mask`` (B, N) is True on padding (training only)."""
        x = block_embeddings(self, dense, struct_ids, word_ids)
        keep = None if pad_mask is None else (~pad_mask).to(torch.float32).unsqueeze(-1)
        bias = padding_bias(x, pad_mask)
        tree = tree_bias(tree_ids) + bias
        for layer in self.tree_layers:
            x = layer(x, tree)
        if keep is not None:
            # Padding must look like the conv's own zero padding at run time.
            x = x * keep
        x = x + torch.relu(self.conv(x.transpose(1, 2)).transpose(1, 2))
        for layer in self.layers:
            x = layer(x, bias)
        return self.head(self.norm(x)).squeeze(-1)


def fit_tree(
    train: list[Example], val: list[Example], recipe: Recipe, window: bool = True
) -> TreeNet:
    """A TreeNet trained as ``models.train.fit`` trains a BlockNet (best validation epoch)."""
    torch.manual_seed(recipe.seed)
    model = TreeNet(net_config(recipe), window=window)
    return fit(train, val, recipe, model).eval()  # type: ignore[no-any-return]


def example_inputs(dense_size: int, n: int = 40) -> tuple[torch.Tensor, ...]:
    """Random inputs of one page of ``n`` blocks in nested subtrees (2, 4, 8, ... blocks)."""
    gen = torch.Generator().manual_seed(0)
    tree = [[i >> (k + 1) for k in range(len(TREE_LEVELS))] for i in range(n)]
    return (
        torch.rand(1, n, dense_size, generator=gen),
        torch.randint(0, HASH_SIZE, (1, n, STRUCT_SLOTS), generator=gen),
        torch.randint(0, HASH_SIZE, (1, n, WORD_SLOTS), generator=gen),
        torch.tensor([tree], dtype=torch.int64),
    )


def export_tree(model: TreeNet, float_path: Path, int8_path: Path) -> None:
    """Float ONNX at ``float_path``, its int8 quantization (as v4's) at ``int8_path``."""
    export_float(model, float_path, example_inputs(model.cfg.dense_size), TREE_INPUT_NAMES)
    quantize(float_path, int8_path)
