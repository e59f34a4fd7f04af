"""What the gold keeps that a recipe's decisions drop (``models.gaps``): the gold outside every
block, the content blocks dropped and the boilerplate kept, by block kind (torch: training
extra, which ``models.sources`` imports)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scrapy_maintext.document import Block  # noqa: E402
from scrapy_maintext.extraction.convention import PageFacts  # noqa: E402
from scrapy_maintext.extraction.markup import Markup  # noqa: E402
from scrapy_maintext.models.dataset import Example, PageView, align_labels  # noqa: E402
from scrapy_maintext.models.gaps import gold_outside_blocks, page_gaps, summarise  # noqa: E402
from scrapy_maintext.models.metrics import tokens  # noqa: E402
from scrapy_maintext.neural.features import DENSE_SIZE, PageFeatures  # noqa: E402

BLOCKS = (
    Block("p", "the first paragraph of the documentation page"),
    Block("code", "pip install something useful"),
    Block("item", "home about contact"),
)
GOLD = "the first paragraph of the documentation page pip install something useful extra words"


def _example() -> Example:
    n = len(BLOCKS)
    feats = PageFeatures(
        np.zeros((n, DENSE_SIZE), np.float32), np.zeros((n, 32)), np.zeros((n, 16))
    )
    rows = [tokens(b.text) for b in BLOCKS]
    gold = tokens(GOLD)
    ex = Example("x/1", "wcxb-dev", "dev", "x.example", feats, align_labels(rows, gold), rows,
                 gold, "documentation")  # fmt: skip
    ex.view = PageView(list(BLOCKS), [Markup()] * n, PageFacts(), [], GOLD)
    return ex


def test_the_gold_no_block_holds_is_the_segmenters_loss() -> None:
    assert gold_outside_blocks(_example()) == 2  # "extra words"


def test_dropped_content_and_kept_boilerplate_are_counted_by_kind() -> None:
    ex = _example()
    assert ex.labels.tolist() == [1.0, 1.0, 0.0]
    gaps = page_gaps(ex, [0, 2])  # the code block dropped, the menu kept
    assert gaps["dropped"] == {"code": 4} and gaps["extra"] == {"item": 3}
    assert gaps["f1"] < gaps["ceiling"] < 1.0
    summary = summarise([gaps])
    assert summary["pages"] == 1 and summary["dropped"]["code"] == round(4 / 13, 3)
    assert page_gaps(ex, [0, 1])["f1"] == gaps["ceiling"]
