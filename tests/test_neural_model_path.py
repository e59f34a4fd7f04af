"""The shipped model really runs: int8 against float on the fixture pages, and ``auto`` takes
the neural path on confident pages (a silently broken model must fail here)."""

from __future__ import annotations

import json
from pathlib import Path

import lxml.html
import numpy as np
import onnxruntime as ort
import pytest
from lxml import etree
from scrapy_maintext import Document, ExtractOptions, extract
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.engines import run_engine
from scrapy_maintext.extraction.options import model_folder
from scrapy_maintext.fields.metadata import apply_metadata
from scrapy_maintext.neural import NeuralExtractor, default_extractor
from scrapy_maintext.neural.inference import (
    DEFAULT_VERSION,
    INPUT_NAMES,
    MODELS_DIR,
    OFFERED_VERSIONS,
)

from tests.model_folders import STACKED_MODEL

FIXTURES = Path(__file__).parent / "fixtures" / "neural"
PAGES = sorted(FIXTURES.glob("*.html"))
ARTICLE = Path(__file__).parent / "fixtures" / "extraction" / "site" / "article.html"
URL = "https://gazette.example/news/tidal.html"
#: int8 vs float probabilities: dynamic quantisation moves them by ~0.003 on average on the
#: validation pages (config.json); a block may move more, a broken export far more.
INT8_TOLERANCE = 0.06
#: Page confidence of a clear article or documentation page (the fallback starts below the
#: tuned ``min_confidence``; these pages sit well above it).
MIN_CONFIDENCE = 0.5


def _chain() -> list[NeuralExtractor]:
    """The shipped model and, for a cascade, the model it hands unsure pages to."""
    first = default_extractor()
    return [first] if first.cascade is None else [first, first.cascade.next]


def _float_session(version: str) -> ort.InferenceSession:
    path = FIXTURES / f"{version}.float.onnx"
    assert path.exists(), f"float model of the shipped version missing: {path}"
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_int8_model_agrees_with_float_model(page: Path) -> None:
    for extractor in _chain():
        _agrees_with_float(extractor, page)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_int8_stacked_fixture_agrees_with_float_model(page: Path) -> None:
    # The stacked model kept for the stacking and cascade tests (tests/model_folders.py).
    _agrees_with_float(NeuralExtractor.load(STACKED_MODEL), page)


def _agrees_with_float(extractor: NeuralExtractor, page: Path) -> None:
    tree = lxml.html.fromstring(page.read_text(encoding="utf-8"))
    _, feats = extractor.features(tree)
    int8 = extractor.model.predict(feats)
    arrays = (feats.model_dense(), feats.struct_ids, feats.word_ids)
    inputs = {name: a[None] for name, a in zip(INPUT_NAMES, arrays, strict=True)}
    session = _float_session(extractor.version)
    logits = np.asarray(session.run(["logits"], inputs)[0][0], dtype=np.float64)
    flt = 1.0 / (1.0 + np.exp(-logits))
    assert np.abs(int8 - flt).max() < INT8_TOLERANCE
    threshold = extractor.params.threshold
    decided = np.abs(flt - threshold) > INT8_TOLERANCE
    assert ((int8 >= threshold) == (flt >= threshold))[decided].all()


def test_default_model_is_the_shipped_version() -> None:
    assert default_extractor().version == DEFAULT_VERSION
    config = json.loads((MODELS_DIR / DEFAULT_VERSION / "config.json").read_text())
    assert config["version"] == DEFAULT_VERSION
    # Model files under 10 MB in all (issue 7), a cascade's two models together.
    sizes = [(e.model.directory / "model.onnx").stat().st_size for e in _chain()]
    assert sum(sizes) < 10_000_000


@pytest.mark.parametrize("name", ["article.html", "docs.html"])
def test_auto_uses_the_neural_model_on_confident_pages(name: str) -> None:
    path = ARTICLE if name == "article.html" else FIXTURES / name
    doc = extract(path.read_bytes(), URL, ExtractOptions(engine="auto"))
    assert doc.extractor == "neural", "auto fell back to trafilatura on a clear page"
    assert doc.neural_error is None
    assert doc.model_version == DEFAULT_VERSION
    assert doc.confidence is not None and doc.confidence >= MIN_CONFIDENCE
    assert doc.text


@pytest.mark.parametrize("version", OFFERED_VERSIONS)
def test_offered_model_is_chosen_by_its_name_or_folder(version: str) -> None:
    # Issue 30: a model folder shipped beside the default; EXTRACT_MODEL / --model name it.
    assert model_folder(version) == str((MODELS_DIR / version).resolve())
    assert model_folder(str(MODELS_DIR / version)) == model_folder(version)
    with pytest.raises(ValueError, match="EXTRACT_MODEL"):
        model_folder("v0-none", "EXTRACT_MODEL")
    options = ExtractOptions(engine="auto", model=model_folder(version))
    doc = extract(ARTICLE.read_bytes(), URL, options)
    assert doc.model_version == version and doc.extractor == "neural"
    assert "tidal lagoon" in doc.text


def test_auto_article_text_is_the_neural_text() -> None:
    html = ARTICLE.read_bytes()
    auto = extract(html, URL, ExtractOptions(engine="auto", with_metadata=False))
    neural = extract(html, URL, ExtractOptions(engine="neural", with_metadata=False))
    assert auto.text == neural.text
    assert "tidal lagoon" in auto.text
    for chrome in ("Weather", "Privacy", "All rights reserved"):
        assert chrome not in auto.text


def test_auto_engine_and_metadata_leave_the_tree_intact() -> None:
    # Neither the stacked trafilatura run nor the metadata copy the tree first any more:
    # both must leave the caller's tree exactly as it was.
    tree = parse_page(ARTICLE.read_bytes(), ExtractOptions()).tree
    assert tree is not None
    before = etree.tostring(tree)
    apply_metadata(Document(url=URL), tree, URL)
    run_engine(tree, URL, ExtractOptions(engine="auto"))
    assert etree.tostring(tree) == before
