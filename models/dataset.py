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
import os
import pickle
import sys
import zlib
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import Pool
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from lxml import html as lxml_html
from scrapy_maintext.document import Block, Document
from scrapy_maintext.extraction.convention import PageFacts, is_title
from scrapy_maintext.extraction.markup import Markup, block_markup
from scrapy_maintext.extraction.page_type import ARTICLE_LIKE
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
CACHE_FORMAT = 7
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
    """The fold of ``site`` among ``folds``, by a hash of its name."""
    return zlib.crc32(b"fold:" + site.encode()) % folds


@functools.cache
def registered_domain(site: str) -> str:
    """The registered domain of a hostname by the public suffix list (``tld``, which courlan
    depends on): forums.bbc.co.uk -> bbc.co.uk; the site itself when it has none (an id)."""
    from tld import get_fld

    return str(get_fld("http://" + site, fail_silently=True) or site)


def domain_fold(site: str, folds: int) -> int:
    """The fold of ``site``'s registered domain (``models.sources``): the subdomains of one
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


#: The snippet set (``with``/``without`` only) and the modern set decisions are made on.
SNIPPETS = "trafilatura"
MODERN = "wcxb-dev"


def group_of(page: Page) -> str:
    if page.dataset == MODERN:
        return f"{MODERN}/{page.page_type or 'unknown'}"
    return page.dataset


def held_out_pages(data: str, limit: int | None) -> list[Page]:
    """Every held-out page (split ``test``) scored by token F1, and the snippet set's, at most
    ``limit`` per set."""
    counts: dict[str, int] = defaultdict(int)
    pages = []
    for page in iter_pages(data):
        if page.split != "test" or (limit is not None and counts[page.dataset] >= limit):
            continue
        if page.dataset == SNIPPETS or usable_for_f1(page):
            counts[page.dataset] += 1
            pages.append(page)
    return pages


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
    features = featurize(blocks)
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
    from scrapy_maintext.extraction.options import ExtractOptions
    from scrapy_maintext.fields.metadata import apply_metadata

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
    captions; pages of a non-article type keep the captions and bylines). Pages without a
    view are left as they are. Once per example: it reads whether
    ``convention_gold`` took the first line out from ``ex.gold_tokens``, which it rewrites."""
    view = ex.view
    if view is None or not view.gold or ex.mask is not None:
        return
    title = tokens(view.facts.title)
    # On a page of a known non-article type, the items' bylines and captions are its text
    # (the convention's article rules apply to articles only: ``extraction.page_type``).
    article = not ex.page_type or ex.page_type in ARTICLE_LIKE
    marked = {
        tuple(tokens(b.text))
        for b, m in zip(view.blocks, view.markup, strict=True)
        if article and (m.caption or m.byline)
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
