"""What each system's text is on one scored page of ``models.sources`` and its scores: the
recipe's own decisions under the convention (typed, with a second opinion), the shipped
folders', trafilatura's."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.document import Block
from scrapy_maintext.extraction.convention import PageFacts, apply
from scrapy_maintext.extraction.core import without_trailing_headings
from scrapy_maintext.extraction.markup import LINKED_SHARE, Markup
from scrapy_maintext.extraction.page_type import PageType, article_rules
from scrapy_maintext.extraction.phrases import Phrases
from scrapy_maintext.extraction.second_opinion import prefers_other, wants_second_opinion
from scrapy_maintext.models.dataset import (
    Example,
)
from scrapy_maintext.models.metrics import prf, tokens
from scrapy_maintext.models.page_inputs import shipped_inputs
from scrapy_maintext.models.tune import block_lengths
from scrapy_maintext.models.wcxb import word_prf
from scrapy_maintext.neural.decision import decide

#: ``neural.features``' dense column of the share of a block's characters in links.
LINK_SHARE_COLUMN = 2


def output_text(
    blocks: list[Block],
    markup: list[Any] | None,
    facts: PageFacts,
    phrases: Phrases | None,
    article: bool = True,
) -> str:
    """``Document.text`` from an engine's blocks, as ``extract()`` makes it (``phrases``
    None: without the convention; ``article``: whether its article rules apply)."""
    if phrases is not None:
        blocks = apply(blocks, facts, markup, phrases=phrases, article=article)[0]
    return "\n".join(b.text for b in without_trailing_headings(blocks))


@dataclass(frozen=True)
class Typing:
    """How the scored system (not the shipped ones) reads the page: its predicted type
    (``models.page_type folds``' file: id -> [type, probability]) gates the convention's
    article rules, and a thin text asks trafilatura for a second opinion."""

    types: dict[str, list[Any]]
    #: The article rules apply unless a non-article type is predicted at least this sure.
    threshold: float = 0.0
    second_opinion: bool = False
    #: Predicted types whose pages ``auto`` gives to trafilatura.
    routed: frozenset[str] = frozenset()

    def routes(self, page_id: str) -> bool:
        return bool(self.types) and self.types[page_id][0] in self.routed

    def article(self, page_id: str) -> bool:
        if not self.types:
            return True
        name, probability = self.types[page_id]
        return article_rules(PageType(str(name), float(probability)), self.threshold)


def system_texts(
    ex: Example,
    keep: np.ndarray,
    fallback: bool,
    phrases: Phrases,
    prefix: str,
    typing: Typing | None = None,
) -> dict[str, str]:
    """The neural and auto texts of one decision, with and without the convention."""
    view = ex.view
    assert view is not None
    article = typing.article(ex.id) if typing else True
    kept = [i for i, k in enumerate(keep) if k]
    blocks = [view.blocks[i] for i in kept]
    neural = output_text(blocks, kept_markup(ex, kept), view.facts, phrases, article)
    traf = output_text(view.fallback, None, view.facts, phrases, article)
    raw = output_text(view.fallback if fallback else blocks, None, view.facts, None)
    handed = fallback or bool(typing and typing.routes(ex.id))
    auto = traf if handed else neural
    if typing and typing.second_opinion and not handed:
        page_chars = sum(len(b.text) for b in view.blocks)
        if wants_second_opinion(len(auto), page_chars):
            SECOND_OPINIONS[ex.id] = True
            auto = traf if prefers_other(auto, traf) else auto
    return {
        f"{prefix}neural": neural,
        f"{prefix}auto": auto,
        f"{prefix}auto-raw": raw,
    }


#: The pages a rescore asked trafilatura for a second opinion on (its price).
SECOND_OPINIONS: dict[str, bool] = {}


def kept_markup(ex: Example, kept: list[int]) -> list[Markup]:
    """The markup of ``ex``'s blocks ``kept``, whether all link read from the features' link
    share (caches made before ``Markup.linked`` do not hold it)."""
    assert ex.view is not None
    links = ex.features.dense[:, LINK_SHARE_COLUMN]
    return [replace(ex.view.markup[i], linked=bool(links[i] >= LINKED_SHARE)) for i in kept]


def page_record(ex: Example, texts: dict[str, str]) -> dict[str, Any]:
    view = ex.view
    assert view is not None
    record: dict[str, Any] = {"id": ex.id, "site": ex.site, "set": ex.dataset}
    record["type"] = ex.page_type
    for name, text in texts.items():
        record[name] = [
            *prf(tokens(text), ex.gold_tokens),
            word_prf(text, view.gold)[2],
            len(text.strip()),
        ]
    return record


class Shipped:
    """A shipped model folder's decisions on cached pages (its own int8 weights)."""

    def __init__(self, version: str) -> None:
        """``version``: a shipped folder's name, or a model folder's path (its name)."""
        from scrapy_maintext.neural import NeuralExtractor
        from scrapy_maintext.neural.inference import MODELS_DIR

        folder = Path(version) if "/" in version else MODELS_DIR / version
        self.name = folder.name
        self.extractor = NeuralExtractor.load(folder)

    @property
    def needs_slots(self) -> bool:
        """Whether the model reads the slot columns (v7): ``page_inputs.attach_slot_stacks``
        first."""
        return self.extractor.slots is not None

    def decide(self, ex: Example) -> tuple[np.ndarray, bool]:
        probs = self.extractor.model.predict(shipped_inputs(self.extractor, ex))
        decision = decide(probs, block_lengths(ex), self.extractor.params)
        return decision.keep, decision.fallback


#: A system's decision on a page: the kept block indices and whether it fell back.
Decisions = dict[str, tuple[list[int], bool]]


def decisions(ex: Example, own: tuple[np.ndarray, bool], shipped: list[Shipped]) -> Decisions:
    """The scored system's decision ``own`` (keep mask, fallback; key "") and each shipped
    model's ("v5:") on ``ex``."""
    found = {"": own, **{f"{model_.name}:": model_.decide(ex) for model_ in shipped}}
    return {
        k: ([int(i) for i in np.flatnonzero(keep)], bool(fb)) for k, (keep, fb) in found.items()
    }


def score(
    ex: Example,
    made: Decisions,
    phrases: Phrases,
    typing: Typing | None = None,
    others: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The page's record: every system's scores, and the decisions they came from (so that
    ``rescore`` applies a changed convention without training again). ``typing`` applies to
    the scored system (key ""), not to the shipped models; ``others``: texts of other
    systems on the page by name (``readability-lxml``)."""
    view = ex.view
    assert view is not None
    texts = {"trafilatura": output_text(view.fallback, None, view.facts, None), **(others or {})}
    for prefix, (kept, fallback) in made.items():
        keep = np.zeros(len(view.blocks), dtype=bool)
        keep[kept] = True
        own = typing if not prefix else None
        texts.update(system_texts(ex, keep, fallback, phrases, prefix, own))
    record = page_record(ex, texts)
    record["decisions"] = made
    if typing and typing.types and ex.id in typing.types:
        record["predicted_type"] = typing.types[ex.id]
    return record
