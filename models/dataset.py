"""Labelled pages -> block features and labels, with a deterministic train/test split.

Labels come from aligning each page's ground-truth text to its blocks: a page token counts as
content when it lies inside a token 3-gram that also occurs in the ground truth (so isolated
common words such as "Home" do not match), and a block is content when most of its tokens are.
Features come from ``neural.features`` itself, so training and run time cannot drift.
"""

from __future__ import annotations

import functools
import gzip
import json
import logging
import lzma
import os
import pickle
import sys
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import Pool
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from lxml import html as lxml_html
from scrapy_maintext.document import Block, Document
from scrapy_maintext.extraction.convention import Markup, PageFacts, block_markup, is_title
from scrapy_maintext.models.metrics import tokens
from scrapy_maintext.neural.features import PageFeatures, featurize
from scrapy_maintext.neural.segment import segment
from scrapy_maintext.neural.stack import (
    REFERENCES,
    covered_shares,
    stack_features,
    trafilatura_text,
)

logger = logging.getLogger(__name__)

DATASETS = (
    "cleaneval",
    "dragnet",
    "l3s-gn1",
    "readability",
    "trafilatura",
    "wcxb-dev",
    "fundus-dev",
)
#: Datasets split by site: this share of hostnames (by hash) is held out for evaluation.
HOLDOUT_PERCENT = 30
#: Pages whose ground truth is mostly not in the static HTML cannot be learnt from.
MIN_GT_COVERAGE = 0.8
#: Share of a block's tokens that must fall in ground-truth 3-grams (``ALIGN_N``) for "content".
BLOCK_CONTENT_SHARE = 0.5
CACHE_DIR = Path(os.environ.get("NEURAL_CACHE", Path.home() / ".cache" / "neural-blocks"))
#: Float models of training runs (checks only): ``tests/fixtures/neural/<version>.float.onnx``
#: keeps the one of the shipped version for the int8-vs-float test.
FLOAT_MODELS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "neural"
#: Version of what ``build_example`` stores (with the run-time modules, the cache key): bump it
#: when labels, the split or the Example fields change.
CACHE_FORMAT = 6
#: Share of training sites (by hostname hash) kept apart to tune decoding and pick the epoch.
VALIDATION_PERCENT = 15
#: Share of the trafilatura snippet set's sites (by hash) whose snippets may label training
#: blocks (``models.snippets``); the others are held out. Half: enough pages to teach the
#: set's mostly German page furniture, enough left (about 500 pages) to score on.
SNIPPET_TRAIN_PERCENT = 50


def float_model_path(version: str) -> Path:
    """Where training writes the float ONNX model of ``version`` (kept for the int8 test)."""
    return FLOAT_MODELS / f"{version}.float.onnx"


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
    #: wcxb-dev's page type (article, service, forum, ...); "" elsewhere.
    page_type: str = ""
    #: The set's own ground truth (``text`` follows the convention: ``convention_gold``).
    raw_text: str | None = None


@dataclass
class PageView:
    """A page as the run-time text convention sees it (``extraction.convention``)."""

    blocks: list[Block]
    markup: list[Markup]
    facts: PageFacts
    #: trafilatura's blocks with the product's defaults (the ``auto`` fallback).
    fallback: list[Block]
    #: The set's own ground truth, before the convention (WCXB's metric scores against it).
    gold: str = ""


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
    page_type: str = ""
    #: Tokens of trafilatura's output (the shipped fallback) on this page.
    fallback_tokens: list[str] = field(default_factory=list)
    #: Stacking columns per reference (``neural.stack.REFERENCES``); ``features.stack`` is
    #: set from one of them by the recipe.
    stacks: dict[str, np.ndarray] = field(default_factory=dict)
    #: Blocks whose label is known (1) or not (0: no loss); None when every block's is
    #: (``models.snippets`` labels only the blocks a snippet falls in).
    mask: np.ndarray | None = None
    #: What the text convention reads (``models.convention_eval``): the page's blocks,
    #: their markup, the title and authors, trafilatura's blocks; None in old caches.
    view: PageView | None = None

    def kept_tokens(self, keep: Sequence[bool] | np.ndarray) -> list[str]:
        """The tokens of the blocks ``keep`` marks (one flag per block), in order."""
        pairs = zip(self.block_tokens, keep, strict=True)
        return [t for toks, k in pairs if k for t in toks]


def site_of(rec: dict[str, Any]) -> str:
    """Hostname without "www.", or the page id when the URL is unknown."""
    host = urlparse(rec["url"]).hostname if rec.get("url") else None
    return (host or rec["id"]).removeprefix("www.")


def site_split(dataset: str, rec: dict[str, Any]) -> str:
    """'train' or 'test'; by official split for dragnet, by hostname hash elsewhere."""
    if dataset == "trafilatura":
        return "train" if is_snippet_train(site_of(rec)) else "test"
    if dataset == "dragnet":
        return "test" if rec.get("split") == "test" else "train"
    return "test" if zlib.crc32(site_of(rec).encode()) % 100 < HOLDOUT_PERCENT else "train"


def is_snippet_train(site: str) -> bool:
    return zlib.crc32(b"snip:" + site.encode()) % 100 < SNIPPET_TRAIN_PERCENT


def is_validation(ex: Example) -> bool:
    return is_validation_site(ex.site)


def site_fold(site: str, folds: int) -> int:
    """The site fold of ``site`` among ``folds`` (``models.folds``' cross-validation)."""
    return zlib.crc32(b"fold:" + site.encode()) % folds


@functools.cache
def registered_domain(site: str) -> str:
    """The registered domain of a hostname by the public suffix list (``tld``, which courlan
    depends on): forums.bbc.co.uk -> bbc.co.uk; the site itself when it has none (an id)."""
    from tld import get_fld

    return str(get_fld("http://" + site, fail_silently=True) or site)


def domain_fold(site: str, folds: int) -> int:
    """The fold of ``site``'s registered domain (``models.protocol``): the subdomains of one
    site never fall on both sides of a fold."""
    return site_fold(registered_domain(site), folds)


def is_validation_site(site: str) -> bool:
    return zlib.crc32(b"val:" + site.encode()) % 100 < VALIDATION_PERCENT


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
                    text=convention_gold(rec),
                    raw_text=rec.get("text"),
                    with_=list(rec.get("with") or []),
                    without=list(rec.get("without") or []),
                    gt_coverage=rec.get("gt_coverage"),
                    site=site_of(rec),
                    page_type=str((rec.get("meta") or {}).get("page_type") or ""),
                )


def convention_gold(rec: dict[str, Any]) -> str | None:
    """The ground truth under the text convention (docs/formats.md): without a first line
    that repeats the page's title (wcxb-dev's drafts open with the headline on some pages;
    fundus-dev's bodies never do). What is left is what ``text`` should hold."""
    text = rec.get("text")
    title = (rec.get("meta") or {}).get("title")
    if not text or not isinstance(title, str) or not title.strip():
        return text
    first, _, rest = text.lstrip().partition("\n")
    if same_line(first, title):
        return rest.lstrip("\n")
    return text


def same_line(line: str, title: str) -> bool:
    """Whether ``line`` is ``title`` but for case, spacing and punctuation."""
    a, b = tokens(line), tokens(title)
    # "Headline | Site name" titles: the line is the title's opening words.
    return bool(a) and (a == b or (len(a) >= 4 and a == b[: len(a)]))


def usable_for_f1(page: Page) -> bool:
    """Pages with a ground truth that the static HTML can reproduce."""
    if not page.text or not tokens(page.text):
        return False
    return page.gt_coverage is None or page.gt_coverage >= MIN_GT_COVERAGE


def align_labels(block_tokens: list[list[str]], gold: list[str]) -> np.ndarray:
    """1.0 for blocks whose tokens mostly fall inside ground-truth 3-grams, else 0.0."""
    shares = covered_shares(block_tokens, gold)
    return (shares >= BLOCK_CONTENT_SHARE).astype(np.float32)


def build_example(page: Page, keep_hidden: bool = False) -> Example | None:
    try:
        tree = lxml_html.fromstring(page.html)
    except Exception:  # unparsable training pages are skipped
        return None
    blocks = segment(tree, keep_hidden)
    if not blocks:
        return None
    block_tokens = [tokens(b.text) for b in blocks]
    gold = tokens(page.text)
    texts = {ref: trafilatura_text(tree, page.url, ref) for ref in REFERENCES}
    reference = texts["trafilatura"]
    stacks = {ref: stack_features(block_tokens, text) for ref, text in texts.items()}
    features = featurize(blocks, tree=True)
    features.stack = stacks["trafilatura"]
    example = Example(
        page.id,
        page.dataset,
        page.split,
        page.site,
        features,
        align_labels(block_tokens, gold),
        block_tokens,
        gold,
        page.page_type,
        tokens(reference),
        stacks,
    )
    example.view = page_view(tree, page.url, blocks)
    example.view.gold = page.raw_text or ""
    return example


def page_view(tree: Any, url: str | None, blocks: list[Any]) -> PageView:
    """What the text convention needs of a page, as ``extract()`` computes it."""
    # Imported here: a pack (``save_pack``) is trained from where trafilatura is not installed.
    from scrapy_maintext.extraction.engines import run_trafilatura
    from scrapy_maintext.extraction.metadata import apply_metadata
    from scrapy_maintext.extraction.options import ExtractOptions

    doc = Document(url=url)
    apply_metadata(doc, tree, url)
    fallback = run_trafilatura(tree, url, ExtractOptions()).blocks
    return PageView(
        [b.to_block() for b in blocks],
        [block_markup(b) for b in blocks],
        PageFacts.of(doc.title, doc.author),
        fallback,
    )


def follow_convention(ex: Example) -> None:
    """``ex``'s ground truth and labels under the text convention (docs/formats.md): without
    the lines that repeat the page's title or the text of a caption or a byline the markup
    names (Readability's and L3S-GN1's ground truths keep the headline, Readability's the
    captions). Pages without a view are left as they are. Once per example: it reads whether
    ``convention_gold`` took the first line out from ``ex.gold_tokens``, which it rewrites."""
    view = ex.view
    if view is None or not view.gold or ex.mask is not None:
        return
    title = tokens(view.facts.title)
    marked = {
        tuple(tokens(b.text))
        for b, m in zip(view.blocks, view.markup, strict=True)
        if m.caption or m.byline
    }
    lines = [line for line in map(tokens, view.gold.splitlines()) if line]
    if lines and ex.gold_tokens[: len(lines[0])] != lines[0]:
        lines = lines[1:]  # the title line ``convention_gold`` took out
    kept = [
        line
        for i, line in enumerate(lines)
        if not (i < 3 and is_title(line, title)) and tuple(line) not in marked
    ]
    gold = [t for line in kept for t in line]
    if gold != ex.gold_tokens:
        ex.gold_tokens = gold
        ex.labels = align_labels(ex.block_tokens, gold)


def _cache_path(data: str | Path, keep_hidden: bool = False) -> Path:
    code = b"".join(
        Path(sys.modules[name].__file__ or "").read_bytes()
        for name in (
            "scrapy_maintext.neural.features",
            "scrapy_maintext.neural.segment",
            "scrapy_maintext.neural.stack",
        )
    )
    key = zlib.crc32(code + str(Path(data).resolve()).encode() + str(CACHE_FORMAT).encode())
    return CACHE_DIR / f"examples-{key:08x}{'-hidden' if keep_hidden else ''}.pkl"


def load_examples(data: str | Path, workers: int = 2, keep_hidden: bool = False) -> list[Example]:
    """Examples of all pages usable for F1 (train and held-out), cached on disk; with
    ``keep_hidden``, segmented with the blocks hidden by markup (``neural.segment``)."""
    path = _cache_path(data, keep_hidden)
    if path.exists():
        with path.open("rb") as fh:
            return list(pickle.load(fh))
    pages = (p for p in iter_pages(data, tuple(d for d in DATASETS if d != "trafilatura")))
    with Pool(workers) as pool:
        build = functools.partial(build_example, keep_hidden=keep_hidden)
        results = pool.imap(build, filter(usable_for_f1, pages), chunksize=8)
        examples = [ex for ex in results if ex is not None]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        pickle.dump(examples, fh, protocol=pickle.HIGHEST_PROTOCOL)
    logger.info("cached %d examples in %s", len(examples), path)
    return examples


#: First bytes of an xz stream (``save_pack(xz=True)``); other packs are gzip.
_XZ_MAGIC = b"\xfd7zXZ\x00"


#: Dense columns that the block lengths determine (``neural.features._text_stats`` and
#: ``_page_stats``): log1p(chars) / 8, the block's index, the text before it and its own
#: text as shares of the page. The pack recomputes them exactly rather than store them.
_FROM_LENGTHS = (0, 13, 14, 15)


def _length_columns(lengths: np.ndarray) -> np.ndarray:
    n = len(lengths)
    chars = lengths.astype(np.float64)
    total = max(float(chars.sum()), 1.0)
    before = np.concatenate([[0.0], np.cumsum(chars)[:-1]])
    index = np.arange(n, dtype=np.float64) / max(n - 1, 1)
    return np.stack([np.log1p(chars) / 8.0, index, before / total, chars / total], axis=1)


def pack_features(f: PageFeatures) -> dict[str, Any]:
    """Compact copy of a page's features: hashed ids uint16 (``HASH_SIZE`` is 2**15), dense
    features float16 but for the exact block lengths, from which ``unpack_features``
    recomputes the columns they determine (``_FROM_LENGTHS``)."""
    lengths = np.rint(np.expm1(f.dense[:, 0].astype(np.float64) * 8.0)).astype(np.int32)
    rest = np.delete(f.dense, _FROM_LENGTHS, axis=1)
    return {
        "dense": rest.astype(np.float16),
        "lengths": lengths,
        "struct": f.struct_ids.astype(np.uint16),
        "word": f.word_ids.astype(np.uint16),
        "tree": None if f.tree is None else f.tree.astype(np.int32),
    }


def unpack_features(p: dict[str, Any], stack: np.ndarray | None = None) -> PageFeatures:
    rest = p["dense"].astype(np.float32)
    dense = np.zeros((rest.shape[0], rest.shape[1] + len(_FROM_LENGTHS)), dtype=np.float32)
    others = [c for c in range(dense.shape[1]) if c not in _FROM_LENGTHS]
    dense[:, others] = rest
    dense[:, _FROM_LENGTHS] = _length_columns(p["lengths"])
    struct, word = p["struct"].astype(np.int64), p["word"].astype(np.int64)
    feats = PageFeatures(dense, struct, word, stack)
    tree = p.get("tree")
    feats.tree = None if tree is None else tree.astype(np.int64)
    return feats


def _token_ids(ex: Example) -> Any:
    """Token strings -> ids local to the page, numbered over its ground truth (1, 2, ...),
    0 for a token the ground truth lacks: F1 only counts the tokens a bag shares with the
    ground truth, so every score is unchanged, and small ids pack small."""
    vocab: dict[str, int] = {}
    for tok in ex.gold_tokens:
        vocab.setdefault(tok, len(vocab) + 1)

    def ids(toks: list[str]) -> np.ndarray:
        return np.array([vocab.get(t, 0) for t in toks], dtype=np.int64)

    return ids, len(vocab)


def _bag(ids: np.ndarray, size: int) -> np.ndarray:
    """Counts of ids 0..size: a bag of tokens, all that F1 reads of a token list."""
    return np.bincount(ids, minlength=size + 1).astype(np.int32)


def _unbag(counts: np.ndarray) -> list[int]:
    return np.repeat(np.arange(len(counts)), counts).tolist()  # type: ignore[no-any-return]


def open_pack(path: Path | str, mode: str, xz: bool = False) -> Any:
    """A pack file: gzip, or xz (smaller, slower) when written so or read from such a file."""
    if "r" in mode:
        with open(path, "rb") as fh:
            xz = fh.read(len(_XZ_MAGIC)) == _XZ_MAGIC
    return lzma.open(path, mode) if xz else gzip.open(path, mode, compresslevel=6)


def save_pack(examples: list[Example], path: Path, xz: bool = False) -> None:
    """A compact, compressed copy of ``examples`` for training on another machine.

    Features as ``pack_features``; token strings become page-local integer ids
    (``_token_ids``: the token F1 of any selection of blocks is unchanged), and the ground
    truth and trafilatura's output bags of them (``_bag``): their token order is not kept, so
    a pack serves order-free metrics (token F1, the training loss), not ROUGE.
    """
    packed = []
    for ex in examples:
        ids, size = _token_ids(ex)
        blocks = [ids(t) for t in ex.block_tokens]
        packed.append(
            {
                "meta": (ex.id, ex.dataset, ex.split, ex.site, ex.page_type),
                **pack_features(ex.features),
                "stacks": {k: v.astype(np.float16) for k, v in ex.stacks.items()},
                "labels": ex.labels.astype(np.uint8),
                "blocks": np.concatenate(blocks).astype(np.uint16 if size < 1 << 16 else np.int32),
                "block_sizes": np.array([len(b) for b in blocks], dtype=np.int32),
                "gold": _bag(ids(ex.gold_tokens), size)[1:],
                "fallback": _bag(ids(ex.fallback_tokens), size),
            }
        )
    with open_pack(path, "wb", xz) as fh:
        pickle.dump(packed, fh, protocol=pickle.HIGHEST_PROTOCOL)


def load_pack(path: Path) -> list[Example]:
    with open_pack(path, "rb") as fh:
        packed = pickle.load(fh)
    out = []
    for p in packed:
        stacks = {k: v.astype(np.float32) for k, v in p["stacks"].items()}
        feats = unpack_features(p, stacks.get("trafilatura"))
        id_, dataset, split, site, page_type = p["meta"]
        bounds = np.cumsum(p["block_sizes"])[:-1]
        gold = np.concatenate([[0], p["gold"]]).astype(np.int64)
        out.append(
            Example(
                id_,
                dataset,
                split,
                site,
                feats,
                p["labels"].astype(np.float32),
                [b.tolist() for b in np.split(p["blocks"], bounds)],
                _unbag(gold),
                page_type,
                _unbag(p["fallback"]),
                stacks,
            )
        )
    return out
