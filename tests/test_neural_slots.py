"""A model may read the repeated structures as inputs (``neural.groups.slot_columns``, v7)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lxml.html
import numpy as np
import pytest
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.groups import (
    SLOT_COLUMNS,
    SlotInputs,
    path_signatures,
    slot_columns,
)
from scrapy_maintext.neural.inference import MODELS_DIR, BlockModel, ModelMismatchError
from scrapy_maintext.neural.segment import segment

ITEM = "A story of the day told in enough words to be an item with text of its own here"
ROWS = "".join(f"<li class='story s-{i}'><p>{ITEM} {i}.</p></li>" for i in range(4))
MENU = "".join(f"<li class='menu'><a href='/{i}'>Section {i}</a></li>" for i in range(3))
PAGE = (
    f"<html><body><ul class='nav'>{MENU}</ul><h1>Today</h1>"
    f"<ul class='stories'>{ROWS}</ul><p>One closing line.</p></body></html>"
)


DEFAULT = SlotInputs()


def _columns(params: SlotInputs = DEFAULT) -> tuple[list[str], np.ndarray]:
    raw = segment(lxml.html.fromstring(PAGE))
    texts = [b.text for b in raw]
    return texts, slot_columns(path_signatures(raw), texts, params)


def test_rows_of_a_slot_get_its_size_share_and_item_flag() -> None:
    texts, cols = _columns()
    assert cols.shape == (len(texts), SLOT_COLUMNS) and cols.dtype == np.float32
    story = [i for i, t in enumerate(texts) if t.startswith("A story")]
    menu = [i for i, t in enumerate(texts) if t.startswith("Section")]
    alone = [i for i, t in enumerate(texts) if t in ("Today", "One closing line.")]
    assert len(story) == 4 and len(menu) == 3 and len(alone) == 2
    assert (cols[story, 0] == 1).all() and (cols[menu, 0] == 1).all()
    assert cols[story[0], 1] == pytest.approx(np.log1p(4) / 5)
    assert cols[menu[0], 1] == pytest.approx(np.log1p(3) / 5)
    chars = sum(len(t) for t in texts)
    assert cols[story[0], 2] == pytest.approx(sum(len(texts[i]) for i in story) / chars)
    # Stories have 15 words or more a row: items; the menu's two-word rows are labels.
    assert (cols[story, 3] == 1).all() and (cols[menu, 3] == 0).all()
    assert not cols[alone].any()


def test_a_larger_minimum_leaves_the_menu_out() -> None:
    texts, cols = _columns(SlotInputs(min_rows=4, item_words=15))
    menu = [i for i, t in enumerate(texts) if t.startswith("Section")]
    assert not cols[menu].any() and cols[:, 0].sum() == 4


def test_no_blocks_no_columns() -> None:
    assert slot_columns([], [], SlotInputs()).shape == (0, SLOT_COLUMNS)


@pytest.mark.parametrize(
    "spec",
    [[], {"min_rows": 3}, {"min_rows": 0, "item_words": 15}, {"min_rows": True, "item_words": 2}],
)
def test_bad_slot_settings_are_refused(spec: object) -> None:
    with pytest.raises(ValueError):
        SlotInputs.from_config(spec)


def _folder(tmp_path: Path, source: Path, changes: dict[str, object]) -> Path:
    folder = tmp_path / source.name
    shutil.copytree(source, folder)
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config.update(changes)
    path.write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_a_model_without_slot_inputs_refuses_a_slots_config(tmp_path: Path) -> None:
    # v6 reads no slot columns: a config that says it does no longer fits its ONNX inputs.
    folder = _folder(tmp_path, MODELS_DIR / "v6", {"slots": {"min_rows": 3, "item_words": 15}})
    with pytest.raises(ModelMismatchError, match="input dense"):
        BlockModel(folder)


def test_slot_inputs_and_stacking_exclude_each_other(tmp_path: Path) -> None:
    stacking = Path(__file__).parent / "fixtures" / "neural" / "v2"
    folder = _folder(tmp_path, stacking, {"slots": {"min_rows": 3, "item_words": 15}})
    with pytest.raises(ValueError, match="exclude each other"):
        NeuralExtractor(BlockModel(folder))


def test_the_default_model_reads_the_slot_columns_of_its_blocks() -> None:
    extractor = NeuralExtractor.load()
    assert extractor.slots == DEFAULT and not extractor.needs_reference
    tree = lxml.html.fromstring(PAGE)
    raw, feats = extractor.features(tree)
    texts = [b.text for b in raw]
    assert feats.stack is not None
    np.testing.assert_array_equal(feats.stack, slot_columns(path_signatures(raw), texts, DEFAULT))
    assert feats.model_dense().shape[1] == extractor.model.config.dense_size + SLOT_COLUMNS
    result = extractor.extract(tree)
    assert result.error is None and result.probs is not None and len(result.probs) == len(raw)
