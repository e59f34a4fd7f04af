"""The listing decoding study (``models.list_decoding``): its candidate families hold the
run's own decoding, and a type's choice is made against it on the other folds' pages only
(torch: training extra)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scrapy_maintext.models.list_decoding import OWN, candidates, choose  # noqa: E402
from scrapy_maintext.models.typed_decoding import MIN_PAGES  # noqa: E402
from scrapy_maintext.neural.items import ListDecoding  # noqa: E402


def test_every_family_holds_the_runs_own_decoding_once() -> None:
    for family in ("items", "wide"):
        found = candidates(family)
        assert found.count(OWN) == 1
        assert len(set(found)) == len(found)
    # What ships: the threshold moved and whole items, no pooling nor column shares.
    assert all(c.pool == 0 and c.column_share in (0.0, 0.5) for c in candidates("items"))


def test_a_type_is_chosen_against_the_runs_own_decoding_on_other_folds() -> None:
    whole = ListDecoding(delta=-0.05, keep_share=0.3, column_share=0.0)
    found = [ListDecoding(delta=-0.25), OWN, whole]
    table = {}
    for i in range(MIN_PAGES * 2):
        fold = i % 2
        # The first candidate scores best where it runs, but is not the run's own: the
        # own decoding is the one to beat. Fold 0's collections gain from whole items.
        row = [0.2, 0.5, 0.9] if fold == 0 else [0.2, 0.5, 0.1]
        table[f"p{i}"] = (fold, "collection", np.array(row))
    assert choose(table, found, 1) == {"collection": whole}
    assert choose(table, found, 0) == {}
    few = dict(list(table.items())[: MIN_PAGES - 1])
    assert choose(few, found, None) == {}
