"""Write the golden files that pin preprocessing and predictions on the test fixture pages.

    python -m scrapy_maintext.models.golden [--model crawler/neural/models/v1] [--float PATH]

For every ``tests/fixtures/neural/*.html`` this writes ``*.golden.json`` with the blocks, the
feature arrays, the int8 model's probabilities and (when the float ONNX model from the last
training run is at hand) the float model's probabilities, so that a test can check that the
shipped int8 model agrees with the float one without torch or the float file.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from scrapy_maintext.models.dataset import FLOAT_MODEL
from scrapy_maintext.models.systems import parse_html
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.features import featurize
from scrapy_maintext.neural.inference import MODELS_DIR
from scrapy_maintext.neural.segment import segment

logger = logging.getLogger(__name__)

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "neural"
#: Decimals kept in golden floats (features are float32; 6 decimals is well within precision).
DECIMALS = 6


def float_probs(path: Path, feats: Any) -> list[float]:
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = {
        "dense": feats.dense[None],
        "struct_ids": feats.struct_ids[None],
        "word_ids": feats.word_ids[None],
    }
    logits = np.asarray(sess.run(["logits"], inputs)[0][0], dtype=np.float64)
    return [round(float(p), 4) for p in 1.0 / (1.0 + np.exp(-logits))]


def golden_for(page: Path, extractor: NeuralExtractor, float_model: Path | None) -> dict[str, Any]:
    tree = parse_html(page.read_text(encoding="utf-8"))
    raw = segment(tree)
    feats = featurize(raw)
    probs = extractor.model.predict(feats)
    result = extractor.extract(tree)
    data: dict[str, Any] = {
        "model_version": extractor.version,
        "blocks": [b.to_block().to_dict() for b in raw],
        "dense": np.round(feats.dense.astype(np.float64), DECIMALS).tolist(),
        "struct_ids": feats.struct_ids.tolist(),
        "word_ids": feats.word_ids.tolist(),
        "probs": [round(float(p), 4) for p in probs],
        "kept": [b.to_dict() for b in result.blocks],
        "fallback": result.fallback,
    }
    if float_model is not None and float_model.exists():
        data["float_probs"] = float_probs(float_model, feats)
    return data


def write_goldens(model_dir: Path, float_model: Path | None) -> list[Path]:
    extractor = NeuralExtractor.load(model_dir)
    written = []
    for page in sorted(FIXTURES.glob("*.html")):
        out = page.with_suffix(".golden.json")
        out.write_text(
            json.dumps(golden_for(page, extractor, float_model), indent=1) + "\n", encoding="utf-8"
        )
        written.append(out)
    logger.info("wrote %d golden files", len(written))
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(MODELS_DIR / "v1"))
    parser.add_argument("--float", default=str(FLOAT_MODEL), dest="float_model")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    write_goldens(Path(args.model), Path(args.float_model))


if __name__ == "__main__":
    main()
