"""A listing's repeated items are found and decoded together (``neural.items``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import lxml.html
import numpy as np
import pytest
from scrapy_maintext.extraction.engines import run_engine
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.neural import NeuralExtractor, default_extractor
from scrapy_maintext.neural.decision import DecodeParams
from scrapy_maintext.neural.groups import path_signatures
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR, BlockModel
from scrapy_maintext.neural.items import (
    Items,
    ListDecoding,
    decide_listing,
    keep_items,
    pooled,
    repeated_items,
)
from scrapy_maintext.neural.segment import RawBlock, segment

CARDS = "".join(
    f"<li class='card c{i}'><h3>Event number {i} in the hall</h3>"
    f"<p>What happens at event {i}: music, talks and food for the whole family.</p>"
    f"<span class='date'>{i} May</span></li>"
    for i in range(5)
)
PAGE = (
    "<html><body><nav><a href='/'>Home</a> <a href='/a'>About</a></nav>"
    "<h1>Events this month</h1><p>The hall's programme for May.</p>"
    f"<ul class='events'>{CARDS}</ul><footer><p>Contact us</p></footer></body></html>"
)
BASE = DecodeParams(0.5, 0.0, 0.0, 0)


def _raw() -> list[RawBlock]:
    return segment(lxml.html.fromstring(PAGE))


def _items() -> tuple[list[RawBlock], Items]:
    raw = _raw()
    return raw, repeated_items(raw, path_signatures(raw), 3)


def _rows(raw: list[RawBlock], start: str) -> np.ndarray:
    return np.array([b.text.startswith(start) for b in raw])


def test_the_cards_are_items_of_one_group_and_their_parts_columns() -> None:
    raw, items = _items()
    heads, texts = _rows(raw, "Event number"), _rows(raw, "What happens")
    assert heads.sum() == 5 and texts.sum() == 5
    inside = items.group >= 0
    # Every block of every card, and nothing else, is in the group.
    assert set(items.group[inside]) == {0}
    assert [b.text for b, g in zip(raw, inside, strict=True) if not g] == [
        "Home About",
        "Events this month",
        "The hall's programme for May.",
        "Contact us",
    ]
    # Heading and text of one card share its item; each card is its own.
    assert (items.item[heads] == items.item[texts]).all()
    assert sorted(items.item[heads]) == [0, 1, 2, 3, 4]
    assert len(set(items.column[heads])) == 1 and items.column[heads][0] >= 0
    assert set(items.column[heads]) != set(items.column[texts])
    assert Items.from_json(items.to_json()).to_json() == items.to_json()


def test_too_few_rows_make_no_items() -> None:
    raw = _raw()
    items = repeated_items(raw, path_signatures(raw), 6)
    assert (items.group < 0).all() and (items.column < 0).all()


def test_pooling_moves_a_column_towards_its_mean() -> None:
    probs = np.array([0.9, 0.1, 0.2, 0.5], dtype=np.float32)
    column = np.array([0, 0, 0, -1])
    np.testing.assert_allclose(pooled(probs, column, 1.0), [0.4, 0.4, 0.4, 0.5], atol=1e-6)
    np.testing.assert_allclose(pooled(probs, column, 0.5), [0.65, 0.25, 0.3, 0.5], atol=1e-6)
    assert pooled(probs, column, 0.0) is probs


def test_items_mostly_kept_keep_their_kept_columns_in_every_item() -> None:
    raw, items = _items()
    heads, texts = _rows(raw, "Event number"), _rows(raw, "What happens")
    dates = _rows(raw, "0 May") | _rows(raw, "1 May") | _rows(raw, "2 May")
    keep = texts.copy()
    keep[np.flatnonzero(texts)[3:]] = False  # three card texts of five
    keep[np.flatnonzero(heads)[:4]] = True  # four headings of five
    # Columns kept in at least half their rows: headings and texts, not the dates.
    out = keep_items(keep, items, ListDecoding(keep_share=0.7, column_share=0.5))
    assert (out == heads | texts).all()
    assert not (out & dates).any()
    # column_share 0: every block of the items.
    whole = keep_items(keep, items, ListDecoding(keep_share=0.7, column_share=0.0))
    assert (whole == (items.group >= 0)).all()
    # Four cards of five keep a block: under a keep share of 0.9 the decision stands.
    assert (keep_items(keep, items, ListDecoding(keep_share=0.9)) == keep).all()


def test_decide_listing_moves_the_threshold_and_leaves_the_rest() -> None:
    raw, items = _items()
    probs = np.full(len(raw), 0.45, dtype=np.float32)
    lengths = np.array([len(b.text) for b in raw], dtype=np.float64)
    assert not decide_listing(probs, lengths, items, BASE, ListDecoding()).keep.any()
    assert decide_listing(probs, lengths, items, BASE, ListDecoding(delta=-0.1)).keep.all()


@pytest.mark.parametrize(
    "spec",
    [
        [],
        {"delta": "low"},
        {"delta": 1.5},
        {"pool": 2},
        {"min_rows": 1},
        {"min_rows": 2.5},
        {"column_share": -1},
        {"threshold": 0.3},
        {"keep_share": True},
        {"min_group_share": 1.5},
    ],
)
def test_bad_listing_settings_are_refused(spec: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        ListDecoding.from_config(spec)


def test_listing_settings_read_from_config() -> None:
    spec = {"delta": -0.05, "pool": 1.0, "keep_share": 0.7, "column_share": 0.0, "min_rows": 3}
    assert ListDecoding.from_config(spec) == ListDecoding(
        delta=-0.05, pool=1.0, keep_share=0.7, column_share=0.0, min_rows=3
    )


FIXTURES = Path(__file__).parent / "fixtures" / "neural"


def _collection() -> Any:
    return lxml.html.fromstring((FIXTURES / "collection.html").read_text(encoding="utf-8"))


def test_the_shipped_model_decodes_predicted_collections_by_their_items() -> None:
    extractor = default_extractor()
    assert set(extractor.by_type) == {"collection", "documentation"}
    tree = _collection()
    plain = [b.text for b in extractor.extract(tree).blocks]
    typed = [b.text for b in extractor.extract(tree, page_type="collection").blocks]
    # The model keeps every card's name and text but none of their prices; a collection
    # keeps its items whole.
    assert "Tidal mug" in plain and "£28" not in plain
    assert set(plain) < set(typed)
    assert {"£28", "£46", "£85"} <= set(typed)
    assert "Sign up to our newsletter for new collections." not in typed
    # Other types, or none, decode as the folder's default.
    for other in (None, "article", "listing"):
        assert [b.text for b in extractor.extract(tree, page_type=other).blocks] == plain


def test_the_engines_hand_the_predicted_type_to_the_model() -> None:
    tree = _collection()
    options = ExtractOptions(engine="neural")
    plain = run_engine(tree, None, options).blocks
    typed = run_engine(tree, None, options, None, "collection").blocks
    assert "£28" not in [b.text for b in plain]
    assert "£28" in [b.text for b in typed]


def test_a_folder_with_bad_by_type_settings_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "typed"
    shutil.copytree(MODELS_DIR / DEFAULT_VERSION, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    for bad in ([], {"collection": {"pool": 3}}, {"collection": {"threshold": 0.2}}):
        config["by_type"] = bad
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
        with pytest.raises((ValueError, TypeError)):
            NeuralExtractor(BlockModel(folder))
