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
from scrapy_maintext.neural.features import PageFeatures, featurize
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR, BlockModel
from scrapy_maintext.neural.segment import RawBlock
from scrapy_maintext.neural.segment import segment as segment_page
from scrapy_maintext.neural.stack import stack_features, tokens, trafilatura_text

__all__ = ["NeuralExtractor", "NeuralResult", "default_extractor"]

logger = logging.getLogger(__name__)

#: Pages with more blocks than this get no trafilatura reference when the caller passes none
#: (the largest training page has about 6,000 blocks).
REFERENCE_MAX_BLOCKS = 10_000

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
    #: Every block the page was segmented into (kept or not), for callers that need them
    #: too (the site memory's signatures): the page is segmented once.
    segments: list[RawBlock] | None = None


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

    @property
    def needs_reference(self) -> bool:
        """Whether the model reads trafilatura's output (``neural.stack``)."""
        return bool(self.model.config.stack)

    @property
    def reference(self) -> str:
        """Which trafilatura output the model stacks (``neural.stack.REFERENCES``), or ""."""
        return self.model.config.stack

    def extract(
        self, tree: Any, url: str | None = None, reference: str | None = None
    ) -> NeuralResult:
        """Main-content blocks of ``tree``; never raises on hostile input.

        ``reference``: trafilatura's text of the page, for models that stack it; computed
        here when such a model gets None (callers that run trafilatura anyway pass it in).
        """
        try:
            return self._extract(tree, url, reference)
        except Exception as exc:  # hostile HTML must never break the caller
            # Reported, not hidden: the caller counts it apart from an unsure model.
            return NeuralResult(error=f"{type(exc).__name__}: {exc}"[:ERROR_CHARS])

    def features(
        self, tree: Any, url: str | None = None, reference: str | None = None
    ) -> tuple[list[RawBlock], PageFeatures]:
        """The page's blocks and this model's inputs for them (stacking columns included)."""
        raw = segment_page(tree)
        feats = featurize(raw)
        if self.needs_reference and raw:
            if reference is None:
                # trafilatura takes seconds on hostile giant pages; past this size the model
                # reads "no reference", as for pages where trafilatura finds nothing.
                big = len(raw) > REFERENCE_MAX_BLOCKS
                reference = "" if big else trafilatura_text(tree, url, self.reference)
            feats.stack = stack_features([tokens(b.text) for b in raw], reference)
        return raw, feats

    def _extract(self, tree: Any, url: str | None, reference: str | None) -> NeuralResult:
        if tree is None:
            return NeuralResult()
        raw, feats = self.features(tree, url, reference)
        if not raw:
            return NeuralResult(segments=raw)
        probs = self.model.predict(feats)
        lengths = np.fromiter((len(b.text) for b in raw), dtype=np.float64, count=len(raw))
        decision = decide(probs, lengths, self.params)
        blocks = [b.to_block() for b, k in zip(raw, decision.keep, strict=True) if k]
        return NeuralResult(blocks, decision.confidence, decision.fallback, segments=raw)


_default: NeuralExtractor | None = None
_default_lock = threading.Lock()


def default_extractor() -> NeuralExtractor:
    """The process-wide extractor of the shipped model."""
    global _default
    with _default_lock:
        if _default is None:
            _default = NeuralExtractor.load()
        return _default
