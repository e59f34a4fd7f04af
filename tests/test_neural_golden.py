"""Golden features and predictions on hand-written fixture pages.

The golden files (``tests/fixtures/neural/*.golden.json``, written by
``python -m scrapy_maintext.models.golden``
right after training) pin segmentation, features (stacking columns included) and the shipped
model, so run-time preprocessing cannot drift from what the model was trained on. The int8 model
is checked against the float one in ``test_neural_model_path.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lxml.html
import numpy as np
import pytest
from scrapy_maintext.neural import NeuralExtractor, default_extractor
from scrapy_maintext.neural.features import featurize
from scrapy_maintext.neural.inference import MODELS_DIR, OFFERED_VERSIONS
from scrapy_maintext.neural.segment import segment

FIXTURES = Path(__file__).parent / "fixtures" / "neural"
PAGES = sorted(FIXTURES.glob("*.html"))
#: Same model, other CPU: float kernels (softmax, layer norm) may round differently and shift
#: an activation by one quantisation step; the fixtures keep every block >= 0.09 from the
#: threshold, so the kept blocks must still match exactly.
RUN_TOLERANCE = 0.01


def _load(page: Path) -> tuple[Any, dict[str, Any]]:
    tree = lxml.html.fromstring(page.read_text(encoding="utf-8"))
    golden = json.loads(page.with_suffix(".golden.json").read_text(encoding="utf-8"))
    return tree, golden


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_blocks_and_features_match_golden(page: Path) -> None:
    tree, golden = _load(page)
    raw = segment(tree)
    assert [b.to_block().to_dict() for b in raw] == golden["blocks"]
    feats = featurize(raw)
    np.testing.assert_allclose(feats.dense, np.array(golden["dense"]), atol=2e-6)
    assert feats.struct_ids.tolist() == golden["struct_ids"]
    assert feats.word_ids.tolist() == golden["word_ids"]
    extractor = default_extractor()
    _, stacked = extractor.features(tree)
    if "stack" in golden:
        np.testing.assert_allclose(stacked.stack, np.array(golden["stack"]), atol=2e-6)
    if extractor.cascade is not None:
        _, next_feats = extractor.cascade.next.features(tree)
        np.testing.assert_allclose(next_feats.stack, np.array(golden["next"]["stack"]), atol=2e-6)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_predictions_match_golden(page: Path) -> None:
    tree, golden = _load(page)
    extractor = default_extractor()
    assert extractor.version == golden["model_version"]
    probs = extractor.model.predict(extractor.features(tree)[1])
    np.testing.assert_allclose(probs, np.array(golden["probs"]), atol=RUN_TOLERANCE)
    result = extractor.extract(tree)
    assert [b.to_dict() for b in result.blocks] == golden["kept"]
    assert result.fallback == golden["fallback"]
    _kept_by_type_match(extractor, tree, golden)
    if extractor.cascade is not None:
        nxt = extractor.cascade.next
        assert nxt.version == golden["next"]["model_version"]
        next_probs = nxt.model.predict(nxt.features(tree)[1])
        np.testing.assert_allclose(
            next_probs, np.array(golden["next"]["probs"]), atol=RUN_TOLERANCE
        )
        assert result.escalated == golden["escalated"]


@pytest.mark.parametrize("version", OFFERED_VERSIONS)
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_offered_model_predictions_match_golden(page: Path, version: str) -> None:
    # A model folder shipped beside the default (EXTRACT_MODEL points to it) has golden
    # files of its own: ``models.golden --model crawler/neural/models/<version>``.
    tree, _ = _load(page)
    path = page.with_name(f"{page.stem}.{version}.golden.json")
    golden = json.loads(path.read_text(encoding="utf-8"))
    extractor = NeuralExtractor.load(MODELS_DIR / version)
    assert extractor.version == golden["model_version"] == version
    raw, feats = extractor.features(tree)
    assert [b.to_block().to_dict() for b in raw] == golden["blocks"]
    probs = extractor.model.predict(feats)
    np.testing.assert_allclose(probs, np.array(golden["probs"]), atol=RUN_TOLERANCE)
    result = extractor.extract(tree)
    assert [b.to_dict() for b in result.blocks] == golden["kept"]
    assert result.fallback == golden["fallback"]
    _kept_by_type_match(extractor, tree, golden)


def _kept_by_type_match(extractor: NeuralExtractor, tree: Any, golden: dict[str, Any]) -> None:
    """A folder that decodes some predicted types by their items pins what each keeps."""
    assert set(golden.get("kept_by_type", {})) == set(extractor.by_type)
    for name, kept in golden.get("kept_by_type", {}).items():
        blocks = extractor.extract(tree, page_type=name).blocks
        assert [b.to_dict() for b in blocks] == kept, name


def test_article_keeps_content_drops_boilerplate() -> None:
    tree, _ = _load(FIXTURES / "article.html")
    text = "\n".join(b.text for b in default_extractor().extract(tree).blocks)
    assert "four hundred volunteers" in text
    assert "Subscribe" not in text
    assert "All rights reserved" not in text


def test_load_is_cached_and_api_shape() -> None:
    assert NeuralExtractor.load() is NeuralExtractor.load(None)
    assert default_extractor() is default_extractor()
    result = default_extractor().extract(lxml.html.fromstring("<p>x</p>"))
    assert 0.0 <= result.confidence <= 1.0
