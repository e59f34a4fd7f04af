"""Evaluation metrics shared by training (threshold tuning) and ``models.evaluate``."""

from __future__ import annotations

import re
from collections import Counter

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: Lowercased ``\w+`` runs, with every CJK character as a token of its own.
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
ROUGE_N = 5


def tokens(text: str | None) -> list[str]:
    return _TOKEN.findall(text.lower()) if text else []


def _f1(overlap: int, n_pred: int, n_true: int) -> float:
    if overlap == 0 or n_pred == 0 or n_true == 0:
        return 0.0
    precision = overlap / n_pred
    recall = overlap / n_true
    return 2 * precision * recall / (precision + recall)


def token_f1(pred: list[str], gold: list[str]) -> float:
    """F1 of the two bags of tokens; an empty prediction scores 0."""
    overlap = sum((Counter(pred) & Counter(gold)).values())
    return _f1(overlap, len(pred), len(gold))


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
