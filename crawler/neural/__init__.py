"""Neural main-content extraction: a small block classifier run with ONNX Runtime.

Scrapy-free; needs only onnxruntime, numpy and lxml at run time.

    >>> from scrapy_maintext.neural import default_extractor
    >>> result = default_extractor().extract(lxml.html.fromstring(page))
    >>> result.blocks, result.confidence, result.fallback
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from scrapy_maintext.document import Block
from scrapy_maintext.neural.decode import DecodeParams, decide
from scrapy_maintext.neural.features import featurize
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR, BlockModel
from scrapy_maintext.neural.segment import segment as segment_page

__all__ = ["NeuralExtractor", "NeuralResult", "default_extractor"]

logger = logging.getLogger(__name__)

#: Length of an error message kept in a result (exception texts can quote whole inputs).
ERROR_CHARS = 300


@dataclass
class NeuralResult:
    #: Kept blocks, in document order.
    blocks: list[Block] = field(default_factory=list)
    #: Page-level confidence in [0, 1].
    confidence: float = 0.0
    #: True when the caller should fall back to another engine (unsure or nothing found).
    fallback: bool = True
    #: Why the model failed on this page ("ValueError: ..."); None when it ran.
    error: str | None = None


class NeuralExtractor:
    """Finds the main-content blocks of a parsed page. Does not modify the tree."""

    _cache: ClassVar[dict[Path, NeuralExtractor]] = {}
    _cache_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, model: BlockModel) -> None:
        self.model = model
        cfg = model.config
        self.version: str = cfg.version
        self.params = DecodeParams(
            cfg.threshold, cfg.smooth_margin, cfg.min_confidence, cfg.min_chars
        )

    @classmethod
    def load(cls, model_dir: str | Path | None = None) -> NeuralExtractor:
        """The extractor for ``model_dir`` (default: the shipped version), loaded once."""
        path = Path(model_dir) if model_dir is not None else MODELS_DIR / DEFAULT_VERSION
        path = path.resolve()
        with cls._cache_lock:
            if path not in cls._cache:
                cls._cache[path] = cls(BlockModel(path))
                logger.info("loaded neural model %s from %s", cls._cache[path].version, path)
            return cls._cache[path]

    def extract(self, tree: Any, url: str | None = None) -> NeuralResult:
        """Main-content blocks of ``tree``; never raises on hostile input."""
        try:
            return self._extract(tree)
        except Exception as exc:  # hostile HTML must never break the caller
            # Reported, not hidden: the caller counts it apart from an unsure model.
            return NeuralResult(error=f"{type(exc).__name__}: {exc}"[:ERROR_CHARS])

    def _extract(self, tree: Any) -> NeuralResult:
        if tree is None:
            return NeuralResult()
        raw = segment_page(tree)
        if not raw:
            return NeuralResult()
        probs = self.model.predict(featurize(raw))
        lengths = np.fromiter((len(b.text) for b in raw), dtype=np.float64, count=len(raw))
        decision = decide(probs, lengths, self.params)
        blocks = [b.to_block() for b, k in zip(raw, decision.keep, strict=True) if k]
        return NeuralResult(blocks, decision.confidence, decision.fallback)


_default: NeuralExtractor | None = None
_default_lock = threading.Lock()


def default_extractor() -> NeuralExtractor:
    """The process-wide extractor of the shipped model."""
    global _default
    with _default_lock:
        if _default is None:
            _default = NeuralExtractor.load()
        return _default
