"""Write the golden files that pin preprocessing and predictions on the test fixture pages.

    python -m scrapy_maintext.models.golden [--model crawler/neural/models/v4.1]

For every ``tests/fixtures/neural/*.html`` this writes ``*.golden.json`` with the blocks, the
feature arrays (stacking columns included) and the int8 model's probabilities (for a model
folder offered beside the default, ``--model crawler/neural/models/v4.1``:
``*.<version>.golden.json``); for a cascade,
also the next model's stacking columns and probabilities. The int8-vs-float test runs the
float models (``tests/fixtures/neural/<version>.float.onnx``) itself.

"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.models.systems import parse_html
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR

logger = logging.getLogger(__name__)

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "neural"
#: Decimals kept in golden floats (features are float32; 6 decimals is well within precision).
DECIMALS = 6


def golden_for(page: Path, extractor: NeuralExtractor) -> dict[str, Any]:
    tree = parse_html(page.read_text(encoding="utf-8"))
    raw, feats = extractor.features(tree)
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
    if extractor.by_type:
        # What a page predicted each such type keeps (``"by_type"``: decoded by its items).
        data["kept_by_type"] = {
            name: [b.to_dict() for b in extractor.extract(tree, page_type=name).blocks]
            for name in sorted(extractor.by_type)
        }
    if feats.stack is not None:
        data["stack"] = np.round(feats.stack.astype(np.float64), DECIMALS).tolist()
    if extractor.cascade is not None:
        # The next model decides the pages the first is unsure of: pin its inputs too.
        nxt = extractor.cascade.next
        _, next_feats = nxt.features(tree)
        data["next"] = {
            "model_version": nxt.version,
            "stack": np.round(np.asarray(next_feats.stack, np.float64), DECIMALS).tolist(),
            "probs": [round(float(p), 4) for p in nxt.model.predict(next_feats)],
        }
        data["escalated"] = result.escalated
    return data


def golden_path(page: Path, version: str = DEFAULT_VERSION) -> Path:
    """``<page>.golden.json`` for the default model, ``<page>.<version>.golden.json`` for a
    model folder shipped beside it (``neural.inference.OFFERED_VERSIONS``)."""
    tag = "" if version == DEFAULT_VERSION else f".{version}"
    return page.with_name(f"{page.stem}{tag}.golden.json")


def write_goldens(model_dir: Path) -> list[Path]:
    extractor = NeuralExtractor.load(model_dir)
    written = []
    for page in sorted(FIXTURES.glob("*.html")):
        out = golden_path(page, extractor.version)
        out.write_text(json.dumps(golden_for(page, extractor), indent=1) + "\n", encoding="utf-8")
        written.append(out)
    logger.info("wrote %d golden files", len(written))
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(MODELS_DIR / DEFAULT_VERSION))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    write_goldens(Path(args.model))


if __name__ == "__main__":
    main()
