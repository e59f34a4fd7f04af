"""Model folders for the tests of ``EXTRACT_MODEL`` and ``maintext extract --model``."""

from __future__ import annotations

import shutil
from pathlib import Path

from scrapy_maintext.neural.inference import MODELS_DIR


def damaged_model(directory: Path) -> Path:
    """A copy of the shipped v2 whose ``model.onnx`` no runtime can load."""
    model = shutil.copytree(MODELS_DIR / "v2", directory / "damaged")
    (model / "model.onnx").write_bytes(b"not an ONNX model")
    return model
