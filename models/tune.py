"""Tune decoding (threshold, smoothing, fallback) on validation pages by grid search."""

from __future__ import annotations

import argparse
import itertools
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scrapy_maintext.models.dataset import Example
from scrapy_maintext.models.export import RUN_MAX_LEN, RUN_OVERLAP
from scrapy_maintext.models.metrics import token_f1
from scrapy_maintext.neural.decision import DecodeParams, decide
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

    stacked = model.cfg.dense_size != feats.dense.shape[1]
    arrays = (feats.model_dense() if stacked else feats.dense, feats.struct_ids, feats.word_ids)

    device = next(model.parameters()).device

    def run(lo: int, hi: int) -> np.ndarray:
        inputs = (torch.from_numpy(a[None, lo:hi]).to(device) for a in arrays)
        return model(*inputs)[0].cpu().numpy()

    with torch.no_grad():
        logits = windowed(run, len(feats), RUN_MAX_LEN, RUN_OVERLAP)
    return np.asarray(1.0 / (1.0 + np.exp(-logits)))


def block_lengths(ex: Example) -> np.ndarray:
    """Characters per block, recovered from the first dense feature (log1p(chars) / 8)."""
    return np.rint(np.expm1(ex.features.dense[:, 0].astype(np.float64) * 8.0))


def _neural_f1(s: Scored, params: DecodeParams) -> tuple[float, bool]:
    d = decide(s.probs, s.lengths, params)
    ex = s.example
    pred = ex.kept_tokens(d.keep)
    return token_f1(pred, ex.gold_tokens), d.fallback


def _mean_f1(scored: list[Scored], params: DecodeParams, auto: bool) -> float:
    total = 0.0
    for s in scored:
        f1, fallback = _neural_f1(s, params)
        total += s.fallback_f1 if (auto and fallback) else f1
    return total / max(len(scored), 1)


def fallback_f1(ex: Example) -> float:
    """F1 of the shipped fallback: trafilatura with the product's default options, computed
    once per page when the examples are built (``dataset.build_example``)."""
    return token_f1(ex.fallback_tokens, ex.gold_tokens)


def tune_decoding(model: Any, val: list[Example]) -> dict[str, Any]:
    scored = [Scored(predict_page(model, ex), block_lengths(ex), ex, fallback_f1(ex)) for ex in val]
    return tune_scored(scored)


def tune_scored(scored: list[Scored]) -> dict[str, Any]:
    """Grid search: threshold and smoothing for the model alone, then the fallback floors."""
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
            "pages": len(scored),
            "neural_f1": round(alone, 4),
            "auto_f1": round(auto, 4),
            "trafilatura_f1": round(traf, 4),
        },
    }


def retune(model_dir: Path, data: str) -> dict[str, Any]:
    """Tune the decoding of a shipped (int8) model again on the validation pages and write it
    into its config.json (no retraining): for decoding rule changes."""
    from scrapy_maintext.models.dataset import is_validation, load_examples
    from scrapy_maintext.models.page_inputs import attach_slot_stacks, shipped_inputs
    from scrapy_maintext.neural import NeuralExtractor

    extractor = NeuralExtractor.load(model_dir)
    examples = load_examples(data, keep_hidden=extractor.keep_hidden)
    val = [ex for ex in examples if ex.split == "train" and is_validation(ex)]
    if extractor.slots is not None:
        attach_slot_stacks(val, data)
    scored = []
    for ex in val:
        probs = extractor.model.predict(shipped_inputs(extractor, ex))
        scored.append(Scored(probs, block_lengths(ex), ex, fallback_f1(ex)))
    decoding = tune_scored(scored)
    path = model_dir / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config.update({k: decoding[k] for k in ("threshold", "smooth_margin")})
    config.update({k: decoding[k] for k in ("min_confidence", "min_chars", "validation")})
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return decoding


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Re-tune a shipped model's decoding")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--model", default="crawler/neural/models/v4.1")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    print(retune(Path(args.model), args.data))


if __name__ == "__main__":
    main()
