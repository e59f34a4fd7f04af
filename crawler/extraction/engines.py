"""Extraction engines behind one interface: a tree in, blocks plus provenance out.

* trafilatura: its XML body (head/p/list/item/table/row/cell/code/quote) turned into blocks;
* neural: the shipped model (``scrapy_maintext.neural``) or ``ExtractOptions.model``'s.
"""

from __future__ import annotations

import functools
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import lxml.html
import numpy as np
from scrapy_maintext.document import Block
from scrapy_maintext.extraction.comparison import Bound, comparison_pays
from scrapy_maintext.extraction.options import ExtractOptions
from trafilatura import bare_extraction

logger = logging.getLogger(__name__)

_HEAD_LEVELS = {f"h{i}": i for i in range(1, 7)}
#: trafilatura writes untyped headings for <h1>..<h6>-less titles; treat them as level 2.
DEFAULT_HEAD_LEVEL = 2


@dataclass
class EngineResult:
    """What an engine made of one page."""

    blocks: list[Block] = field(default_factory=list)
    extractor: str = ""
    confidence: float | None = None
    model_version: str | None = None
    comments: str | None = None
    #: The neural engine's error when it failed on the page (``auto`` then fell back).
    neural_error: str | None = None
    #: The page's segmented blocks when the neural engine made them (else None).
    segments: list[Any] | None = None
    #: Whether a cascade model handed the page to its next model (``NeuralResult.escalated``).
    escalated: bool = False
    #: How trafilatura's work was bounded on a page too big for it (``extraction.comparison``).
    trafilatura_bounded: Bound | None = None
    #: What the markup says of each block (``extraction.convention``), when the blocks are
    #: the neural engine's page blocks; None for trafilatura's.
    markup: list[Any] | None = None
    #: The neural decision behind the result (a ``neural.NeuralResult``: probabilities and
    #: keep masks over ``segments``) when the model ran: what ``maintext explain`` shows.
    decision: Any | None = None
    #: Which of ``segments`` ``blocks`` are, when they are page blocks (the model's keep
    #: mask); None when they are trafilatura's.
    kept: np.ndarray | None = None


class NeuralEngineError(RuntimeError):
    """The neural engine failed on a page and ``engine="neural"`` allows no fallback."""


def run_engine(
    tree: lxml.html.HtmlElement,
    url: str | None,
    options: ExtractOptions,
    segments: list[Any] | None = None,
    page_type: str | None = None,
) -> EngineResult:
    """Run the engine(s) the options ask for; the tree is never modified. ``segments``: the
    page's blocks when ``segment_first`` made them; ``page_type``: the page's predicted
    type, for a model that decodes listings by their items (``neural.items``)."""
    if options.engine == "trafilatura":
        return run_trafilatura(tree, url, options)
    extractor = load_neural(options.model)
    if extractor is None:
        if options.engine == "neural":
            raise RuntimeError("the neural engine is not available")
        return run_trafilatura(tree, url, options)
    return run_neural(extractor, tree, url, options, segments, page_type)


def segment_first(
    tree: lxml.html.HtmlElement, options: ExtractOptions, observer: Any = None
) -> list[Any] | None:
    """The page's blocks for the neural engine, made before it runs so that the same walk
    feeds ``observer`` (``extraction.page_walk``); None when the options run no neural
    engine, or when the segmenter fails (the engine then meets the failure itself)."""
    if options.engine == "trafilatura":
        return None
    extractor = load_neural(options.model)
    if extractor is None:
        return None
    from scrapy_maintext import neural

    try:
        segments: list[Any] = neural.segment_page(tree, extractor.keep_hidden, observer)
    # As in the neural engine: hostile pages break the walk in many ways.
    except Exception:
        return None
    return segments


def run_neural(
    extractor: Any,
    tree: lxml.html.HtmlElement,
    url: str | None,
    options: ExtractOptions,
    segments: list[Any] | None = None,
    page_type: str | None = None,
) -> EngineResult:
    """The neural engine, with trafilatura as its fallback ("auto") and, for models that
    stack trafilatura's decisions, as an input. trafilatura runs for the model only when it
    asks (a cascade's first model does not); that run is reused as the fallback when the
    caller's options are trafilatura's defaults (``_Reference``). On pages too big for
    trafilatura's comparison, both runs skip it (``extraction.comparison``)."""
    reference = _Reference(tree, url, options, extractor.stacked_reference)
    try:
        # The neural extractor never modifies the tree (tests/test_neural_segment.py).
        result = extractor.extract(tree, url, reference, segments, page_type)
    except Exception as exc:
        result = NeuralFailure(error=f"{type(exc).__name__}: {exc}")
    error = result.error
    bounded = Bound.NO_REFERENCE if result.reference_skipped else reference.bounded
    if error and options.engine == "neural":
        raise NeuralEngineError(error)
    version = str(extractor.version)
    confidence = float(result.confidence)
    segments = result.segments
    stacked = reference.stacked
    if result.fallback and options.engine == "auto":
        fallback = stacked if stacked is not None else run_trafilatura(tree, url, options)
        fallback.trafilatura_bounded = fallback.trafilatura_bounded or bounded
        fallback.confidence, fallback.model_version = confidence, version
        # "auto" promises text whenever trafilatura finds some; the error is still counted.
        fallback.neural_error = error
        fallback.segments = segments
        fallback.escalated = result.escalated
        fallback.decision = result
        return fallback
    blocks = list(result.blocks)
    kept = getattr(result, "keep", None)
    comments = None
    if options.include_comments:
        commented = stacked or run_trafilatura(tree, url, options)
        comments, bounded = commented.comments, bounded or commented.trafilatura_bounded
    return EngineResult(
        blocks,
        "neural",
        confidence,
        version,
        comments,
        segments=segments,
        escalated=result.escalated,
        trafilatura_bounded=bounded,
        markup=_kept_markup(result, len(blocks)),
        decision=result,
        kept=kept,
    )


def _kept_markup(result: Any, count: int) -> list[Any] | None:
    """The markup of the kept page blocks, when ``result.blocks`` are exactly those."""
    from scrapy_maintext.extraction.markup import blocks_markup

    raw, keep = result.segments, result.keep
    if raw is None or keep is None:
        return None
    kept = [b for b, k in zip(raw, keep, strict=True) if k]
    if len(kept) != count:
        return None
    return blocks_markup(kept)


class _Reference:
    """trafilatura's text for a stacking model, computed on the first call only.

    The models were trained on trafilatura's output with its default options. With the
    caller's options at those defaults, the engine's own run is the reference and is kept as
    ``stacked`` for the fallback; with other options (``favor_precision``, no tables, ...) the
    reference is a run with the defaults, and the fallback a run with the caller's options.
    """

    def __init__(
        self, tree: lxml.html.HtmlElement, url: str | None, options: ExtractOptions, kind: str
    ) -> None:
        self.tree, self.url, self.options, self.kind = tree, url, options, kind
        self.stacked: EngineResult | None = None
        self.text: str | None = None
        #: Bound.NO_COMPARISON when the reference was computed without it.
        self.bounded: Bound | None = None

    def __call__(self) -> str:
        if self.text is None:
            if self.kind == "trafilatura" and _reference_options(self.options):
                self.stacked = run_trafilatura(self.tree, self.url, self.options)
                self.text = blocks_to_lines(self.stacked.blocks)
                self.bounded = self.stacked.trafilatura_bounded
            else:
                from scrapy_maintext.neural.stack import trafilatura_text

                kind = self.kind
                if kind == "trafilatura" and not comparison_pays(self.tree):
                    kind, self.bounded = "trafilatura-fast", Bound.NO_COMPARISON
                self.text = trafilatura_text(self.tree, self.url, kind)
        return self.text


def _reference_options(options: ExtractOptions) -> bool:
    """Whether a run with ``options`` gives the text the stacking models were trained on."""
    return (
        not options.favor_precision
        and not options.favor_recall
        and options.include_tables
        and not options.include_comments
    )


@dataclass
class NeuralFailure:
    """Stands in for a neural result when the engine raised: fall back, zero confidence."""

    blocks: list[Block] = field(default_factory=list)
    confidence: float = 0.0
    fallback: bool = True
    error: str | None = None
    segments: list[Any] | None = None
    escalated: bool = False
    reference_skipped: bool = False


#: Logged once per process (and once for all the workers) when the model cannot be loaded.
NEURAL_UNAVAILABLE = "Neural extractor unavailable, degrading to trafilatura: %s"


@dataclass(frozen=True)
class NeuralLoad:
    """The neural extractor of a model folder, or why it could not be loaded."""

    extractor: Any | None = None
    error: str | None = None


def neural_load(model: str | None = None) -> NeuralLoad:
    """Load ``model`` (a model folder; None: the shipped model) once per process; a
    failure is logged once, whichever threads ask at the same time."""
    with _LOAD_LOCK:
        return _neural_load(model)


_LOAD_LOCK = threading.Lock()


@functools.cache
def _neural_load(model: str | None) -> NeuralLoad:
    try:
        from scrapy_maintext.neural import NeuralExtractor

        return NeuralLoad(extractor=NeuralExtractor.load(model))
    # Any failure (module or model file missing, runtime refusing the model) means the
    # same thing to the caller: degrade to trafilatura.
    except Exception as exc:
        logger.warning(NEURAL_UNAVAILABLE, exc)
        return NeuralLoad(error=f"{type(exc).__name__}: {exc}")


def load_neural(model: str | None = None) -> Any | None:
    """The shared neural extractor of ``model``, or None when it cannot be loaded."""
    return neural_load(model).extractor


def neural_available(model: str | None = None) -> bool:
    return load_neural(model) is not None


def run_trafilatura(
    tree: lxml.html.HtmlElement, url: str | None, options: ExtractOptions
) -> EngineResult:
    # No copy here: bare_extraction copies a tree it is given before pruning it
    # (tests/test_neural_model_path.py checks that the caller's tree is left intact).
    fast = not comparison_pays(tree)
    result = bare_extraction(
        tree,
        url=url,
        fast=fast,
        favor_precision=options.favor_precision,
        favor_recall=options.favor_recall,
        include_comments=options.include_comments,
        include_tables=options.include_tables,
        include_formatting=False,
        with_metadata=False,
        deduplicate=False,
    )
    extracted = EngineResult(extractor="trafilatura")
    if fast:
        extracted.trafilatura_bounded = Bound.NO_COMPARISON
    if result is None or isinstance(result, dict):
        return extracted
    if result.body is not None:
        extracted.blocks = body_to_blocks(result.body)
    if options.include_comments and result.commentsbody is not None:
        comments = blocks_to_lines(body_to_blocks(result.commentsbody))
        extracted.comments = comments or None
    return extracted


def blocks_to_lines(blocks: list[Block]) -> str:
    return "\n".join(b.text for b in blocks if b.text)


def body_to_blocks(body: Any) -> list[Block]:
    """Blocks from trafilatura's XML body, in document order."""
    blocks: list[Block] = []
    for element in body:
        _convert(element, blocks)
    return [b for b in blocks if b.text]


def _convert(element: Any, out: list[Block]) -> None:
    tag = element.tag
    if tag == "head":
        level = _HEAD_LEVELS.get(element.get("rend", ""), DEFAULT_HEAD_LEVEL)
        out.append(Block("head", _text(element), level=level))
    elif tag == "list":
        _convert_list(element, out)
    elif tag == "table":
        for row in element.iter("row"):
            cells = tuple(_text(cell) for cell in row.iterchildren("cell"))
            out.append(Block("row", " | ".join(c for c in cells if c), cells=cells))
    elif tag == "code":
        out.append(Block("code", "".join(element.itertext()).strip("\n")))
    elif tag == "quote":
        out.append(Block("quote", _text(element)))
    elif isinstance(tag, str):
        out.append(Block("p", _text(element)))


def _convert_list(element: Any, out: list[Block], depth: int = 0) -> None:
    for item in element.iterchildren("item"):
        nested = list(item.iterchildren("list"))
        for sub in nested:
            item.remove(sub)
        # The item's depth below the outermost list (Markdown nests by it).
        out.append(Block("item", _text(item), level=depth))
        for sub in nested:
            _convert_list(sub, out, depth + 1)


def _text(element: Any) -> str:
    return " ".join("".join(element.itertext()).split())
