"""Export a trained BlockNet to ONNX, quantize it to int8 and write config.json."""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scrapy_maintext.models.dataset import (
    BLOCK_CONTENT_SHARE,
    CACHE_DIR,
    HOLDOUT_PERCENT,
    MIN_GT_COVERAGE,
    Example,
    float_model_path,
)
from scrapy_maintext.models.net import BlockNet, Ensemble
from scrapy_maintext.neural import features as feat
from scrapy_maintext.neural.groups import SlotInputs
from scrapy_maintext.neural.inference import INPUT_NAMES as RUN_INPUTS
from scrapy_maintext.neural.stack import ALIGN_N

logger = logging.getLogger(__name__)

OPSET = 17
#: Window size and overlap used at run time (the training crop size, and an eighth of it).
RUN_MAX_LEN = 512
RUN_OVERLAP = 64
INPUT_NAMES = list(RUN_INPUTS)


def _example_inputs(dense_size: int, n: int = 40) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(0)
    return (
        torch.rand(1, n, dense_size, generator=gen),
        torch.randint(0, feat.HASH_SIZE, (1, n, feat.STRUCT_SLOTS), generator=gen),
        torch.randint(0, feat.HASH_SIZE, (1, n, feat.WORD_SLOTS), generator=gen),
    )


def export_float(
    model: torch.nn.Module,
    path: Path,
    example: tuple[torch.Tensor, ...] | None = None,
    names: list[str] = INPUT_NAMES,
) -> None:
    """Float ONNX of ``model`` with a dynamic block axis; ``example`` inputs (default: v4's
    three) named ``names``."""
    model.eval()
    axes = {name: {1: "blocks"} for name in names}
    torch.onnx.export(
        model,
        example or _example_inputs(model.cfg.dense_size),  # type: ignore[operator]
        str(path),
        input_names=names,
        output_names=["logits"],
        dynamic_axes={**axes, "logits": {1: "blocks"}},
        opset_version=OPSET,
        dynamo=False,
    )


def quantize(src: Path, dst: Path) -> None:
    """int8 dynamic quantization of every MatMul and Gather (embedding) weight.

    Unsigned weights: on the AMD EPYC (AVX-512 VNNI) development machine they ran ~25% faster
    than signed ones at 150 blocks (s8 weights were even slower than the float model), with
    the same agreement with the float model.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(src), str(dst), weight_type=QuantType.QUInt8)


def _summary(train: list[Example], val: list[Example]) -> dict[str, Any]:
    pages = Counter(e.dataset for e in train)
    blocks = sum(len(e.labels) for e in train)
    positive = float(sum(e.labels.sum() for e in train)) / max(blocks, 1)
    return {
        "train_pages": dict(sorted(pages.items())),
        "validation_pages": dict(sorted(Counter(e.dataset for e in val).items())),
        "train_blocks": blocks,
        "positive_share": round(positive, 4),
        "holdout_percent_by_site": HOLDOUT_PERCENT,
        "min_gt_coverage": MIN_GT_COVERAGE,
        "label_alignment": f"token {ALIGN_N}-grams, block content share >= {BLOCK_CONTENT_SHARE}",
    }


def write_config(
    out: Path, model: BlockNet | Ensemble, decoding: dict[str, Any], extra: dict[str, Any]
) -> None:
    config = {
        "version": out.name,
        "stack": extra["training"]["recipe"]["stack"] if not extra.get("slots") else "",
        "max_len": RUN_MAX_LEN,
        "overlap": RUN_OVERLAP,
        **{k: decoding[k] for k in ("threshold", "smooth_margin", "min_confidence", "min_chars")},
        "dense_size": feat.DENSE_SIZE,
        "hash_size": feat.HASH_SIZE,
        "struct_slots": feat.STRUCT_SLOTS,
        "word_slots": feat.WORD_SLOTS,
        "net": {**model.cfg.to_dict(), "ensemble": len(getattr(model, "members", [model]))},
        "validation": decoding.get("validation", {}),
        **extra,
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def agreement(
    float_path: Path, int8_path: Path, pages: list[Example], threshold: float
) -> dict[str, float]:
    """How closely the int8 model follows the float one on real (validation) pages."""
    import onnxruntime as ort

    sessions = [
        ort.InferenceSession(str(p), providers=["CPUExecutionProvider"])
        for p in (float_path, int8_path)
    ]
    stacked = sessions[0].get_inputs()[0].shape[2] != feat.DENSE_SIZE
    diffs, same = [], []
    for ex in pages:
        f = ex.features
        arrays = (f.model_dense() if stacked else f.dense, f.struct_ids, f.word_ids)
        inputs = {name: a[None] for name, a in zip(INPUT_NAMES, arrays, strict=True)}
        probs = [1 / (1 + np.exp(-s.run(["logits"], inputs)[0][0])) for s in sessions]
        diffs.append(np.abs(probs[0] - probs[1]))
        same.append((probs[0] >= threshold) == (probs[1] >= threshold))
    return {
        "mean_abs_prob_diff": round(float(np.concatenate(diffs).mean()), 5),
        "decision_agreement": round(float(np.concatenate(same).mean()), 5),
    }


def export_model(
    model: BlockNet | Ensemble,
    out: Path,
    decoding: dict[str, Any],
    train: list[Example],
    val: list[Example],
    train_seconds: float,
    recipe: Any,
) -> None:
    """model.onnx (int8) and config.json in ``out``; the float model beside the test
    fixtures, the torch weights in CACHE_DIR."""
    out.mkdir(parents=True, exist_ok=True)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    float_model = float_model_path(out.name)
    export_float(model, float_model)
    quantize(float_model, out / "model.onnx")
    agree = agreement(float_model, out / "model.onnx", val, decoding["threshold"])
    logger.info("int8 vs float on validation pages: %s", agree)
    training = {**_summary(train, val), "recipe": asdict(recipe)}
    extra: dict[str, Any] = {
        "training": {**training, "train_seconds": round(train_seconds)},
        "int8_vs_float_validation": agree,
    }
    if recipe.keep_hidden:
        extra["segment"] = {"keep_hidden": True}
    if getattr(recipe, "slots", False):
        extra["slots"] = asdict(SlotInputs())
    write_config(out, model, decoding, extra)
    state = {"state": model.state_dict(), "net": model.cfg.to_dict()}
    torch.save(state, CACHE_DIR / f"blocknet-{out.name}.pt")


def requantize(out: Path, data: str | Path) -> None:
    """Quantize the last training run's float model again (no retraining) and refresh checks."""
    from scrapy_maintext.models.dataset import is_validation, load_examples
    from scrapy_maintext.models.golden import write_goldens
    from scrapy_maintext.neural import keep_hidden

    float_model = float_model_path(out.name)
    quantize(float_model, out / "model.onnx")
    config_path = out / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    examples = load_examples(data, keep_hidden=keep_hidden(config))
    val = [e for e in examples if e.split == "train" and is_validation(e)]
    if config.get("slots") is not None:
        from scrapy_maintext.models.page_inputs import SLOT_STACK, attach_slot_stacks

        attach_slot_stacks(val, str(data))
    for ex in val:
        reference = SLOT_STACK if config.get("slots") is not None else config.get("stack")
        ex.features.stack = ex.stacks[reference] if reference else None
    config["int8_vs_float_validation"] = agreement(
        float_model, out / "model.onnx", val, config["threshold"]
    )
    config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    logger.info("int8 vs float on validation pages: %s", config["int8_vs_float_validation"])
    write_goldens(out)


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Re-quantize the float model of the last run")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", default="crawler/neural/models/v2")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    requantize(Path(args.out), args.data)


if __name__ == "__main__":
    main()
