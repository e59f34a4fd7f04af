"""WCXB's own page metric, and the raw texts of the wcxb-dev pages that it needs.

WCXB's ``evaluate.py`` scores a page by word precision, recall and F1 of the bags of
``re.findall(r"\\w+", text.lower())`` of the extracted and the ground-truth text (an empty
ground truth scores 1 when the extraction is empty too), then averages over pages. Our token
F1 (``models.metrics``) differs only on CJK text, whose runs it splits into characters; the
cached examples keep only our tokens, so the folds score WCXB's metric from the block texts
that ``page_texts`` recomputes (the same segmentation and trafilatura call as
``dataset.build_example``).
"""

from __future__ import annotations

import logging
import pickle
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from lxml import html as lxml_html
from scrapy_maintext.models.dataset import Page, _cache_path, iter_pages, usable_for_f1
from scrapy_maintext.neural.segment import segment
from scrapy_maintext.neural.stack import trafilatura_text

logger = logging.getLogger(__name__)

MODERN = "wcxb-dev"
_WORD = re.compile(r"\w+")


def words(text: str | None) -> list[str]:
    """WCXB's tokens: lowercased ``\\w+`` runs."""
    return _WORD.findall(text.lower()) if text else []


def word_prf(predicted: str | None, reference: str | None) -> tuple[float, float, float]:
    """WCXB's ``word_f1``: precision, recall and F1 of the two bags of ``words``."""
    pred, ref = words(predicted), words(reference)
    if not ref:
        return (1.0, 1.0, 1.0) if not pred else (0.0, 0.0, 0.0)
    if not pred:
        return (0.0, 0.0, 0.0)
    overlap = sum((Counter(pred) & Counter(ref)).values())
    precision, recall = overlap / len(pred), overlap / len(ref)
    f1 = 2 * precision * recall / (precision + recall) if overlap else 0.0
    return precision, recall, f1


@dataclass
class PageTexts:
    """The raw texts of one page: its blocks (as ``segment`` cuts them), its ground truth and
    trafilatura's output (the ``auto`` engine's fallback)."""

    blocks: list[str]
    gold: str
    fallback: str


def page_texts(page: Page) -> PageTexts | None:
    try:
        tree = lxml_html.fromstring(page.html)
    except Exception:  # unparsable pages are skipped, as in build_example
        return None
    blocks = segment(tree)
    if not blocks:
        return None
    fallback = trafilatura_text(tree, page.url, "trafilatura")
    return PageTexts([b.text for b in blocks], page.raw_text or "", fallback or "")


def load_texts(data: str | Path) -> dict[str, PageTexts]:
    """``page_texts`` of every usable wcxb-dev page by id, cached beside the examples."""
    examples = _cache_path(data)
    path = examples.with_name(examples.name.replace("examples-", "wcxb-texts-"))
    if path.exists():
        with path.open("rb") as fh:
            return dict(pickle.load(fh))
    texts = {}
    for page in iter_pages(data, (MODERN,)):
        if usable_for_f1(page) and (found := page_texts(page)) is not None:
            texts[page.id] = found
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as fh:
        pickle.dump(texts, fh, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)
    logger.info("cached the texts of %d wcxb-dev pages in %s", len(texts), path)
    return texts


def page_scores(
    texts: PageTexts, keep: list[bool], fallback: bool
) -> dict[str, tuple[float, float, float]]:
    """WCXB's metric of the neural output (``keep`` per block), ``auto`` (trafilatura's text
    where the decoding falls back) and trafilatura alone."""
    kept = "\n".join(t for t, k in zip(texts.blocks, keep, strict=True) if k)
    neural = word_prf(kept, texts.gold)
    traf = word_prf(texts.fallback, texts.gold)
    return {"neural": neural, "auto": traf if fallback else neural, "trafilatura": traf}
