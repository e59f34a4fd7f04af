"""Packs: a compact copy of the cached examples, for training where trafilatura is not
installed (a GPU machine): ``train --pack PATH``.

Page-local token ids and bags of the ground truth and the fallback keep every token F1; token
order is not kept, so a pack serves order-free metrics (token F1, the training loss), not ROUGE.
"""

from __future__ import annotations

import gzip
import lzma
import pickle
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.models.dataset import Example
from scrapy_maintext.neural.features import PageFeatures

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
    }


def unpack_features(p: dict[str, Any], stack: np.ndarray | None = None) -> PageFeatures:
    rest = p["dense"].astype(np.float32)
    dense = np.zeros((rest.shape[0], rest.shape[1] + len(_FROM_LENGTHS)), dtype=np.float32)
    others = [c for c in range(dense.shape[1]) if c not in _FROM_LENGTHS]
    dense[:, others] = rest
    dense[:, _FROM_LENGTHS] = _length_columns(p["lengths"])
    struct, word = p["struct"].astype(np.int64), p["word"].astype(np.int64)
    return PageFeatures(dense, struct, word, stack)


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
