"""Per-page outputs of the systems the decision protocol compares, computed once.

    python -m scrapy_maintext.models.pagecache --data ../shared/data --out /tmp/x-cache/pages.pkl
        [--datasets wcxb-dev] [--limit N]

For every page a frozen model never trained on (held-out and validation sites, ``unseen``) and
whose ground truth the static HTML reproduces (``dataset.usable_for_f1``), in one thread:

* the page's blocks (text, kind, link characters, the element path's signature per block:
  ``neural.groups.path_signature``) and v4.1's block probabilities, so that decodings and
  the arbiter can be tried without running the model again;
* trafilatura's text with the product's defaults (``engines.run_trafilatura``, the ``auto``
  engine's fallback) and its time;
* the product's outputs (``engines.run_neural``, engine ``auto``) of v4.1 and of v4 with its
  cascade into v2 (rebuilt as ``tests/model_folders.cascade_model`` does).

The pickle holds a list of dicts; ``models.protocol`` reads it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import pickle
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

from scrapy_maintext.models.dataset import (
    DATASETS,
    Page,
    is_validation_site,
    iter_pages,
    usable_for_f1,
)

logger = logging.getLogger(__name__)

#: v4's cascade entry: pages below this page confidence went to v2 (stacked on trafilatura).
V4_CASCADE = {"next": "v2", "gate": 0.8}


def unseen(page: Page) -> bool:
    """Pages whose sites v4.1's weights never saw: held-out sites, and the validation sites
    (its decoding and epoch were tuned on those, as ``models.heldout --unseen`` counts them)."""
    return page.split == "test" or is_validation_site(page.site)


def cascade_folder(root: Path) -> Path:
    """v4 with its cascade: v4.1's model with v4's cascade entry, v2 beside it."""
    from scrapy_maintext.neural.inference import MODELS_DIR, PROTOCOL_VERSION

    v2 = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "neural" / "v2"
    shutil.copytree(v2, root / "v2")
    first = root / "v4"
    first.mkdir()
    shutil.copy(MODELS_DIR / PROTOCOL_VERSION / "model.onnx", first / "model.onnx")
    config = json.loads((MODELS_DIR / PROTOCOL_VERSION / "config.json").read_text("utf-8"))
    config["cascade"] = V4_CASCADE
    config["version"] = "v4"
    (first / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return first


def page_record(page: Page, shipped: Any, cascade: Any) -> dict[str, Any] | None:
    from scrapy_maintext import ExtractOptions
    from scrapy_maintext.extraction.body import parse_page
    from scrapy_maintext.extraction.engines import blocks_to_lines, run_neural, run_trafilatura
    from scrapy_maintext.neural.groups import path_signature

    options = ExtractOptions(engine="auto", with_metadata=False)
    tree = parse_page(page.html, options).tree
    if tree is None:
        return None
    t0 = time.perf_counter()
    traf = blocks_to_lines(run_trafilatura(tree, page.url, options).blocks)
    traf_ms = (time.perf_counter() - t0) * 1000
    raw, feats = shipped.features(tree, page.url)
    probs = shipped.model.predict(feats) if raw else None
    v41 = blocks_to_lines(run_neural(shipped, tree, page.url, options).blocks)
    casc = blocks_to_lines(run_neural(cascade, tree, page.url, options).blocks)
    return {
        "id": page.id,
        "dataset": page.dataset,
        "site": page.site,
        "url": page.url,
        "split": page.split,
        "page_type": page.page_type,
        "gold": page.text,
        "texts": [b.text for b in raw],
        "kinds": [b.kind for b in raw],
        "link_chars": [b.link_chars for b in raw],
        "signatures": [path_signature(b) for b in raw],
        "parents": parent_ids(raw),
        "probs": probs,
        "trafilatura": traf,
        "trafilatura_ms": traf_ms,
        "v4.1": v41,
        "v4": casc,
    }


def parent_ids(raw: list[Any]) -> list[int]:
    """Per block, a page-local number of its element's parent (``neural.repeats`` compares
    parents by identity)."""
    from scrapy_maintext.neural.repeats import _parent

    # The parents stay referenced while numbered: lxml makes a new proxy object for an
    # element no one holds, and ``id`` may then repeat for another element.
    parents = [_parent(b) for b in raw]
    ids: dict[int, int] = {}
    return [ids.setdefault(id(p), len(ids)) for p in parents]


def build(data: str, out: Path, datasets: tuple[str, ...], limit: int) -> None:
    from scrapy_maintext.neural import NeuralExtractor
    from scrapy_maintext.neural.inference import MODELS_DIR, PROTOCOL_VERSION

    shipped = NeuralExtractor.load(MODELS_DIR / PROTOCOL_VERSION)
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        cascade = NeuralExtractor.load(cascade_folder(Path(tmp)))
        pages = [p for p in iter_pages(data, datasets) if unseen(p) and usable_for_f1(p)]
        pages = pages[:limit] if limit else pages
        for i, page in enumerate(pages):
            rec = page_record(page, shipped, cascade)
            if rec is not None:
                records.append(rec)
            if i % 100 == 0:
                logger.info("%d/%d pages", i, len(pages))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as fh:
        pickle.dump(records, fh, protocol=pickle.HIGHEST_PROTOCOL)
    logger.info("wrote %d pages to %s", len(records), out)


def load(path: str | Path) -> list[dict[str, Any]]:
    with Path(path).open("rb") as fh:
        return list(pickle.load(fh))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--out", required=True)
    parser.add_argument("--datasets", default="wcxb-dev")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    datasets = tuple(d for d in args.datasets.split(",") if d in DATASETS)
    build(args.data, Path(args.out), datasets, args.limit)


if __name__ == "__main__":
    main()
