"""Labelled pages -> block features and labels, with a deterministic train/test split.

Labels come from aligning each page's ground-truth text to its blocks: a page token counts as
content when it lies inside a token 3-gram that also occurs in the ground truth (so isolated
common words such as "Home" do not match), and a block is content when most of its tokens are.
Features come from ``neural.features`` itself, so training and run time cannot drift.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import pickle
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing import Pool
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from lxml import html as lxml_html
from scrapy_maintext.models.metrics import tokens
from scrapy_maintext.neural.features import PageFeatures, featurize
from scrapy_maintext.neural.segment import segment

logger = logging.getLogger(__name__)

DATASETS = ("cleaneval", "dragnet", "l3s-gn1", "readability", "trafilatura", "wcxb-dev")
#: Datasets split by site: this share of hostnames (by hash) is held out for evaluation.
HOLDOUT_PERCENT = 30
#: Pages whose ground truth is mostly not in the static HTML cannot be learnt from.
MIN_GT_COVERAGE = 0.8
#: Shingle size for label alignment, and the share of a block's tokens that must match.
ALIGN_N = 3
BLOCK_CONTENT_SHARE = 0.5
CACHE_DIR = Path(os.environ.get("NEURAL_CACHE", Path.home() / ".cache" / "neural-blocks"))
#: Training by-products kept outside the repository (the float model is only for checks).
FLOAT_MODEL = CACHE_DIR / "model.float.onnx"
#: Share of training sites (by hostname hash) kept apart to tune decoding and pick the epoch.
VALIDATION_PERCENT = 15


@dataclass
class Page:
    id: str
    dataset: str
    split: str
    url: str | None
    html: str
    text: str | None
    with_: list[str] = field(default_factory=list)
    without: list[str] = field(default_factory=list)
    gt_coverage: float | None = None
    site: str = ""


@dataclass
class Example:
    id: str
    dataset: str
    split: str
    site: str
    features: PageFeatures
    labels: np.ndarray
    block_tokens: list[list[str]]
    gold_tokens: list[str]


def site_of(rec: dict[str, Any]) -> str:
    """Hostname without "www.", or the page id when the URL is unknown."""
    host = urlparse(rec["url"]).hostname if rec.get("url") else None
    return (host or rec["id"]).removeprefix("www.")


def site_split(dataset: str, rec: dict[str, Any]) -> str:
    """'train' or 'test'; by official split for dragnet, by hostname hash elsewhere."""
    if dataset == "trafilatura":
        return "test"
    if dataset == "dragnet":
        return "test" if rec.get("split") == "test" else "train"
    return "test" if zlib.crc32(site_of(rec).encode()) % 100 < HOLDOUT_PERCENT else "train"


def is_validation(ex: Example) -> bool:
    return zlib.crc32(b"val:" + ex.site.encode()) % 100 < VALIDATION_PERCENT


def iter_pages(data: str | Path, datasets: tuple[str, ...] = DATASETS) -> Iterator[Page]:
    for name in datasets:
        path = Path(data) / f"{name}.jsonl.gz"
        if not path.exists():
            logger.warning("missing %s", path)
            continue
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                yield Page(
                    id=rec["id"],
                    dataset=name,
                    split=site_split(name, rec),
                    url=rec.get("url"),
                    html=rec["html"],
                    text=rec.get("text"),
                    with_=list(rec.get("with") or []),
                    without=list(rec.get("without") or []),
                    gt_coverage=rec.get("gt_coverage"),
                    site=site_of(rec),
                )


def usable_for_f1(page: Page) -> bool:
    """Pages with a ground truth that the static HTML can reproduce."""
    if not page.text or not tokens(page.text):
        return False
    return page.gt_coverage is None or page.gt_coverage >= MIN_GT_COVERAGE


def align_labels(block_tokens: list[list[str]], gold: list[str]) -> np.ndarray:
    """1.0 for blocks whose tokens mostly fall inside ground-truth 3-grams, else 0.0."""
    n = ALIGN_N
    gold_grams = set(zip(*(gold[i:] for i in range(n)), strict=False))
    stream = [t for toks in block_tokens for t in toks]
    covered = np.zeros(len(stream) + 1, dtype=np.int32)
    for i in range(len(stream) - n + 1):
        if tuple(stream[i : i + n]) in gold_grams:
            covered[i] += 1
            covered[i + n] -= 1
    hit = np.cumsum(covered)[: len(stream)] > 0
    labels = np.zeros(len(block_tokens), dtype=np.float32)
    pos = 0
    for b, toks in enumerate(block_tokens):
        if toks:
            labels[b] = float(hit[pos : pos + len(toks)].mean() >= BLOCK_CONTENT_SHARE)
        pos += len(toks)
    return labels


def build_example(page: Page) -> Example | None:
    try:
        tree = lxml_html.fromstring(page.html)
    except Exception:  # unparsable training pages are skipped
        return None
    blocks = segment(tree)
    if not blocks:
        return None
    block_tokens = [tokens(b.text) for b in blocks]
    gold = tokens(page.text)
    return Example(
        page.id,
        page.dataset,
        page.split,
        page.site,
        featurize(blocks),
        align_labels(block_tokens, gold),
        block_tokens,
        gold,
    )


def _cache_path(data: str | Path) -> Path:
    code = b"".join(
        Path(sys.modules[name].__file__ or "").read_bytes()
        for name in ("scrapy_maintext.neural.features", "scrapy_maintext.neural.segment")
    )
    key = zlib.crc32(code + str(Path(data).resolve()).encode() + Path(__file__).read_bytes())
    return CACHE_DIR / f"examples-{key:08x}.pkl"


def load_examples(data: str | Path, workers: int = 2) -> list[Example]:
    """Examples of all pages usable for F1 (train and held-out), cached on disk."""
    path = _cache_path(data)
    if path.exists():
        with path.open("rb") as fh:
            return list(pickle.load(fh))
    pages = (p for p in iter_pages(data, tuple(d for d in DATASETS if d != "trafilatura")))
    with Pool(workers) as pool:
        results = pool.imap(build_example, filter(usable_for_f1, pages), chunksize=8)
        examples = [ex for ex in results if ex is not None]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        pickle.dump(examples, fh, protocol=pickle.HIGHEST_PROTOCOL)
    logger.info("cached %d examples in %s", len(examples), path)
    return examples
