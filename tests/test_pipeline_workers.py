"""The extraction pool's workers: started with the model loaded, Scrapy-free; the crawl
process's collector settings around a crawl."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler
from scrapy_maintext.extraction import ExtractOptions
from scrapy_maintext.extraction.worker import WorkerStatus, warm_up
from scrapy_maintext.neural.inference import MODELS_DIR
from scrapy_maintext.pipeline import ExtractConfig, ExtractionPipeline, ExtractionRunner

from tests import worker_probe

WAIT = 120


def test_workers_hold_the_model_before_their_first_page_and_no_scrapy() -> None:
    runner = ExtractionRunner(ExtractConfig(workers=1))
    assert runner.pool is not None
    try:
        # The first task the worker runs: only its initializer can have loaded the model.
        held = runner.pool.schedule(worker_probe.loaded).result(timeout=WAIT)
    finally:
        runner.close()
    assert held == {"model": True, "scrapy": False, "twisted": False}


def test_trafilatura_workers_load_no_model() -> None:
    runner = ExtractionRunner(ExtractConfig(options=ExtractOptions(engine="trafilatura")))
    assert runner.pool is not None
    try:
        held = runner.pool.schedule(worker_probe.loaded).result(timeout=WAIT)
    finally:
        runner.close()
    assert held["model"] is False


def test_warm_up_reports_why_a_model_cannot_load(tmp_path: Path) -> None:
    model = shutil.copytree(MODELS_DIR / "v2", tmp_path / "damaged")
    (model / "model.onnx").write_bytes(b"not an ONNX model")
    status = warm_up(ExtractOptions(model=str(model)))
    assert status.neural_error is not None
    assert warm_up(ExtractOptions(engine="trafilatura", model=str(model))) == WorkerStatus()
    assert warm_up(ExtractOptions()) == WorkerStatus()


def test_model_setting_must_name_a_model_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="EXTRACT_MODEL"):
        ExtractConfig.from_settings(Settings({"EXTRACT_MODEL": str(tmp_path)}))
    model = shutil.copytree(MODELS_DIR / "v2", tmp_path / "mine")
    config = ExtractConfig.from_settings(Settings({"EXTRACT_MODEL": str(model)}))
    assert config.options.model == str(model.resolve())


@pytest.mark.parametrize("freeze", [True, False])
def test_the_heap_is_frozen_for_the_crawl_only(freeze: bool) -> None:
    settings = {"EXTRACT_WORKERS": 1, "EXTRACT_GC_FREEZE": freeze, "EXTRACT_ENGINE": "trafilatura"}
    crawler = get_crawler(settings_dict=settings)
    pipeline = ExtractionPipeline.from_crawler(crawler)
    pipeline.open_spider()
    try:
        assert (gc.get_freeze_count() > 0) is freeze
    finally:
        pipeline.close_spider()
    assert gc.get_freeze_count() == 0
