"""Tune decoding (threshold, smoothing, fallback) on validation pages by grid search."""

from __future__ import annotations

import itertools
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scrapy_maintext.models.dataset import Example, iter_pages
from scrapy_maintext.models.export import RUN_MAX_LEN, RUN_OVERLAP
from scrapy_maintext.models.metrics import token_f1, tokens
from scrapy_maintext.neural.decode import DecodeParams, decide
from scrapy_maintext.neural.inference import windowed

logger = logging.getLogger(__name__)

THRESHOLDS = [round(0.2 + 0.05 * i, 2) for i in range(13)]
MARGINS = [0.0, 0.05, 0.1, 0.2]
MIN_CONFIDENCES = [0.0, *(round(0.3 + 0.05 * i, 2) for i in range(13))]
MIN_CHARS = [0, 50, 150, 300]


@dataclass
class Scored:
    probs: np.ndarray
    lengths: np.ndarray
    example: Example
    fallback_f1: float


def predict_page(model: Any, ex: Example) -> np.ndarray:
    """Probabilities with the same windowing as run time."""
    feats = ex.features

    def run(lo: int, hi: int) -> np.ndarray:
        arrays = (feats.dense, feats.struct_ids, feats.word_ids)
        return model(*(torch.from_numpy(a[None, lo:hi]) for a in arrays))[0].numpy()

    with torch.no_grad():
        logits = windowed(run, len(feats), RUN_MAX_LEN, RUN_OVERLAP)
    return np.asarray(1.0 / (1.0 + np.exp(-logits)))


def block_lengths(ex: Example) -> np.ndarray:
    """Characters per block, recovered from the first dense feature (log1p(chars) / 8)."""
    return np.rint(np.expm1(ex.features.dense[:, 0].astype(np.float64) * 8.0))


def _neural_f1(s: Scored, params: DecodeParams) -> tuple[float, bool]:
    d = decide(s.probs, s.lengths, params)
    ex = s.example
    pred = [t for toks, k in zip(ex.block_tokens, d.keep, strict=True) if k for t in toks]
    return token_f1(pred, ex.gold_tokens), d.fallback


def _mean_f1(scored: list[Scored], params: DecodeParams, auto: bool) -> float:
    total = 0.0
    for s in scored:
        f1, fallback = _neural_f1(s, params)
        total += s.fallback_f1 if (auto and fallback) else f1
    return total / max(len(scored), 1)


def trafilatura_f1(examples: list[Example], data: str | Path) -> dict[str, float]:
    import trafilatura

    wanted = {e.id: e for e in examples}
    out: dict[str, float] = {}
    for page in iter_pages(data, tuple(sorted({e.dataset for e in examples}))):
        ex = wanted.get(page.id)
        if ex is not None:
            text = trafilatura.extract(page.html, fast=True, favor_recall=True)
            out[page.id] = token_f1(tokens(text), ex.gold_tokens)
    return out


def tune_decoding(model: Any, val: list[Example], data: str | Path) -> dict[str, Any]:
    fallback = trafilatura_f1(val, data)
    scored = [
        Scored(predict_page(model, ex), block_lengths(ex), ex, fallback.get(ex.id, 0.0))
        for ex in val
    ]
    best = max(
        itertools.product(THRESHOLDS, MARGINS),
        key=lambda tm: _mean_f1(scored, DecodeParams(tm[0], tm[1], 0.0, 0), auto=False),
    )
    alone = _mean_f1(scored, DecodeParams(best[0], best[1], 0.0, 0), auto=False)
    conf, chars = max(
        itertools.product(MIN_CONFIDENCES, MIN_CHARS),
        key=lambda cc: _mean_f1(scored, DecodeParams(*best, cc[0], cc[1]), auto=True),
    )
    params = DecodeParams(best[0], best[1], conf, chars)
    auto = _mean_f1(scored, params, auto=True)
    traf = float(np.mean([s.fallback_f1 for s in scored]))
    logger.info("validation F1: neural %.4f auto %.4f trafilatura %.4f", alone, auto, traf)
    return {
        **asdict(params),
        "validation": {
            "pages": len(val),
            "neural_f1": round(alone, 4),
            "auto_f1": round(auto, 4),
            "trafilatura_f1": round(traf, 4),
        },
    }
