"""The per-type decoding study (``models.typed_decoding``): its bags score as
``metrics.token_f1``, probabilities survive the run files, a type's choice is made on the
other folds' pages only (torch: training extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scrapy_maintext.models.dataset import Example  # noqa: E402
from scrapy_maintext.models.metrics import token_f1, tokens  # noqa: E402
from scrapy_maintext.models.sources import load_probs, save_probs  # noqa: E402
from scrapy_maintext.models.typed_decoding import (  # noqa: E402
    MIN_PAGES,
    BagScorer,
    Candidate,
    choose,
)
from scrapy_maintext.neural.features import DENSE_SIZE, PageFeatures  # noqa: E402

TEXTS = ("the cat sat on the mat", "menu home about", "the dog and the cat", "copyright 2026")


def _example() -> Example:
    n = len(TEXTS)
    feats = PageFeatures(
        np.zeros((n, DENSE_SIZE), np.float32), np.zeros((n, 32)), np.zeros((n, 16))
    )
    gold = tokens("the cat sat on the mat the dog and a cat")
    return Example("x/1", "wcxb-dev", "dev", "x.example", feats, np.zeros(n),
                   [tokens(t) for t in TEXTS], gold)  # fmt: skip


def test_bag_scorer_is_token_f1() -> None:
    ex = _example()
    scorer = BagScorer(ex)
    for mask in ([1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 1, 0, 1]):
        keep = np.array(mask, dtype=bool)
        assert scorer.f1(keep) == pytest.approx(token_f1(ex.kept_tokens(keep), ex.gold_tokens))


def test_probabilities_survive_the_run_files(tmp_path: Path) -> None:
    probs = {"a/1": np.array([0.1, 0.9]), "b/2": np.array([0.5]), "c/3": np.zeros(0)}
    save_probs(tmp_path / "probs" / "run.npz", probs)
    back = load_probs(tmp_path / "probs" / "run.npz")
    assert set(back) == set(probs)
    for key, value in probs.items():
        assert np.allclose(back[key], value)


def test_a_type_is_chosen_on_the_other_folds_pages_only() -> None:
    found = [Candidate(0.0, 0.2), Candidate(-0.1, 0.2)]
    table = {}
    for i in range(MIN_PAGES * 2):
        fold = i % 2
        # Fold 0's listing pages gain from the lower threshold, fold 1's lose.
        row = np.array([0.5, 0.9]) if fold == 0 else np.array([0.5, 0.1])
        table[f"p{i}"] = (fold, "listing", row)
    assert choose(table, found, 1) == {"listing": found[1]}
    assert choose(table, found, 0) == {}
    # Only the types asked for get a decoding of their own.
    assert choose(table, found, 1, types=frozenset({"article"})) == {}
    # Too few pages of a type: the run's decoding stays.
    few = {k: v for k, v in list(table.items())[: MIN_PAGES - 1]}
    assert choose(few, found, None) == {}
