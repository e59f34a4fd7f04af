"""The block classifier: per-block embedding, local convolution, small transformer encoder.

Attention is written out with plain matmuls so that the ONNX export is simple and quantizes
well (``MatMul`` nodes become int8 with ``quantize_dynamic``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

#: Attention bias of a masked position (padding, another subtree): softmax weight ~0.
MASKED = -1e4


@dataclass
class NetConfig:
    dense_size: int
    hash_size: int
    embed_dim: int = 32
    d_model: int = 96
    heads: int = 4
    layers: int = 2
    ff_dim: int = 192
    conv_kernel: int = 5
    dropout: float = 0.15

    def to_dict(self) -> dict[str, int | float]:
        return asdict(self)


def _pool(emb: nn.Embedding, ids: torch.Tensor) -> torch.Tensor:
    """Mean of the embeddings of the non-padding ids: (B, N, K) -> (B, N, E)."""
    mask = (ids > 0).to(torch.float32).unsqueeze(-1)
    summed = (emb(ids) * mask).sum(dim=2)
    return summed / mask.sum(dim=2).clamp(min=1.0)


def block_embeddings(
    net: nn.Module, dense: torch.Tensor, struct_ids: torch.Tensor, word_ids: torch.Tensor
) -> torch.Tensor:
    """(B, N, d_model) from a net's ``emb``, ``dense`` and ``mix`` layers (BlockNet, SeqNet)."""
    feats = [torch.relu(net.dense(dense)), _pool(net.emb, struct_ids)]
    return torch.relu(net.mix(torch.cat([*feats, _pool(net.emb, word_ids)], dim=-1)))


class EncoderLayer(nn.Module):
    def __init__(self, cfg: NetConfig) -> None:
        super().__init__()
        self.heads = cfg.heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.out = nn.Linear(cfg.d_model, cfg.d_model)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.ff = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.ff_dim), nn.GELU(), nn.Linear(cfg.ff_dim, cfg.d_model)
        )
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).reshape(b, n, 3, h, d // h).permute(2, 0, 3, 1, 4)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // h) + bias
        att = torch.matmul(torch.softmax(scores, dim=-1), v)
        x = x + self.drop(self.out(att.transpose(1, 2).reshape(b, n, d)))
        return x + self.drop(self.ff(self.norm2(x)))


def padding_bias(x: torch.Tensor, pad_mask: torch.Tensor | None) -> torch.Tensor:
    """The attention bias that hides padded blocks (B, 1, 1, N); zero without padding."""
    if pad_mask is None:
        return x.new_zeros(1, 1, 1, 1)
    return (pad_mask.to(torch.float32) * MASKED)[:, None, None, :]


class BlockNet(nn.Module):
    def __init__(self, cfg: NetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.emb = nn.Embedding(cfg.hash_size, cfg.embed_dim, padding_idx=0)
        self.dense = nn.Linear(cfg.dense_size, cfg.d_model)
        self.mix = nn.Linear(cfg.d_model + 2 * cfg.embed_dim, cfg.d_model)
        pad = cfg.conv_kernel // 2
        self.conv = nn.Conv1d(cfg.d_model, cfg.d_model, cfg.conv_kernel, padding=pad)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, 1)

    def forward(
        self,
        dense: torch.Tensor,
        struct_ids: torch.Tensor,
        word_ids: torch.Tensor,
        pad_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits (B, N); ``pad_mask`` (B, N) is True on padding (training only)."""
        x = block_embeddings(self, dense, struct_ids, word_ids)
        if pad_mask is not None:
            # Padding must look like the conv's own zero padding at run time.
            x = x * (~pad_mask).to(torch.float32).unsqueeze(-1)
        x = x + torch.relu(self.conv(x.transpose(1, 2)).transpose(1, 2))
        bias = padding_bias(x, pad_mask)
        for layer in self.layers:
            x = layer(x, bias)
        return self.head(self.norm(x)).squeeze(-1)


class Ensemble(nn.Module):
    """Mean logit of several BlockNets trained alike from different seeds (one ONNX graph).

    Averaging independently trained members removes most of the seed-to-seed spread of
    held-out F1 (about 2 points on the wcxb-dev page types for single models).
    """

    def __init__(self, members: list[BlockNet]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)
        self.cfg = members[0].cfg

    def forward(
        self,
        dense: torch.Tensor,
        struct_ids: torch.Tensor,
        word_ids: torch.Tensor,
        pad_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        logits = [m(dense, struct_ids, word_ids, pad_mask) for m in self.members]
        return torch.stack(logits).mean(dim=0)
