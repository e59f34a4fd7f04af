"""The v5 candidate: v4's block embeddings read as a sequence by a bidirectional GRU, then
v4's transformer layers, with an auxiliary page-type head (issue 23, NeuScraper's design).

v4 (``models.net.BlockNet``) already runs a small transformer over each window of blocks; what
this net adds is an order-aware recurrent layer in place of v4's local convolution (so every
block's state carries the whole window's order, not five neighbours) and a second task, the
page's type (wcxb-dev's seven types), predicted from the masked mean of the block states, so the
shared states must tell a forum from a product page. The ONNX export keeps v4's inputs and its
one ``logits`` output: the run-time code (``neural.inference``) loads it unchanged.
"""

from __future__ import annotations

import torch
from scrapy_maintext.models.net import EncoderLayer, NetConfig, block_embeddings, padding_bias
from torch import nn

#: wcxb-dev's page types, the auxiliary head's classes (other pages carry no type label).
PAGE_TYPES = (
    "article",
    "collection",
    "documentation",
    "forum",
    "listing",
    "product",
    "service",
)


class SeqNet(nn.Module):
    """``recurrent=False`` keeps v4's convolution (v4 plus the page-type head only)."""

    def __init__(self, cfg: NetConfig, recurrent: bool = True) -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.emb = nn.Embedding(cfg.hash_size, cfg.embed_dim, padding_idx=0)
        self.dense = nn.Linear(cfg.dense_size, d)
        self.mix = nn.Linear(d + 2 * cfg.embed_dim, d)
        self.recurrent = recurrent
        if recurrent:
            self.gru = nn.GRU(d, d // 2, batch_first=True, bidirectional=True)
        else:
            self.conv = nn.Conv1d(d, d, cfg.conv_kernel, padding=cfg.conv_kernel // 2)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)
        self.type_head = nn.Linear(d, len(PAGE_TYPES))

    def encode(
        self,
        dense: torch.Tensor,
        struct_ids: torch.Tensor,
        word_ids: torch.Tensor,
        pad_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Block states (B, N, d); ``pad_mask`` (B, N) is True on padding (training only)."""
        x = block_embeddings(self, dense, struct_ids, word_ids)
        if pad_mask is not None:
            x = x * (~pad_mask).to(torch.float32).unsqueeze(-1)
        if not self.recurrent:
            x = x + torch.relu(self.conv(x.transpose(1, 2)).transpose(1, 2))
            return self._attend(x, pad_mask)
        if pad_mask is None:
            seq, _ = self.gru(x)
        else:
            # Packed: the backward direction starts at each page's last block, as at run time.
            lengths = (~pad_mask).sum(dim=1).cpu()
            packed = nn.utils.rnn.pack_padded_sequence(
                x, lengths, batch_first=True, enforce_sorted=False
            )
            out, _ = self.gru(packed)
            seq, _ = nn.utils.rnn.pad_packed_sequence(
                out, batch_first=True, total_length=x.shape[1]
            )
        return self._attend(x + seq, pad_mask)

    def _attend(self, x: torch.Tensor, pad_mask: torch.Tensor | None) -> torch.Tensor:
        bias = padding_bias(x, pad_mask)
        for layer in self.layers:
            x = layer(x, bias)
        return self.norm(x)

    def forward(
        self,
        dense: torch.Tensor,
        struct_ids: torch.Tensor,
        word_ids: torch.Tensor,
        pad_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Block logits (B, N), as ``BlockNet``'s (the exported graph)."""
        return self.head(self.encode(dense, struct_ids, word_ids, pad_mask)).squeeze(-1)

    def with_page_type(
        self,
        dense: torch.Tensor,
        struct_ids: torch.Tensor,
        word_ids: torch.Tensor,
        pad_mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Block logits (B, N) and page-type logits (B, len(PAGE_TYPES)), for training."""
        x = self.encode(dense, struct_ids, word_ids, pad_mask)
        keep = (~pad_mask).to(torch.float32).unsqueeze(-1)
        pooled = (x * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
        return self.head(x).squeeze(-1), self.type_head(pooled)
