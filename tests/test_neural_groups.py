"""Repeated structures are kept as a group (``neural.groups``) where the model folder asks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lxml.html
import numpy as np
import pytest
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.groups import GroupParams, keep_groups, path_signature, slots
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR
from scrapy_maintext.neural.segment import segment

ROWS = "".join(
    f"<li class='result item-{i}' id='r{i}'><h3>Result number {i} of the search</h3>"
    f"<p>Snippet {i}: a few words of what this page says about the query.</p></li>"
    for i in range(6)
)
PAGE = f"<html><body><nav><a href='/'>Home</a></nav><ul class='results'>{ROWS}</ul></body></html>"


def _raw() -> list:  # type: ignore[type-arg]
    return segment(lxml.html.fromstring(PAGE))


def test_rows_share_a_signature_whatever_their_numbers() -> None:
    raw = _raw()
    heads = {path_signature(b) for b in raw if b.text.startswith("Result number")}
    snippets = {path_signature(b) for b in raw if b.text.startswith("Snippet")}
    assert len(heads) == 1 and len(snippets) == 1 and heads != snippets
    sigs = [path_signature(b) for b in raw]
    assert sorted(len(s) for s in slots(sigs, 3)) == [6, 6]


def test_a_slot_partly_kept_is_kept_whole_and_a_small_one_left_alone() -> None:
    raw = _raw()
    sigs = [path_signature(b) for b in raw]
    chars = np.array([len(b.text) for b in raw], dtype=np.float64)
    heads = np.array([b.text.startswith("Result number") for b in raw])
    keep = heads.copy()
    keep[np.flatnonzero(heads)[1:]] = False  # the model kept one title of six
    whole = keep_groups(sigs, chars, keep, GroupParams(3, 0.15))
    assert (whole == heads).all()
    # One of six is under a keep share of 0.25: the model's decision stands.
    assert (keep_groups(sigs, chars, keep, GroupParams(3, 0.25)) == keep).all()
    # A slot holding under min_page_share of the page's text is not the page's content.
    assert (keep_groups(sigs, chars, keep, GroupParams(3, 0.15, 0.9)) == keep).all()


@pytest.mark.parametrize(
    "spec",
    [[], {"min_rows": 1, "keep_share": 0.2}, {"min_rows": 3, "keep_share": 1.5}, {"min_rows": 3}],
)
def test_bad_group_settings_are_refused(spec: object) -> None:
    with pytest.raises(ValueError):
        GroupParams.from_config(spec)


def test_model_folder_with_groups_keeps_the_rows(tmp_path: Path) -> None:
    folder = tmp_path / "grouped"
    shutil.copytree(MODELS_DIR / DEFAULT_VERSION, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["groups"] = {"min_rows": 3, "keep_share": 0.15, "min_page_share": 0.0}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    extractor = NeuralExtractor.load(folder)
    assert extractor.groups == GroupParams(3, 0.15, 0.0)
    tree = lxml.html.fromstring(PAGE)
    result = extractor.extract(tree)
    assert result.keep is not None and result.signatures is not None
    kept = {b.text for b in result.blocks}
    for slot in slots(result.signatures, 3):
        texts = {raw.text for raw in np.array(result.segments, dtype=object)[slot]}
        # Every repeated slot is all kept or all dropped where the model kept a share of it.
        assert texts <= kept or not texts & kept or len(texts & kept) / len(texts) < 0.15
