"""Page-level arbiter: the neural text, trafilatura's, or their union, chosen by a learned model.

The block model is strong where it has seen the kind of page and collapses where it has not
(a listing of which it keeps a few rows); trafilatura is the other way round often enough that
the better of the two per page is far above either. Two small linear models, trained by site
folds on pages the block model never saw (``models.arbiter``) and shipped as JSON beside the
model (``config.json`` ``"arbiter": "arbiter.json"``), decide per page:

1. from cheap statistics of the neural decision (``page_stats``: sizes, confidence, unsure
   text, links, repeated structures), whether trafilatura is worth running at all (its
   probability of improving the page reaches ``gate``); most pages stop here, at no cost;
2. if it ran, from the same statistics and how the two outputs compare (``pair_stats``),
   which output to return: ``neural``, ``trafilatura`` or ``union`` (the neural blocks plus
   the page blocks trafilatura's text covers, in document order).

A model folder without the entry decodes as before. No hand rules: every weight is learnt.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.neural.stack import covered_shares

NEURAL, TRAFILATURA, UNION = "neural", "trafilatura", "union"
CHOICES = (NEURAL, TRAFILATURA, UNION)
STAGE1 = (
    "log_blocks",
    "log_page_chars",
    "log_kept_chars",
    "kept_share",
    "confidence",
    "mean_prob",
    "unsure_share",
    "kept_link_share",
    "page_link_share",
    "kept_item_share",
    "repeated_share",
    "repeated_kept_share",
    "log_kept_runs",
    "kept_head_share",
)
STAGE2 = (
    "log_ref_tokens",
    "log_ref_ratio",
    "ref_in_neural",
    "neural_in_ref",
    "union_adds",
    "ref_empty",
    "added_prob",
    "neural_only_prob",
    "ref_outside",
)
#: A page block whose tokens trafilatura's text covers at least this much joins the union
#: (the alignment the training labels use, ``models.dataset.BLOCK_CONTENT_SHARE``).
UNION_SHARE = 0.5
#: Probabilities in this band count as unsure (``unsure_share``).
UNSURE = (0.15, 0.65)
#: Fewest blocks sharing an element path that count as a repeated structure (statistics only).
REPEATED_MIN = 3


@dataclass(frozen=True)
class Linear:
    """Standardised inputs, then one affine map: ``((x - mean) / scale) @ weights.T + bias``."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: np.ndarray

    def scores(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.scale) @ self.weights.T + self.bias

    def to_json(self) -> dict[str, Any]:
        return {k: np.round(getattr(self, k), 6).tolist() for k in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, spec: dict[str, Any], inputs: int, outputs: int) -> Linear:
        arrays = {k: np.asarray(spec[k], dtype=np.float64) for k in cls.__dataclass_fields__}
        if arrays["mean"].shape != (inputs,) or arrays["scale"].shape != (inputs,):
            raise ValueError(f"arbiter: expected {inputs} inputs")
        if arrays["weights"].shape != (outputs, inputs) or arrays["bias"].shape != (outputs,):
            raise ValueError(f"arbiter: expected {outputs} x {inputs} weights")
        if not all(np.isfinite(a).all() for a in arrays.values()) or (arrays["scale"] <= 0).any():
            raise ValueError("arbiter: weights must be finite and scales positive")
        return cls(**arrays)


@dataclass(frozen=True)
class Arbiter:
    #: Logit of "trafilatura's output or the union beats the neural text on this page".
    stage1: Linear
    #: Run trafilatura when stage 1's probability reaches this.
    gate: float
    #: One score per ``CHOICES``; the highest wins.
    stage2: Linear

    def worth_running(self, stats: np.ndarray) -> bool:
        logit = float(self.stage1.scores(stats)[0])
        return bool(1.0 / (1.0 + np.exp(-logit)) >= self.gate)

    def choose(self, stats: np.ndarray, pair: np.ndarray) -> str:
        scores = self.stage2.scores(np.concatenate([stats, pair]))
        return CHOICES[int(np.argmax(scores))]

    def to_json(self) -> dict[str, Any]:
        return {
            "stage1_features": list(STAGE1),
            "stage2_features": list(STAGE1 + STAGE2),
            "choices": list(CHOICES),
            "gate": self.gate,
            "stage1": self.stage1.to_json(),
            "stage2": self.stage2.to_json(),
        }

    @classmethod
    def from_json(cls, spec: dict[str, Any]) -> Arbiter:
        # The feature lists pin the order the weights were trained in.
        if spec.get("stage1_features") != list(STAGE1) or spec.get("stage2_features") != list(
            STAGE1 + STAGE2
        ):
            raise ValueError("arbiter: its features are not this version's")
        if spec.get("choices") != list(CHOICES):
            raise ValueError("arbiter: its choices are not this version's")
        gate = spec.get("gate")
        if isinstance(gate, bool) or not isinstance(gate, int | float) or not 0 <= gate <= 1.01:
            raise ValueError("arbiter: gate must be a number in [0, 1.01]")
        first = Linear.from_json(spec["stage1"], len(STAGE1), 1)
        second = Linear.from_json(spec["stage2"], len(STAGE1) + len(STAGE2), len(CHOICES))
        return cls(first, float(gate), second)

    @classmethod
    def load(cls, path: Path) -> Arbiter:
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))


def _runs(keep: np.ndarray) -> int:
    if not len(keep):
        return 0
    k = keep.astype(np.int8)
    return int(k[0] + np.count_nonzero(np.diff(k) == 1))


def page_stats(
    chars: np.ndarray,
    link_chars: np.ndarray,
    kinds: Sequence[str],
    signatures: Sequence[str],
    probs: np.ndarray,
    keep: np.ndarray,
    confidence: float,
) -> np.ndarray:
    """Stage-1 inputs (``STAGE1``) from the neural decision; no trafilatura run."""
    total = max(float(chars.sum()), 1.0)
    kept = float(chars[keep].sum())
    counts = Counter(signatures)
    repeated = np.fromiter((counts[s] >= REPEATED_MIN for s in signatures), bool, len(chars))
    rep_chars = float(chars[repeated].sum())
    items = np.fromiter((k in ("item", "row") for k in kinds), bool, len(chars))
    heads = np.fromiter((k == "head" for k in kinds), bool, len(chars))
    lo, hi = UNSURE
    unsure = (probs >= lo) & (probs <= hi)
    return np.array(
        [
            np.log1p(len(chars)),
            np.log1p(total),
            np.log1p(kept),
            kept / total,
            confidence,
            float((probs * chars).sum()) / total,
            float(chars[unsure].sum()) / total,
            float(link_chars[keep].sum()) / max(kept, 1.0),
            float(link_chars.sum()) / total,
            float(chars[keep & items].sum()) / max(kept, 1.0),
            rep_chars / total,
            float(chars[keep & repeated].sum()) / max(rep_chars, 1.0),
            np.log1p(_runs(keep)),
            float(np.count_nonzero(keep & heads)) / max(int(keep.sum()), 1),
        ]
    )


def union_keep(block_tokens: list[list[str]], keep: np.ndarray, reference: list[str]) -> np.ndarray:
    """The neural blocks plus the blocks trafilatura's text covers."""
    return keep | (covered_shares(block_tokens, reference) >= UNION_SHARE)


def _mean_prob(probs: np.ndarray, sizes: np.ndarray, mask: np.ndarray) -> float:
    weight = float(sizes[mask].sum())
    return float((probs[mask] * sizes[mask]).sum()) / weight if weight else 0.0


def pair_stats(
    block_tokens: list[list[str]], keep: np.ndarray, reference: list[str], probs: np.ndarray
) -> np.ndarray:
    """Stage-2 inputs (``STAGE2``): how trafilatura's tokens and the kept blocks' compare."""
    kept = [t for toks, k in zip(block_tokens, keep, strict=True) if k for t in toks]
    overlap = sum((Counter(kept) & Counter(reference)).values())
    sizes = np.fromiter((len(t) for t in block_tokens), np.float64, len(block_tokens))
    page = max(float(sizes.sum()), 1.0)
    covered = covered_shares(block_tokens, reference) >= UNION_SHARE
    added = covered & ~keep
    page_bag = Counter(t for toks in block_tokens for t in toks)
    inside = sum((Counter(reference) & page_bag).values())
    return np.array(
        [
            np.log1p(len(reference)),
            np.log((len(reference) + 1) / (len(kept) + 1)),
            overlap / max(len(reference), 1),
            overlap / max(len(kept), 1),
            float(sizes[added].sum()) / page,
            float(not reference),
            _mean_prob(probs, sizes, added),
            _mean_prob(probs, sizes, keep & ~covered),
            1.0 - inside / max(len(reference), 1),
        ]
    )
