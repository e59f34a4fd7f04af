"""Write the golden files that pin preprocessing and predictions on the test fixture pages.

    python -m scrapy_maintext.models.golden [--model crawler/neural/models/v4.1]

For every ``tests/fixtures/neural/*.html`` this writes ``*.golden.json`` with the blocks, the
feature arrays (stacking columns included) and the int8 model's probabilities (for a model
folder offered beside the default, ``--model crawler/neural/models/v5``:
``*.<version>.golden.json``); for a cascade,
also the next model's stacking columns and probabilities. The int8-vs-float test runs the
float models (``tests/fixtures/neural/<version>.float.onnx``) itself.

``--arbiter`` writes only ``*.arbiter.json``: the inputs and decisions of the arbiter in
``tests/fixtures/neural/arbiter.json`` (``models.protocol --arbiter-out``) beside the shipped
model, and the ``auto`` engine's blocks with it.

``--tree`` writes only ``*.tree.json``: the tree position (``featurize(tree=True)``), which no
shipped model reads yet (issue 23's tree candidate), pinned apart so that the shipped
goldens stay as they are.
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
from scrapy_maintext.neural.features import TREE_LEVELS, featurize
from scrapy_maintext.neural.groups import path_signatures
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR, PROTOCOL_VERSION
from scrapy_maintext.neural.segment import segment

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


#: The arbiter trained by ``models.protocol --arbiter-out`` (the shipped folder has none: it
#: recovered nothing of the oracle gap on the site folds, ``models/CHANGELOG.md``).
ARBITER = FIXTURES / "arbiter.json"


def arbiter_folder(directory: Path, arbiter: Path = ARBITER) -> Path:
    """The shipped model folder with ``arbiter`` beside it, in ``directory``."""
    import shutil

    folder = directory / "arbitrated"
    shutil.copytree(MODELS_DIR / PROTOCOL_VERSION, folder)
    shutil.copy(arbiter, folder / "arbiter.json")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["arbiter"] = "arbiter.json"
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def write_arbiter_goldens() -> list[Path]:
    import tempfile

    written = []
    with tempfile.TemporaryDirectory() as tmp:
        extractor = NeuralExtractor.load(arbiter_folder(Path(tmp)))
        for page in sorted(FIXTURES.glob("*.html")):
            tree = parse_html(page.read_text(encoding="utf-8"))
            out = page.with_suffix(".arbiter.json")
            out.write_text(json.dumps(arbiter_golden(tree, extractor)) + "\n", encoding="utf-8")
            written.append(out)
    logger.info("wrote %d arbiter golden files", len(written))
    return written


def arbiter_golden(tree: Any, extractor: NeuralExtractor) -> dict[str, Any]:
    """The arbiter's inputs and decisions on a page, and the ``auto`` engine's blocks."""
    from scrapy_maintext import ExtractOptions
    from scrapy_maintext.extraction.engines import blocks_to_lines, run_neural, run_trafilatura
    from scrapy_maintext.neural.arbiter import page_stats, pair_stats
    from scrapy_maintext.neural.stack import tokens

    arbiter = extractor.arbiter
    assert arbiter is not None
    result = extractor.extract(tree)
    raw, keep, probs = result.segments or [], result.keep, result.probs
    assert keep is not None and probs is not None
    chars = np.array([len(b.text) for b in raw], dtype=np.float64)
    links = np.array([b.link_chars for b in raw], dtype=np.float64)
    signatures = result.signatures or path_signatures(raw)
    kinds = [b.kind for b in raw]
    stats = page_stats(chars, links, kinds, signatures, probs, keep, result.confidence)
    options = ExtractOptions(engine="auto", with_metadata=False)
    reference = tokens(blocks_to_lines(run_trafilatura(tree, None, options).blocks))
    pair = pair_stats([tokens(b.text) for b in raw], keep, reference, probs)
    engine = run_neural(extractor, tree, None, options)
    return {
        "stats": np.round(stats, DECIMALS).tolist(),
        "pair": np.round(pair, DECIMALS).tolist(),
        "stage1": round(float(arbiter.stage1.scores(stats)[0]), 4),
        "worth_running": bool(arbiter.worth_running(stats)),
        "choice": arbiter.choose(stats, pair),
        "extractor": engine.extractor,
        "blocks": [b.to_dict() for b in engine.blocks],
    }


def tree_golden(page: Path) -> dict[str, Any]:
    feats = featurize(segment(parse_html(page.read_text(encoding="utf-8"))), tree=True)
    assert feats.tree is not None
    return {"levels": list(TREE_LEVELS), "tree": feats.tree.tolist()}


def write_tree_goldens() -> list[Path]:
    written = []
    for page in sorted(FIXTURES.glob("*.html")):
        out = page.with_suffix(".tree.json")
        out.write_text(json.dumps(tree_golden(page)) + "\n", encoding="utf-8")
        written.append(out)
    logger.info("wrote %d tree golden files", len(written))
    return written


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
    parser.add_argument("--tree", action="store_true", help="only the tree position files")
    parser.add_argument(
        "--arbiter", action="store_true", help="only the arbiter files (tests/fixtures/neural)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    if args.tree:
        write_tree_goldens()
    elif args.arbiter:
        write_arbiter_goldens()
    else:
        write_goldens(Path(args.model))


if __name__ == "__main__":
    main()
