"""Turn block probabilities into a keep/drop decision, a page confidence and a fallback flag."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class DecodeParams:
    """Tuned on held-out training sites; the values live in the model's ``config.json``."""

    #: Keep a block when its probability reaches this.
    threshold: float
    #: An isolated decision (both neighbours disagree with it) is flipped when its probability
    #: lies within this distance of the threshold.
    smooth_margin: float
    #: Below this page confidence the caller should fall back to another engine.
    min_confidence: float
    #: Fewer kept characters than this counts as "found nothing" (keeping nothing always does,
    #: whatever the tuning chose: then the other engine's text can only be better).
    min_chars: int


@dataclass
class Decision:
    keep: np.ndarray
    confidence: float
    fallback: bool


def smooth(probs: np.ndarray, keep: np.ndarray, threshold: float, margin: float) -> np.ndarray:
    """Flip unsure blocks whose two neighbours agree with each other but not with them."""
    if len(keep) < 3 or margin <= 0:
        return keep
    out = keep.copy()
    left, mid, right = keep[:-2], keep[1:-1], keep[2:]
    isolated = (left == right) & (mid != left)
    unsure = np.abs(probs[1:-1] - threshold) < margin
    flip = isolated & unsure
    out[1:-1][flip] = left[flip]
    return out


def page_confidence(probs: np.ndarray, lengths: np.ndarray) -> float:
    """Length-weighted mean certainty of the block decisions, in [0, 1]."""
    if len(probs) == 0 or lengths.sum() == 0:
        return 0.0
    certainty = np.abs(2.0 * probs - 1.0)
    return float(np.clip((certainty * lengths).sum() / lengths.sum(), 0.0, 1.0))


def decide(probs: np.ndarray, lengths: np.ndarray, params: DecodeParams) -> Decision:
    keep = probs >= params.threshold
    keep = smooth(probs, keep, params.threshold, params.smooth_margin)
    confidence = page_confidence(probs, lengths)
    kept_chars = int(lengths[keep].sum()) if len(keep) else 0
    fallback = kept_chars < max(params.min_chars, 1) or confidence < params.min_confidence
    return Decision(keep, confidence, fallback)
