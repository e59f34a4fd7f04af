"""A failing neural model is counted and reported, never hidden behind the fallback; a
model whose sizes do not fit the feature code is refused when it loads.

The broken model is a real ONNX model (made here with onnx.helper) with the shipped
config.json: it loads, then fails on every page at run time, as a model exported with the
wrong inputs would.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import lxml.html
import onnx
import pytest
from onnx import TensorProto, helper
from scrapy.utils.test import get_crawler
from scrapy_maintext import ExtractOptions, extract
from scrapy_maintext.extraction import engines
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.inference import (
    DEFAULT_VERSION,
    MODELS_DIR,
    BlockModel,
    ModelMismatchError,
)
from scrapy_maintext.pipelines.extraction import ExtractionPipeline

PAGE = Path(__file__).parent / "fixtures" / "extraction" / "site" / "article.html"
URL = "https://gazette.example/news/tidal.html"


def _broken_model(directory: Path) -> Path:
    """A model that takes one input ("dense") where the runtime feeds three."""
    dense = helper.make_tensor_value_info("dense", TensorProto.FLOAT, None)
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)
    graph = helper.make_graph(
        [helper.make_node("Identity", ["dense"], ["logits"])], "broken", [dense], [logits]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    directory.mkdir()
    onnx.save(model, str(directory / "model.onnx"))
    _write_config(directory)
    return directory


def _write_config(directory: Path, changes: dict[str, object] | None = None) -> None:
    """The shipped config.json, changed, without its cascade (the next model is elsewhere)."""
    config = json.loads((MODELS_DIR / DEFAULT_VERSION / "config.json").read_text())
    config.pop("cascade", None)
    (directory / "config.json").write_text(json.dumps({**config, **(changes or {})}))


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NeuralExtractor:
    """The broken model, installed as the process's neural engine for this test."""
    extractor = NeuralExtractor(BlockModel(_broken_model(tmp_path / "broken")))
    monkeypatch.setattr(engines, "load_neural", lambda model=None: extractor)
    return extractor


def test_broken_model_reports_its_error_instead_of_being_unsure(
    broken: NeuralExtractor,
) -> None:
    result = broken.extract(lxml.html.fromstring(PAGE.read_bytes()), URL)
    assert result.fallback and result.error
    assert result.error.split(":")[0] in ("InvalidArgument", "Fail", "RuntimeException")


def test_auto_falls_back_but_keeps_the_error(broken: NeuralExtractor) -> None:
    doc = extract(PAGE.read_bytes(), URL, ExtractOptions(engine="auto"))
    assert doc.extractor == "trafilatura" and doc.text
    assert doc.neural_error
    assert "neural_error" not in doc.to_dict()


def test_neural_engine_fails_the_page(broken: NeuralExtractor) -> None:
    doc = extract(PAGE.read_bytes(), URL, ExtractOptions(engine="neural"))
    assert doc.reason == "neural-error" and doc.text == ""
    assert doc.neural_error


def test_pipeline_counts_every_error_and_warns_once(
    broken: NeuralExtractor, caplog: pytest.LogCaptureFixture
) -> None:
    crawler = get_crawler(settings_dict={"EXTRACT_WORKERS": 0})
    crawler.stats.open_spider()
    pipeline = ExtractionPipeline(crawler)
    caplog.set_level(logging.INFO, logger="scrapy_maintext")
    for _ in range(3):
        pipeline._count(extract(PAGE.read_bytes(), URL, ExtractOptions(engine="auto")))
    assert crawler.stats.get_value("extract/neural_error") == 3
    assert crawler.stats.get_value("extract/fallback") == 3
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "extract/neural_error" in warnings[0].getMessage()


def _model_dir(directory: Path, config_changes: dict[str, object]) -> Path:
    directory.mkdir()
    shutil.copy(MODELS_DIR / DEFAULT_VERSION / "model.onnx", directory / "model.onnx")
    _write_config(directory, config_changes)
    return directory


@pytest.mark.parametrize(
    "changes", [{"hash_size": 1 << 14}, {"struct_slots": 16}, {"dense_size": 30}]
)
def test_model_config_that_does_not_fit_the_features_is_refused(
    tmp_path: Path, changes: dict[str, object]
) -> None:
    with pytest.raises(ModelMismatchError, match=next(iter(changes))):
        BlockModel(_model_dir(tmp_path / "model", changes))


def test_onnx_inputs_that_do_not_fit_the_features_are_refused(tmp_path: Path) -> None:
    inputs = [
        helper.make_tensor_value_info("dense", TensorProto.FLOAT, [1, "n", 20]),
        helper.make_tensor_value_info("struct_ids", TensorProto.INT64, [1, "n", 32]),
        helper.make_tensor_value_info("word_ids", TensorProto.INT64, [1, "n", 16]),
    ]
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)
    node = helper.make_node("ReduceSum", ["dense"], ["logits"], keepdims=0)
    graph = helper.make_graph([node], "narrow", inputs, [logits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 8
    directory = tmp_path / "narrow"
    directory.mkdir()
    onnx.save(model, str(directory / "model.onnx"))
    _write_config(directory)
    with pytest.raises(ModelMismatchError, match="input dense 20"):
        BlockModel(directory)


def test_shipped_model_fits() -> None:
    BlockModel(MODELS_DIR / DEFAULT_VERSION)
