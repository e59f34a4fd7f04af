"""The extraction pool's workers: started with the model loaded, Scrapy-free; the crawl
process's collector settings around a crawl."""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler
from scrapy_maintext.extraction import ExtractOptions
from scrapy_maintext.extraction.worker import WorkerStatus, warm_up
from scrapy_maintext.pipelines.config import ExtractConfig
from scrapy_maintext.pipelines.extraction import ExtractionPipeline
from scrapy_maintext.pipelines.runner import ExtractionRunner

from tests import worker_probe
from tests.model_folders import STACKED_MODEL, cascade_model, damaged_model

WAIT = 120


def test_workers_hold_the_model_before_their_first_page_and_no_scrapy() -> None:
    runner = ExtractionRunner(ExtractConfig.with_defaults(workers=1))
    assert runner.pool is not None
    try:
        # The first task the worker runs: only its initializer can have loaded the model.
        held = runner.pool.schedule(worker_probe.loaded).result(timeout=WAIT)
    finally:
        runner.close()
    # dateparser's locale data was compiled by the fork server (extraction.preload).
    assert held == {"model": True, "scrapy": False, "twisted": False, "date_locales": True}


def test_trafilatura_workers_load_no_model() -> None:
    runner = ExtractionRunner(
        ExtractConfig.with_defaults(options=ExtractOptions(engine="trafilatura"))
    )
    assert runner.pool is not None
    try:
        held = runner.pool.schedule(worker_probe.loaded).result(timeout=WAIT)
    finally:
        runner.close()
    assert held["model"] is False


def test_warm_up_reports_why_a_model_cannot_load(tmp_path: Path) -> None:
    model = damaged_model(tmp_path)
    status = warm_up(ExtractOptions(model=str(model)))
    assert status.neural_error is not None
    assert warm_up(ExtractOptions(engine="trafilatura", model=str(model))) == WorkerStatus()
    assert warm_up(ExtractOptions()) == WorkerStatus()


def test_model_setting_must_name_a_model_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="EXTRACT_MODEL"):
        ExtractConfig.from_settings(Settings({"EXTRACT_MODEL": str(tmp_path)}))
    # A cascade (v4's: unsure pages to v2) copied without the model it hands them to.
    cascade = cascade_model(tmp_path, {"next": "v2", "gate": 0.8})
    with pytest.raises(ValueError, match=r"its cascade: no model\.onnx or config\.json"):
        ExtractConfig.from_settings(Settings({"EXTRACT_MODEL": str(cascade)}))
    shutil.copytree(STACKED_MODEL, tmp_path / "v2")
    config = ExtractConfig.from_settings(Settings({"EXTRACT_MODEL": str(cascade)}))
    assert config.options.model == str(cascade.resolve())
    model = shutil.copytree(STACKED_MODEL, tmp_path / "mine")
    config = ExtractConfig.from_settings(Settings({"EXTRACT_MODEL": str(model)}))
    assert config.options.model == str(model.resolve())


def _opened(settings: dict[str, object]) -> ExtractionPipeline:
    crawler = get_crawler(settings_dict={"EXTRACT_WORKERS": 1, **settings})
    pipeline = ExtractionPipeline.from_crawler(crawler)
    pipeline.open_spider()
    return pipeline


@pytest.mark.parametrize("freeze", [True, False])
def test_the_heap_is_frozen_for_the_crawl_only(freeze: bool) -> None:
    pipeline = _opened({"EXTRACT_GC_FREEZE": freeze, "EXTRACT_ENGINE": "trafilatura"})
    try:
        assert (gc.get_freeze_count() > 0) is freeze
    finally:
        pipeline.close_spider()
    assert gc.get_freeze_count() == 0


def test_two_crawls_in_one_process_thaw_the_heap_when_the_last_closes() -> None:
    # Frozen objects leave the count when they are freed, so counts only ever go down
    # unless the heap is frozen again.
    first = _opened({"EXTRACT_ENGINE": "trafilatura"})
    frozen = gc.get_freeze_count()
    second = _opened({"EXTRACT_ENGINE": "trafilatura"})
    assert 0 < gc.get_freeze_count() <= frozen  # not frozen again with the second crawl
    first.close_spider()
    assert gc.get_freeze_count() > 0
    second.close_spider()
    assert gc.get_freeze_count() == 0


def test_a_heap_frozen_by_the_project_is_left_frozen() -> None:
    gc.freeze()
    try:
        _opened({"EXTRACT_ENGINE": "trafilatura"}).close_spider()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


@pytest.mark.slow  # a fresh interpreter
def test_the_crawl_process_never_imports_the_model_runtime() -> None:
    # The model runs in the workers only: onnxruntime in the crawl process would only
    # weigh on its heap (and on every pass of its garbage collector).
    code = (
        "import sys\n"
        "from scrapy.utils.test import get_crawler\n"
        "from scrapy_maintext.pipelines.extraction import ExtractionPipeline\n"
        "crawler = get_crawler(settings_dict={'EXTRACT_WORKERS': 1})\n"
        "pipeline = ExtractionPipeline.from_crawler(crawler)\n"
        "pipeline.open_spider()\n"
        "pipeline.close_spider()\n"
        "print('onnxruntime' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT, check=True
    )
    assert result.stdout.strip() == "False"
