"""Experiment (not shipped): tell the model the page's declared type.

    python -m scrapy_maintext.models.page_type train --data ../shared/data --out DIR [--tag]
    python -m scrapy_maintext.models.page_type heldout --data ../shared/data --model DIR
        [--tag] [--validation]

With ``--tag``, every block's structure ids get one more hashed token, ``page:product``,
``page:article`` or ``page:none``, from the page's schema.org (JSON-LD, microdata) or
OpenGraph type: a page-type conditioning that costs one regex scan of the HTML. ``train``
runs ``models.train`` with v4's first-model recipe, one net (``--stack '' --modern-weight 1
--snippet-weight 10``), on examples tagged so (or not, for the baseline); ``heldout`` scores a
model with ``models.heldout`` on examples tagged the same way. The run-time extractor knows
nothing of the token: this is for deciding whether to build it. Results in
``models/CHANGELOG.md``.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

import numpy as np
from scrapy_maintext.models import dataset, heldout, train
from scrapy_maintext.models.dataset import Example
from scrapy_maintext.neural.features import hash_id

_PRODUCT = re.compile(
    r'"@type"\s*:\s*\[?\s*"(?:https?://schema\.org/)?Product"'
    r'|og:type"\s+content="(?:og:)?product|itemtype="https?://schema\.org/Product"',
    re.I,
)
_ARTICLE = re.compile(
    r'"@type"\s*:\s*\[?\s*"(?:https?://schema\.org/)?(?:News|Blog|Scholarly|Tech)?'
    r'(?:Article|Posting)"|og:type"\s+content="article'
    r'|itemtype="https?://schema\.org/(?:News|Blog)?(?:Article|Posting)"',
    re.I,
)


def page_kind(html: str) -> str:
    """``product``, ``article`` or ``none``: the type the page's markup declares."""
    if _PRODUCT.search(html):
        return "product"
    if _ARTICLE.search(html):
        return "article"
    return "none"


def tagger(data: str) -> Any:
    """A function that adds each example's page-type token to its blocks' structure ids (in
    the first padding slot, else the last slot)."""
    kinds = {page.id: page_kind(page.html) for page in dataset.iter_pages(data)}

    def tag(examples: list[Example]) -> list[Example]:
        for ex in examples:
            token = hash_id("page:" + kinds.get(ex.id, "none"))
            for row in ex.features.struct_ids:
                free = np.flatnonzero(row == 0)
                row[free[0] if len(free) else -1] = token
        return examples

    return tag


def _patch(data: str) -> None:
    """Make ``models.train`` and ``models.heldout`` read tagged examples."""
    tag = tagger(data)
    load, snippets = dataset.load_examples, train.snippet_examples

    def load_tagged(path: Any, workers: int = 2, keep_hidden: bool = False) -> list[Example]:
        return tag(load(path, workers, keep_hidden))

    def snippets_tagged(path: Any, keep_hidden: bool = False) -> list[Example]:
        return tag(snippets(path, keep_hidden))

    train.load_examples = load_tagged  # type: ignore[assignment]
    heldout.load_examples = load_tagged  # type: ignore[assignment]
    train.snippet_examples = snippets_tagged  # type: ignore[assignment]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("train", "heldout"))
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", help="train: the model folder to write")
    parser.add_argument("--model", help="heldout: the model folder to score")
    parser.add_argument("--tag", action="store_true", help="examples with the page-type token")
    parser.add_argument("--validation", action="store_true", help="validation sites instead")
    args = parser.parse_args(argv)
    if args.tag:
        _patch(args.data)
    if args.command == "train":
        recipe = ["--stack", "", "--modern-weight", "1", "--snippet-weight", "10"]
        train.main(["--data", args.data, "--out", args.out, *recipe])
        return
    heldout.main(
        ["--data", args.data, "--models", args.model]
        + (["--validation"] if args.validation else [])
    )


if __name__ == "__main__":
    main()
