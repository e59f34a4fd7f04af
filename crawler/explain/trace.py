"""One page's extraction, block by block: kept or dropped, by what, and why.

:func:`explain` runs :func:`~scrapy_maintext.extraction.core.extract_page` (what
``extract()`` runs) and reads back what it decided: the model's probabilities and keep masks
(``neural.NeuralResult``), and the text convention's and the trailing
headings' verdicts (``extraction.core.Body``). The verdicts are the extraction's own, not a
second run of its rules: the blocks they keep are ``Document.text`` (``Trace.kept_text``).

When trafilatura decided the page (``auto`` fell back, or ``--engine trafilatura``), its
blocks are not the page's: ``Trace.engine_rows`` holds them with their exact verdicts, and
each page block is marked by which of them covers its words (``neural.stack.covered_shares``,
at least ``ALIGN_SHARE`` of its tokens).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scrapy_maintext.document import Block, Document, blocks_to_text
from scrapy_maintext.extraction.convention import Convention
from scrapy_maintext.extraction.core import Body, extract_page
from scrapy_maintext.extraction.engines import EngineResult, load_neural, neural_load
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.extraction.words import tokens

#: A page block whose tokens trafilatura's text covers at least this much is marked by that
#: text's verdict (the alignment the training labels use, ``models.dataset``).
ALIGN_SHARE = 0.5


class Decider(enum.Enum):
    """The part of the extractor that settled a block."""

    MODEL = "model"
    GROUPS = "repeated structures"
    REPEATS = "repeated runs"
    TRAFILATURA = "trafilatura"
    CONVENTION = "text convention"
    HEADINGS = "trailing headings"


class Verdict(enum.Enum):
    """Why a block is in the text or not."""

    KEPT = "kept"
    KEPT_BY_NEIGHBOURS = "kept-by-neighbours"
    KEPT_WITH_GROUP = "kept-with-group"
    KEPT_BY_TRAFILATURA = "kept-by-trafilatura"
    BELOW_THRESHOLD = "below-threshold"
    DROPPED_BY_NEIGHBOURS = "dropped-by-neighbours"
    REPEATED_RUN = "repeated-run"
    NOT_IN_TRAFILATURA = "not-in-trafilatura"
    CONVENTION = "convention"
    TRAILING_HEADING = "trailing-heading"

    @property
    def kept(self) -> bool:
        return self.value.startswith("kept")

    @property
    def decider(self) -> Decider:
        return _DECIDERS[self]

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DECIDERS = {
    Verdict.KEPT: Decider.MODEL,
    Verdict.KEPT_BY_NEIGHBOURS: Decider.MODEL,
    Verdict.KEPT_WITH_GROUP: Decider.GROUPS,
    Verdict.KEPT_BY_TRAFILATURA: Decider.TRAFILATURA,
    Verdict.BELOW_THRESHOLD: Decider.MODEL,
    Verdict.DROPPED_BY_NEIGHBOURS: Decider.MODEL,
    Verdict.REPEATED_RUN: Decider.REPEATS,
    Verdict.NOT_IN_TRAFILATURA: Decider.TRAFILATURA,
    Verdict.CONVENTION: Decider.CONVENTION,
    Verdict.TRAILING_HEADING: Decider.HEADINGS,
}
_DESCRIPTIONS = {
    Verdict.KEPT: "the model's probability reaches the threshold",
    Verdict.KEPT_BY_NEIGHBOURS: "below the threshold, but both neighbours are kept and it "
    "is close (smoothing)",
    Verdict.KEPT_WITH_GROUP: "one row of a repeated structure the model mostly kept",
    Verdict.KEPT_BY_TRAFILATURA: "trafilatura decided the page and its text has these words",
    Verdict.BELOW_THRESHOLD: "the model's probability is below the threshold",
    Verdict.DROPPED_BY_NEIGHBOURS: "at the threshold, but both neighbours are dropped and it "
    "is close (smoothing)",
    Verdict.REPEATED_RUN: "a second copy of text kept earlier (another rendition of it)",
    Verdict.NOT_IN_TRAFILATURA: "trafilatura decided the page and left these words out",
    Verdict.CONVENTION: "an engine kept it, but the text convention takes it out (title, "
    "byline, dateline, caption, furniture)",
    Verdict.TRAILING_HEADING: "a heading with nothing after it ends the text",
}


class Fallback(enum.Enum):
    """Why trafilatura, not the model, decided the page."""

    ENGINE_OPTION = "the engine asked for is trafilatura"
    MODEL_UNAVAILABLE = "the model could not be loaded"
    NEURAL_ERROR = "the model failed on the page"
    NOTHING_KEPT = "the model kept no text"
    LOW_CONFIDENCE = "the model's page confidence is below its minimum"


@dataclass(frozen=True)
class Row:
    """One block and its fate."""

    block: Block
    verdict: Verdict
    #: The model's probability, when it ran on the page.
    probability: float | None = None
    #: The part of the text convention that took the block out (``Verdict.CONVENTION``).
    convention: Convention | None = None
    #: What the model alone made of it (one of the MODEL, GROUPS, REPEATS verdicts), when
    #: it ran: on a page trafilatura decided, what the model would have done.
    model: Verdict | None = None
    #: Inside an element hidden by markup (models that read such blocks).
    hidden: bool = False


@dataclass
class Trace:
    """What ``maintext explain`` shows of one page."""

    #: The Document ``extract()`` gives for the page (title, author, date, engine, text).
    doc: Document
    #: The page's blocks in order (none when the page was refused: ``doc.reason``).
    rows: list[Row]
    #: trafilatura's blocks and their verdicts, when trafilatura decided the page.
    engine_rows: list[Row] | None = None
    #: The deciding model's threshold, when it ran.
    threshold: float | None = None
    fallback: Fallback | None = None
    #: The model's error on the page, or why it could not be loaded.
    detail: str | None = None

    @property
    def kept_text(self) -> str:
        """The text of the blocks the verdicts keep: ``doc.text`` (extract()'s text)."""
        if self.doc.reason:
            return ""
        rows = self.engine_rows if self.engine_rows is not None else self.rows
        return blocks_to_text([row.block for row in rows if row.verdict.kept])


def explain(
    html: str | bytes,
    url: str | None = None,
    options: ExtractOptions | None = None,
    encoding: str | None = None,
) -> Trace:
    """The trace of ``extract(html, url, options)``: every page block and its verdict."""
    options = options or ExtractOptions()
    result = extract_page(html, url, options, signatures=False, encoding=encoding, explain=True)
    inside = result.inside
    if inside is None:  # refused or failed before the engine's result: doc.reason says why
        return Trace(result.doc, [])
    engine, body = inside.engine, inside.body
    segments = engine.segments
    if segments is None:
        from scrapy_maintext.neural.segment import segment

        segments = segment(inside.tree)
    model = _deciding_model(options, engine)
    threshold = float(model.params.threshold) if model is not None else None
    verdicts = _model_verdicts(engine.decision, threshold, len(segments))
    trace = Trace(result.doc, [], threshold=threshold)
    if engine.kept is not None and verdicts is not None:
        trace.rows = _page_rows(segments, engine, body, verdicts)
    else:
        trace.engine_rows = _engine_rows(engine.blocks, body)
        trace.rows = _aligned_rows(segments, trace.engine_rows, engine.decision, verdicts)
        trace.fallback = _fallback(options, engine, model, segments)
        if trace.fallback is Fallback.MODEL_UNAVAILABLE:
            trace.detail = neural_load(options.model).error
        elif trace.fallback is Fallback.NEURAL_ERROR:
            trace.detail = engine.neural_error
    return trace


def _deciding_model(options: ExtractOptions, engine: EngineResult) -> Any | None:
    """The neural extractor whose decision the result holds (a cascade's next model when
    the page was escalated), or None when no model decided."""
    if getattr(engine.decision, "probs", None) is None:
        return None
    extractor = load_neural(options.model)
    if extractor is None:
        return None
    return extractor.cascade.next if engine.escalated and extractor.cascade else extractor


def _model_verdicts(
    decision: Any, threshold: float | None, count: int
) -> list[tuple[Verdict, float]] | None:
    """Per page block, what the model's decoding made of it and its probability."""
    probs = getattr(decision, "probs", None)
    if probs is None or threshold is None or len(probs) != count:
        return None
    decided, final = decision.decided, decision.keep
    out = []
    for p, smoothed, kept in zip(probs.tolist(), decided.tolist(), final.tolist(), strict=True):
        if kept and smoothed:
            verdict = Verdict.KEPT if p >= threshold else Verdict.KEPT_BY_NEIGHBOURS
        elif kept:  # groups only add blocks (neural.groups)
            verdict = Verdict.KEPT_WITH_GROUP
        elif smoothed:  # repeated runs only drop kept blocks (neural.repeats)
            verdict = Verdict.REPEATED_RUN
        else:
            verdict = Verdict.DROPPED_BY_NEIGHBOURS if p >= threshold else Verdict.BELOW_THRESHOLD
        out.append((verdict, float(p)))
    return out


def _page_rows(
    segments: Sequence[Any],
    engine: EngineResult,
    body: Body,
    verdicts: list[tuple[Verdict, float]],
) -> list[Row]:
    """Rows of a page whose engine blocks are page blocks (``engine.kept`` says which)."""
    kept = np.asarray(engine.kept, dtype=bool)
    position = np.flatnonzero(kept).tolist()  # engine block j is page block position[j]
    conventions = {position[j]: v for j, v in enumerate(body.convention) if v is not None}
    trailing = {position[j] for j in body.trailing}
    rows = []
    for i, (segment, (model, prob)) in enumerate(zip(segments, verdicts, strict=True)):
        verdict = model
        if i in conventions:
            verdict = Verdict.CONVENTION
        elif i in trailing:
            verdict = Verdict.TRAILING_HEADING
        rows.append(
            Row(segment.to_block(), verdict, prob, conventions.get(i), model, segment.hidden)
        )
    return rows


def _engine_rows(blocks: list[Block], body: Body) -> list[Row]:
    """trafilatura's blocks with the convention's and the trailing headings' verdicts."""
    trailing = set(body.trailing)
    rows = []
    for j, (block, convention) in enumerate(zip(blocks, body.convention, strict=True)):
        if convention is not None:
            rows.append(Row(block, Verdict.CONVENTION, convention=convention))
        elif j in trailing:
            rows.append(Row(block, Verdict.TRAILING_HEADING))
        else:
            rows.append(Row(block, Verdict.KEPT_BY_TRAFILATURA))
    return rows


def _aligned_rows(
    segments: Sequence[Any],
    engine_rows: list[Row],
    decision: Any,
    verdicts: list[tuple[Verdict, float]] | None,
) -> list[Row]:
    """Page blocks marked by the engine rows that cover their words (none: left out)."""
    from scrapy_maintext.neural.stack import covered_shares

    groups: dict[tuple[Verdict, Convention | None], list[str]] = {}
    for row in engine_rows:  # kept first: a tie goes to the text
        groups.setdefault((row.verdict, row.convention), []).append(row.block.text)
    ordered = sorted(groups.items(), key=lambda item: not item[0][0].kept)
    block_tokens = [tokens(segment.text) for segment in segments]
    best = np.full(len(segments), ALIGN_SHARE - 1e-9)
    chosen: list[tuple[Verdict, Convention | None]] = [(Verdict.NOT_IN_TRAFILATURA, None)] * len(
        segments
    )
    for key, texts in ordered:
        shares = covered_shares(block_tokens, tokens("\n".join(texts)))
        for i in np.flatnonzero(shares > best).tolist():
            best[i], chosen[i] = shares[i], key
    rows = []
    for i, segment in enumerate(segments):
        model, prob = verdicts[i] if verdicts is not None else (None, None)
        verdict, convention = chosen[i]
        rows.append(Row(segment.to_block(), verdict, prob, convention, model, segment.hidden))
    return rows


def _fallback(
    options: ExtractOptions, engine: EngineResult, model: Any | None, segments: Sequence[Any]
) -> Fallback:
    """Why trafilatura decided the page (``engines.run_neural``'s reasons, in its order)."""
    if options.engine == "trafilatura":
        return Fallback.ENGINE_OPTION
    if engine.model_version is None:
        return Fallback.MODEL_UNAVAILABLE
    if engine.neural_error or engine.decision is None:
        return Fallback.NEURAL_ERROR
    decided = getattr(engine.decision, "decided", None)
    if model is None or decided is None:
        return Fallback.NOTHING_KEPT
    chars = sum(len(s.text) for s, k in zip(segments, decided.tolist(), strict=True) if k)
    if chars < max(model.params.min_chars, 1):
        return Fallback.NOTHING_KEPT
    return Fallback.LOW_CONFIDENCE
