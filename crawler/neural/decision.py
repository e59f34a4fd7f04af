"""Turn block probabilities into a keep/drop decision, a page confidence and a fallback flag."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class TypedDecoding:
    """A page type's own decoding (``config.json``'s ``"by_type"``, chosen per predicted page
    type inside site folds: ``models.typed_decoding``): its threshold and smoothing, and
    whether its repeated structures are kept whole (``neural.groups``, as ``"groups"``)."""

    params: DecodeParams
    #: ``neural.groups.GroupParams`` (kept as Any here: groups imports the segmenter).
    groups: Any = None


def typed_decodings(
    spec: Any, base: DecodeParams, read_groups: Callable[[Any], Any]
) -> dict[str, TypedDecoding]:
    """``"by_type": {"listing": {"threshold": 0.25, "smooth_margin": 0.1, "groups": {...}}}``
    over ``base`` (the folder's own decoding): a type's missing keys keep ``base``'s."""
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise ValueError("by_type must map page types to decodings")
    out = {}
    for name, entry in spec.items():
        if not isinstance(entry, dict):
            raise ValueError(f"by_type.{name} must be an object")
        threshold = _unit(entry.get("threshold", base.threshold), f"{name}.threshold")
        margin = _unit(entry.get("smooth_margin", base.smooth_margin), f"{name}.smooth_margin")
        params = DecodeParams(threshold, margin, base.min_confidence, base.min_chars)
        out[str(name)] = TypedDecoding(params, read_groups(entry.get("groups")))
    return out


def _unit(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"by_type.{name} must be a number in [0, 1]")
    return float(value)
