"""The tokens every comparison of texts uses: the evaluation metrics (``models.metrics``),
the alignment of labels and references (``neural.stack``) and the furniture phrases
(``extraction.phrases``). Scrapy-free, and free of the neural package's imports."""

from __future__ import annotations

import re

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: Lowercased ``\w+`` runs, with every CJK character as a token of its own.
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_DIGIT = re.compile(r"\d")


def tokens(text: str | None) -> list[str]:
    """The tokens of the evaluation metrics (``models.metrics``) and of the alignment."""
    return _TOKEN.findall(text.lower()) if text else []


def line_key(words: list[str]) -> str:
    """The form a line is looked up by (``extraction.phrases``): its tokens, digits as 0."""
    return _DIGIT.sub("0", " ".join(words))
