"""Neural main-content extraction: a small block classifier run with ONNX Runtime.

Scrapy-free; needs only onnxruntime, numpy and lxml at run time.

    >>> from scrapy_maintext.neural import default_extractor
    >>> result = default_extractor().extract(lxml.html.fromstring(page))
    >>> result.blocks, result.confidence, result.fallback
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from scrapy_maintext.document import Block
from scrapy_maintext.extraction.comparison import comparison_pays
from scrapy_maintext.neural.decision import DecodeParams, decide
from scrapy_maintext.neural.features import PageFeatures, featurize
from scrapy_maintext.neural.groups import GroupParams, SlotInputs, path_signatures, slot_columns
from scrapy_maintext.neural.groups import keep_groups as keep_group_slots
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR, BlockModel, ModelConfig
from scrapy_maintext.neural.items import ListDecoding, decide_listing, repeated_items
from scrapy_maintext.neural.repeats import drop_repeated_runs
from scrapy_maintext.neural.segment import RawBlock
from scrapy_maintext.neural.segment import segment as segment_page
from scrapy_maintext.neural.stack import stack_features, tokens, trafilatura_text

__all__ = ["NeuralExtractor", "NeuralResult", "default_extractor"]

logger = logging.getLogger(__name__)

#: Pages with more blocks than this get no trafilatura reference (the largest training page
#: has about 6,000 blocks); below it, a page too big for trafilatura's comparison gets its
#: ``fast=True`` output (``extraction.comparison``).
REFERENCE_MAX_BLOCKS = 10_000

#: Length of an error message kept in a result (exception texts can quote whole inputs).
ERROR_CHARS = 300

#: trafilatura's text of the page, or a function that computes it when a model needs it (a
#: cascade runs trafilatura only on the pages its first model is unsure of).
Reference = str | Callable[[], str] | None


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
    #: Whether a cascade's first model was unsure and its next model decided the page.
    escalated: bool = False
    #: The deciding model's keep mask over ``segments``, before repeated runs were dropped
    #: (``neural.repeats``); ``blocks`` are the kept segments after that rule.
    decided: np.ndarray | None = None
    #: Whether the deciding model stacks trafilatura but the page was too big to run it
    #: (``REFERENCE_MAX_BLOCKS``): it read "no reference".
    reference_skipped: bool = False
    #: The deciding model's block probabilities and final keep mask over ``segments`` (after
    #: the repeated structures and repeated runs), and the blocks' path signatures when the
    #: model's decoding computed them (``maintext explain``).
    probs: np.ndarray | None = None
    keep: np.ndarray | None = None
    signatures: list[str] | None = None


@dataclass(frozen=True)
class Cascade:
    """A cheap first model and the model (``next``) that decides the pages it is unsure of.

    ``config.json`` ``"cascade": {"next": "v2", "gate": 0.6}``: the first model's decision
    stands when its page confidence reaches ``gate`` and it does not fall back; otherwise
    ``next`` (a stacking model: trafilatura runs) decides, from the same blocks and features.
    """

    next: NeuralExtractor
    gate: float


class NeuralExtractor:
    """Finds the main-content blocks of a parsed page. Does not modify the tree."""

    _cache: ClassVar[dict[Path, NeuralExtractor]] = {}
    #: Re-entrant: loading a cascade loads its next model.
    _cache_lock: ClassVar[threading.RLock] = threading.RLock()

    def __init__(self, model: BlockModel) -> None:
        self.model = model
        cfg = model.config
        self.version: str = cfg.version
        self.params = DecodeParams(
            cfg.threshold, cfg.smooth_margin, cfg.min_confidence, cfg.min_chars
        )
        #: Whether the model was trained on blocks hidden by markup (``segment``).
        self.keep_hidden = keep_hidden(cfg.extra)
        self.cascade = _cascade(model, cfg.extra.get("cascade"))
        #: Repeated structures kept as a group (``neural.groups``), when the folder says so.
        self.groups = GroupParams.from_config(cfg.extra.get("groups"))
        #: The repeated-structure inputs the model reads (v7), when the folder says so.
        self.slots = SlotInputs.from_config(cfg.extra.get("slots"))
        #: Predicted page types decoded by their repeated items (``neural.items``,
        #: ``"by_type"``; v7: collections and documentation).
        self.by_type = by_type(cfg.extra.get("by_type"))
        if self.slots is not None and self.needs_reference:
            raise ValueError(f"model {self.version}: slot inputs and stacking exclude each other")

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

    @property
    def stacked_reference(self) -> str:
        """The reference this model or its cascade's next model stacks, or ""."""
        if self.reference or self.cascade is None:
            return self.reference
        return self.cascade.next.reference

    def extract(
        self,
        tree: Any,
        url: str | None = None,
        reference: Reference = None,
        segments: list[RawBlock] | None = None,
        page_type: str | None = None,
    ) -> NeuralResult:
        """Main-content blocks of ``tree``; never raises on hostile input.

        ``reference``: trafilatura's text of the page, for models that stack it, or a function
        returning it, called only if a model needs it; computed here when such a model gets
        None (callers that run trafilatura anyway pass it in). ``segments``: the page's
        blocks when the caller segmented it already (with this model's ``keep_hidden``).
        ``page_type``: the page's predicted type (``extraction.page_type``), for a folder
        that decodes some types by their items (``"by_type"``).
        """
        try:
            return self._extract(tree, url, reference, segments, page_type)
        except Exception as exc:  # hostile HTML must never break the caller
            # Reported, not hidden: the caller counts it apart from an unsure model.
            return NeuralResult(error=f"{type(exc).__name__}: {exc}"[:ERROR_CHARS])

    def features(
        self, tree: Any, url: str | None = None, reference: Reference = None
    ) -> tuple[list[RawBlock], PageFeatures]:
        """The page's blocks and this model's inputs for them (stacking columns included)."""
        raw = segment_page(tree, self.keep_hidden)
        return raw, self._stacked(_Page(tree, url, reference, raw), featurize(raw))

    def _stacked(self, page: _Page, feats: PageFeatures) -> PageFeatures:
        """``feats`` with this model's stacking or slot columns, when it has any."""
        if self.slots is not None:
            texts = [b.text for b in page.raw]
            columns = slot_columns(page.signatures(), texts, self.slots)
            return PageFeatures(feats.dense, feats.struct_ids, feats.word_ids, columns)
        if not self.needs_reference or not page.raw:
            return feats
        # trafilatura takes seconds on hostile giant pages; past this size the model reads
        # "no reference", as for pages where trafilatura finds nothing, whoever computes it.
        if len(page.raw) > REFERENCE_MAX_BLOCKS:
            reference: str | None = ""
            page.reference_skipped = True
        else:
            reference = page.reference() if callable(page.reference) else page.reference
        if reference is None:
            kind = self.reference
            if kind == "trafilatura" and not comparison_pays(page.tree):
                kind = "trafilatura-fast"
            reference = trafilatura_text(page.tree, page.url, kind)
        stack = stack_features([tokens(b.text) for b in page.raw], reference)
        return PageFeatures(feats.dense, feats.struct_ids, feats.word_ids, stack)

    def _extract(
        self,
        tree: Any,
        url: str | None,
        reference: Reference,
        segments: list[RawBlock] | None,
        page_type: str | None = None,
    ) -> NeuralResult:
        if tree is None:
            return NeuralResult()
        raw = segments if segments is not None else segment_page(tree, self.keep_hidden)
        if not raw:
            return NeuralResult(segments=raw)
        return self._decide(_Page(tree, url, reference, raw, page_type), featurize(raw))

    def _decide(self, page: _Page, feats: PageFeatures) -> NeuralResult:
        probs = self.model.predict(self._stacked(page, feats))
        raw = page.raw
        lengths = np.fromiter((len(b.text) for b in raw), dtype=np.float64, count=len(raw))
        listing = self.by_type.get(page.page_type or "")
        if listing is not None:
            items = repeated_items(raw, page.signatures(), listing.min_rows)
            decision = decide_listing(probs, lengths, items, self.params, listing)
        else:
            decision = decide(probs, lengths, self.params)
        cascade = self.cascade
        if cascade is not None and (decision.fallback or decision.confidence < cascade.gate):
            result = cascade.next._decide(page, feats)
            result.escalated = True
            return result
        keep, signatures = decision.keep, None
        if self.groups is not None:
            signatures = page.signatures()
            keep = keep_group_slots(signatures, lengths, keep, self.groups)
        keep = drop_repeated_runs(raw, keep)
        blocks = [b.to_block() for b, k in zip(raw, keep, strict=True) if k]
        return NeuralResult(
            blocks,
            decision.confidence,
            decision.fallback,
            segments=raw,
            decided=decision.keep,
            reference_skipped=page.reference_skipped,
            probs=probs,
            keep=keep,
            signatures=signatures,
        )


@dataclass
class _Page:
    """One page on its way through a model (or a cascade's two)."""

    tree: Any
    url: str | None
    reference: Reference
    raw: list[RawBlock]
    #: The page's predicted type, when the caller knows it.
    page_type: str | None = None
    #: Set when a stacking model's reference was skipped for the page's size.
    reference_skipped: bool = False
    _signatures: list[str] | None = None

    def signatures(self) -> list[str]:
        """The blocks' path signatures, computed once for the inputs and the decoding."""
        if self._signatures is None:
            self._signatures = path_signatures(self.raw)
        return self._signatures


def _cascade(model: BlockModel, spec: Any) -> Cascade | None:
    """The cascade ``config.json`` describes, its next model loaded from the same folder."""
    if spec is None:
        return None
    name = model.config.version
    if not isinstance(spec, dict) or not isinstance(spec.get("next"), str):
        raise ValueError(f"model {name}: cascade needs a next model")
    gate = spec.get("gate")
    if isinstance(gate, bool) or not isinstance(gate, int | float) or not 0.0 <= gate <= 1.01:
        raise ValueError(f"model {name}: cascade gate must be a number in [0, 1.01]")
    next_dir = (model.directory.parent / spec["next"]).resolve()
    # Checked before loading it: a cascade into itself, or into another cascade, would load
    # models without end.
    next_config = ModelConfig.read(next_dir / "config.json")
    if next_dir == model.directory.resolve() or "cascade" in next_config.extra:
        raise ValueError(f"model {name}: a cascade's next model cannot cascade")
    # The next model reuses the first one's blocks: both must segment alike.
    if keep_hidden(next_config.extra) != keep_hidden(model.config.extra):
        raise ValueError(f"model {name}: a cascade's models must agree on keep_hidden")
    return Cascade(NeuralExtractor.load(next_dir), float(gate))


def by_type(spec: Any) -> dict[str, ListDecoding]:
    """``config.json``'s ``"by_type"``: predicted type -> its ``ListDecoding``."""
    if spec is None:
        return {}
    if not isinstance(spec, dict) or not all(isinstance(k, str) for k in spec):
        raise ValueError("by_type must map page types to decodings")
    return {name: ListDecoding.from_config(value) for name, value in spec.items()}


def keep_hidden(extra: dict[str, Any]) -> bool:
    """``config.json``'s ``"segment": {"keep_hidden": true}``, for models trained so."""
    segment = extra.get("segment")
    return isinstance(segment, dict) and segment.get("keep_hidden") is True


_default: NeuralExtractor | None = None
_default_lock = threading.Lock()


def default_extractor() -> NeuralExtractor:
    """The process-wide extractor of the shipped model."""
    global _default
    with _default_lock:
        if _default is None:
            _default = NeuralExtractor.load()
        return _default
