"""Model folders for the tests: ``EXTRACT_MODEL`` and ``maintext extract --model``, and the
stacked model and cascade that the shipped model no longer uses (``models/CHANGELOG.md``,
v4.1), kept to test those mechanisms."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR

#: v2, stacked on trafilatura (its config names the ``"stack"`` reference); v4's cascade
#: handed its unsure pages to it.
STACKED_MODEL = Path(__file__).resolve().parent / "fixtures" / "neural" / "v2"


def damaged_model(directory: Path) -> Path:
    """A copy of the stacked v2 whose ``model.onnx`` no runtime can load."""
    model = shutil.copytree(STACKED_MODEL, directory / "damaged")
    (model / "model.onnx").write_bytes(b"not an ONNX model")
    return model


def cascade_model(directory: Path, spec: object) -> Path:
    """The shipped model in ``directory/first`` with the cascade entry ``spec`` (v4 was
    ``{"next": "v2", "gate": 0.8}``, with v2 beside it)."""
    shipped = MODELS_DIR / "v4.1"  # v4's first model
    folder = directory / "first"
    folder.mkdir()
    shutil.copy(shipped / "model.onnx", folder / "model.onnx")
    config = json.loads((shipped / "config.json").read_text(encoding="utf-8"))
    config["cascade"] = spec
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def decoded_model(directory: Path, **decoding: float) -> Path:
    """The default model in ``directory/decoded`` with other decoding values in its
    ``config.json`` (``threshold``, ``min_confidence``, ...): a low threshold keeps blocks a
    test needs the engine to keep, a high page-confidence floor makes it fall back."""
    shipped = MODELS_DIR / DEFAULT_VERSION
    folder = directory / "decoded"
    folder.mkdir()
    shutil.copy(shipped / "model.onnx", folder / "model.onnx")
    config = json.loads((shipped / "config.json").read_text(encoding="utf-8"))
    config.update(decoding)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder
