"""Evaluation metrics shared by training (threshold tuning) and ``models.studies.evaluate``."""

from __future__ import annotations

import re
from collections import Counter

from scrapy_maintext.neural.stack import tokens

__all__ = [
    "ROUGE_N",
    "prf",
    "rouge_n",
    "snippet_score",
    "token_f1",
    "tokens",
    "wcxb_f1",
    "wcxb_words",
]

ROUGE_N = 5


def _f1(overlap: int, n_pred: int, n_true: int) -> float:
    if overlap == 0 or n_pred == 0 or n_true == 0:
        return 0.0
    precision = overlap / n_pred
    recall = overlap / n_true
    return 2 * precision * recall / (precision + recall)


def prf(pred: list[str], gold: list[str]) -> tuple[float, float, float]:
    """Token precision, recall and F1 of the two bags; an empty side scores 0."""
    overlap = sum((Counter(pred) & Counter(gold)).values())
    precision = overlap / len(pred) if pred else 0.0
    recall = overlap / len(gold) if gold else 0.0
    return precision, recall, _f1(overlap, len(pred), len(gold))


def token_f1(pred: list[str], gold: list[str]) -> float:
    """F1 of the two bags of tokens; an empty prediction scores 0."""
    overlap = sum((Counter(pred) & Counter(gold)).values())
    return _f1(overlap, len(pred), len(gold))


_WCXB_WORD = re.compile(r"\w+")


def wcxb_words(text: str | None) -> list[str]:
    """WCXB's own tokens (its ``evaluate.py``): ``re.findall(r'\\w+', text.lower())``; CJK runs
    stay whole words, where ``tokens`` splits them into characters."""
    return _WCXB_WORD.findall(text.lower()) if text else []


def wcxb_f1(pred: str | None, gold: str | None) -> float:
    """WCXB's page score: word F1 of the two bags of ``wcxb_words`` (its page mean is the
    benchmark's figure)."""
    return token_f1(wcxb_words(pred), wcxb_words(gold))


def rouge_n(pred: list[str], gold: list[str], n: int = ROUGE_N) -> float:
    """ROUGE-N F1: overlap of the bags of token n-grams."""
    grams_p = Counter(zip(*(pred[i:] for i in range(n)), strict=False))
    grams_g = Counter(zip(*(gold[i:] for i in range(n)), strict=False))
    overlap = sum((grams_p & grams_g).values())
    return _f1(overlap, sum(grams_p.values()), sum(grams_g.values()))


def snippet_score(text: str | None, with_: list[str], without: list[str]) -> tuple[int, int]:
    """(correct, total) over snippets: ``with`` ones found, ``without`` ones absent."""
    haystack = " ".join(tokens(text))
    correct = 0
    for snippet in with_:
        correct += " ".join(tokens(snippet)) in haystack
    for snippet in without:
        correct += " ".join(tokens(snippet)) not in haystack
    return correct, len(with_) + len(without)
