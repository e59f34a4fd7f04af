"""Stacking inputs: what trafilatura kept on the page, as per-block features of the model.

A model whose ``config.json`` names a reference in ``"stack"`` (v2) reads, for every block,
the share of its tokens that trafilatura's output also contains (inside a shared token
3-gram, so that isolated common words such as "Home" do not count), plus two page-level
numbers: whether trafilatura found anything, and how much of the page text it kept.

Training (``models/dataset.py``) labels blocks with the same alignment against the ground
truth, so the feature and the labels measure the same thing.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from scrapy_maintext.extraction.words import tokens

logger = logging.getLogger(__name__)

#: Columns appended to the dense features of a stacking model.
STACK_SIZE = 3
#: References a model may stack (``config.json`` "stack"): trafilatura with its defaults, or
#: with ``fast=True`` (no comparison with its readability/jusText fallbacks; ~6 ms less).
REFERENCES = ("trafilatura", "trafilatura-fast")
#: Shingle size of the alignment between page blocks and a reference text.
ALIGN_N = 3


def covered_shares(block_tokens: list[list[str]], reference: list[str]) -> np.ndarray:
    """Per block, the share of its tokens inside a token n-gram that ``reference`` contains.

    The blocks are read as one token stream, so n-grams may span block boundaries (short
    blocks such as headings still match).
    """
    n = ALIGN_N
    shares = np.zeros(len(block_tokens), dtype=np.float32)
    stream = [t for toks in block_tokens for t in toks]
    if len(reference) < n or len(stream) < n:
        return shares
    ref_grams = set(zip(*(reference[i:] for i in range(n)), strict=False))
    covered = np.zeros(len(stream) + 1, dtype=np.int32)
    for i, gram in enumerate(zip(*(stream[i:] for i in range(n)), strict=False)):
        if gram in ref_grams:
            covered[i] += 1
            covered[i + n] -= 1
    hit = np.cumsum(covered)[: len(stream)] > 0
    pos = 0
    for b, toks in enumerate(block_tokens):
        if toks:
            shares[b] = float(hit[pos : pos + len(toks)].mean())
        pos += len(toks)
    return shares


def stack_features(block_tokens: list[list[str]], reference: str | None) -> np.ndarray:
    """``N x STACK_SIZE`` float32: covered share, reference found, kept share of page tokens."""
    ref = tokens(reference)
    out = np.zeros((len(block_tokens), STACK_SIZE), dtype=np.float32)
    if not ref or not block_tokens:
        return out
    page_tokens = sum(len(t) for t in block_tokens)
    out[:, 0] = covered_shares(block_tokens, ref)
    out[:, 1] = 1.0
    out[:, 2] = min(len(ref) / max(page_tokens, 1), 1.0)
    return out


def trafilatura_text(tree: Any, url: str | None = None, reference: str = "trafilatura") -> str:
    """trafilatura's main text of ``tree``, as the ``reference`` (see REFERENCES) asks.

    "trafilatura" is the same call as the ``auto`` engine's fallback with default options
    (``extraction.engines.run_trafilatura``); trafilatura copies the tree, so ``tree`` is
    not modified.
    """
    from trafilatura import bare_extraction

    try:
        result = bare_extraction(
            tree,
            url=url,
            fast=reference == "trafilatura-fast",
            include_comments=False,
            include_tables=True,
            include_formatting=False,
            with_metadata=False,
            deduplicate=False,
        )
    except Exception as exc:  # a reference that cannot be computed is an empty one
        logger.debug("trafilatura failed on %s: %r", url, exc)
        return ""
    if result is None or isinstance(result, dict):
        return ""
    return str(result.text or "")
