"""ONNX Runtime session for the block classifier, with windowing for long pages."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from scrapy_maintext.neural import features
from scrapy_maintext.neural.features import PageFeatures
from scrapy_maintext.neural.groups import SLOT_COLUMNS
from scrapy_maintext.neural.stack import STACK_SIZE

logger = logging.getLogger(__name__)

MODELS_DIR = Path(__file__).parent / "models"
#: The default, v7, reads the repeated structures as inputs (issue 45) and is trained only on
#: data whose licence allows commercial use (issues 30, 34; its MODEL_CARD.md).
DEFAULT_VERSION = "v7"
#: Model folders shipped beside the default, for ``EXTRACT_MODEL`` to point to: v6, the
#: previous default; v4.1, trained also on research-only and AGPL-3.0 pages (its
#: MODEL_CARD.md), with repeated-structure decoding.
OFFERED_VERSIONS = ("v6", "v4.1")
#: The model's inputs, in the order of ``PageFeatures`` (dense, structure ids, word ids).
INPUT_NAMES = ("dense", "struct_ids", "word_ids")


@dataclass
class ModelConfig:
    """What ``config.json`` holds (besides the training summary, kept as ``extra``)."""

    version: str
    max_len: int
    overlap: int
    threshold: float
    smooth_margin: float
    min_confidence: float
    min_chars: int
    dense_size: int
    hash_size: int
    struct_slots: int
    word_slots: int
    extra: dict[str, Any]
    #: "trafilatura" when the model reads trafilatura's decisions (``neural.stack``).
    stack: str = ""

    @classmethod
    def read(cls, path: Path) -> ModelConfig:
        data = json.loads(path.read_text(encoding="utf-8"))
        known = {k: data.pop(k) for k in list(data) if k in cls.__dataclass_fields__}
        return cls(**known, extra=data)


class ModelMismatchError(ValueError):
    """A model whose sizes do not fit the feature code: its predictions would be noise."""


def added_columns(config: ModelConfig) -> int:
    """Inputs the model reads beside the dense statistics: trafilatura's stacking columns
    (``neural.stack``) or the repeated-structure columns (``neural.groups.slot_columns``)."""
    if config.stack or config.extra.get("stack"):
        return STACK_SIZE
    return SLOT_COLUMNS if config.extra.get("slots") is not None else 0


def check_sizes(config: ModelConfig, session: ort.InferenceSession, model_dir: Path) -> None:
    """Refuse a model whose config.json or ONNX inputs disagree with the feature code."""
    expected = {
        "dense_size": (config.dense_size, features.DENSE_SIZE),
        "hash_size": (config.hash_size, features.HASH_SIZE),
        "struct_slots": (config.struct_slots, features.STRUCT_SLOTS),
        "word_slots": (config.word_slots, features.WORD_SLOTS),
    }
    widths = {
        "struct_ids": features.STRUCT_SLOTS,
        "word_ids": features.WORD_SLOTS,
        "dense": features.DENSE_SIZE + added_columns(config),
    }
    for model_input in session.get_inputs():
        width = model_input.shape[-1] if model_input.shape else None
        if model_input.name in widths and isinstance(width, int):
            expected[f"input {model_input.name}"] = (width, widths[model_input.name])
    wrong = [f"{k} {got} (features: {want})" for k, (got, want) in expected.items() if got != want]
    if wrong:
        raise ModelMismatchError(
            f"model in {model_dir} does not fit the feature code: " + ", ".join(wrong)
        )


def _session(model_path: Path) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Spinning threads burn CPU that the crawler's other work needs.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])


class BlockModel:
    """Block probabilities from page features. Thread-safe (ORT sessions are)."""

    def __init__(self, model_dir: Path) -> None:
        self.directory = model_dir
        self.config = ModelConfig.read(model_dir / "config.json")
        self.session = _session(model_dir / "model.onnx")
        check_sizes(self.config, self.session, model_dir)
        self._lock = threading.Lock()

    def _run(self, arrays: tuple[np.ndarray, ...], lo: int, hi: int) -> np.ndarray:
        inputs = {name: a[None, lo:hi] for name, a in zip(INPUT_NAMES, arrays, strict=True)}
        (logits,) = self.session.run(["logits"], inputs)
        return np.asarray(logits[0], dtype=np.float32)

    def predict(self, feats: PageFeatures) -> np.ndarray:
        """Content probability per block; long pages run in overlapping windows."""
        if feats.stack is None and added_columns(self.config):
            raise ValueError(f"model {self.config.version} needs stacking or slot inputs")
        arrays = (feats.model_dense(), feats.struct_ids, feats.word_ids)
        logits = windowed(
            lambda lo, hi: self._run(arrays, lo, hi),
            len(feats),
            self.config.max_len,
            self.config.overlap,
        )
        return np.asarray(1.0 / (1.0 + np.exp(-logits)), dtype=np.float32)


def windowed(run: Callable[[int, int], np.ndarray], n: int, size: int, overlap: int) -> np.ndarray:
    """Logits of ``n`` blocks from ``run(lo, hi)`` over windows of at most ``size`` blocks.

    Each window overwrites the previous one's output from the point where its blocks have
    ``overlap`` blocks of left context, so every block is judged with context on both sides.
    """
    logits = np.zeros(n, dtype=np.float32)
    stride = size - 2 * overlap
    start = 0
    while start < n:
        end = min(start + size, n)
        keep_from = start if start == 0 else start + overlap
        logits[keep_from:end] = run(start, end)[keep_from - start :]
        if end >= n:
            break
        start += stride
    return logits
