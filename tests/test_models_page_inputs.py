"""The page-level inputs of the type-aware block model tried for v7 (``models.page_inputs``):
a page's repeated structures as block columns, the file ``build`` writes read back, and a
recipe that trains on them (torch: training extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lxml import html as lxml_html  # noqa: E402
from scrapy_maintext.extraction.page_type import PAGE_TYPES  # noqa: E402
from scrapy_maintext.models.dataset import Example  # noqa: E402
from scrapy_maintext.models.page_inputs import (  # noqa: E402
    GROUP_COLUMNS,
    SELECTIONS,
    SIZE,
    PageInputs,
    group_columns,
    selection_size,
)
from scrapy_maintext.models.sources import RECIPES  # noqa: E402
from scrapy_maintext.models.train import Recipe, net_config  # noqa: E402
from scrapy_maintext.neural.features import DENSE_SIZE, featurize  # noqa: E402
from scrapy_maintext.neural.segment import segment  # noqa: E402

CARD = "<div class='card'><h3>Item {i}</h3><p>{words}</p></div>"
LONG = " ".join(["word"] * 20)
PAGE = (
    "<html><body><nav><ul><li><a href='/'>Home</a></li><li><a href='/a'>About</a></li></ul>"
    "</nav><main><h1>Events</h1>{cards}</main><footer><p>Imprint</p></footer></body></html>"
)


def _blocks(html: str) -> list:
    return segment(lxml_html.fromstring(html), False)


def test_the_items_of_a_list_are_one_repeated_structure_and_the_furniture_is_not() -> None:
    raw = _blocks(PAGE.format(cards="".join(CARD.format(i=i, words=LONG) for i in range(4))))
    columns = group_columns(raw)
    by_text = {b.text: row for b, row in zip(raw, columns, strict=True)}
    assert columns.shape == (len(raw), GROUP_COLUMNS)
    assert by_text[LONG][0] == 1.0 and by_text[LONG][3] == 1.0  # rows of 15+ words
    assert by_text["Item 0"][0] == 1.0 and by_text["Item 0"][3] == 0.0  # a title row: short
    assert by_text["Events"].tolist() == [0.0] * GROUP_COLUMNS
    assert by_text["Imprint"].tolist() == [0.0] * GROUP_COLUMNS
    # The descriptions hold most of the page's characters.
    assert by_text[LONG][2] > 0.5


def test_two_rows_are_no_repeated_structure() -> None:
    raw = _blocks(PAGE.format(cards="".join(CARD.format(i=i, words=LONG) for i in range(2))))
    columns = group_columns(raw)
    assert not columns[:, 0].any()


def _saved(tmp_path: Path, ids: list[str], blocks: list[int]) -> Path:
    types = np.eye(len(PAGE_TYPES), dtype=np.float32)[: len(ids)]
    groups = np.arange(sum(blocks) * GROUP_COLUMNS, dtype=np.float32).reshape(-1, GROUP_COLUMNS)
    path = tmp_path / "page-inputs.npz"
    np.savez_compressed(path, ids=np.array(ids), types=types, ends=np.cumsum(blocks), groups=groups)
    return path


def _example(page_id: str, html: str) -> Example:
    raw = _blocks(html)
    return Example(
        page_id, "wcxb-dev", "train", "a.example", featurize(raw), np.zeros(len(raw)), [], []
    )


def test_every_block_reads_its_page_type_and_its_own_group_columns(tmp_path: Path) -> None:
    html = PAGE.format(cards="".join(CARD.format(i=i, words=LONG) for i in range(3)))
    ex = _example("p2", html)
    n = len(ex.features)
    inputs = PageInputs(_saved(tmp_path, ["p1", "p2"], [2, n]))
    columns, missing = inputs.columns(ex)
    assert missing == "" and columns.shape == (n, SIZE)
    assert (columns[:, : len(PAGE_TYPES)] == np.eye(len(PAGE_TYPES))[1]).all()
    assert columns[0, len(PAGE_TYPES) :].tolist() == [8.0, 9.0, 10.0, 11.0]  # after p1's 2 rows
    inputs.attach([ex])
    assert ex.features.model_dense().shape == (n, DENSE_SIZE + SIZE)


def test_a_page_whose_blocks_differ_gets_no_group_columns_and_says_so(tmp_path: Path) -> None:
    ex = _example("p1", PAGE.format(cards=""))
    inputs = PageInputs(_saved(tmp_path, ["p1"], [len(ex.features) + 1]))
    columns, missing = inputs.columns(ex)
    assert missing == "groups"
    assert not columns[:, len(PAGE_TYPES) :].any() and columns[0, 0] == 1.0
    assert PageInputs(_saved(tmp_path, ["other"], [1])).columns(ex)[1] == "type"


def test_the_typed_recipe_widens_the_models_dense_input() -> None:
    assert RECIPES["typed"].page_inputs and RECIPES["typed"].fundus_weight == 3.0
    assert net_config(Recipe(stack="page", stack_size=SIZE)).dense_size == DENSE_SIZE + SIZE
    assert net_config(Recipe(stack="")).dense_size == DENSE_SIZE


def test_a_recipe_reads_the_type_columns_or_the_group_columns_alone(tmp_path: Path) -> None:
    html = PAGE.format(cards="".join(CARD.format(i=i, words=LONG) for i in range(3)))
    ex = _example("p2", html)
    n = len(ex.features)
    inputs = PageInputs(_saved(tmp_path, ["p1", "p2"], [2, n]))
    full = inputs.columns(ex)[0]
    for name, width in (("types", len(PAGE_TYPES)), ("groups", GROUP_COLUMNS)):
        recipe = RECIPES["typeonly" if name == "types" else "listonly"]
        assert recipe.page_inputs == name and selection_size(name) == width
        inputs.attach([ex], name)
        assert ex.features.model_dense().shape == (n, DENSE_SIZE + width)
        assert (ex.features.stack == full[:, SELECTIONS[name]]).all()
    assert selection_size("all") == SIZE
