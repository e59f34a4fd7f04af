"""Per-block model inputs, computed without any pretrained weights.

Three arrays per page (N blocks):

* ``dense``: text statistics, link density, position, depth, kind (``N x DENSE_SIZE`` float32);
* ``struct_ids``: hashed tag and class/id tokens of the block's element and its ancestors,
  tag paths and the block kind (``N x STRUCT_SLOTS`` int64, 0 = padding);
* ``word_ids``: hashed lowercased words of the block text (``N x WORD_SLOTS`` int64).

Training (``models/dataset.py``) calls this very module, so run-time and training-time
preprocessing cannot drift; golden files in ``tests/fixtures/neural`` pin it.
"""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from scrapy_maintext.neural.segment import Context, RawBlock

#: Size of the hashed id space shared by structure and word ids (id 0 is padding).
HASH_SIZE = 1 << 15
STRUCT_SLOTS = 32
WORD_SLOTS = 16
#: Words taken from the start and the end of a block for ``word_ids``.
HEAD_WORDS = 12
TAIL_WORDS = 4
#: Ancestors nearer than this get their own id namespace; further ones share one.
NEAR_ANCESTORS = 3

KINDS = ("head", "p", "item", "row", "code", "quote")
DENSE_SIZE = 26

#: Frequent function words of the main languages in the training data (en, de, fr, es, it,
#: nl, pt); their share separates running prose from navigation and labels.
_STOPWORD_TEXT = """
    the a an and or of to in on for with is are was were be been it this that as at by
    from not but have has had will would can could you we they he she his her their our
    its which who der die das und oder ist sind war ein eine einen dem den des zu im mit
    von auf für nicht sich auch es er sie wir ich bei aus nach wie als dass le la les et
    ou est sont un une des du de dans pour avec sur pas que qui il elle nous vous ce el
    los las y o es son una unos del en con por para que se lo al il lo gli e di da per con
    non che è het een en van op te voor niet dat zijn o os as um uma do da em com não
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD = re.compile(r"\w+")
# Character classes counted with C-level regex scans (a Python loop per character is too slow).
_PUNCT = re.compile(r"[.,;:!?]")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")
_UPPER = re.compile(r"[A-ZÀ-ÖØ-ÞΑ-ΩА-Я]")
_CJK = re.compile(r"[\u2e81-\U0010ffff]")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")
_SENTENCE_END = frozenset(".!?。\uff01\uff1f\"'”»)")
_ALWAYS_FAR_TAGS = frozenset({"html", "body"})
_DIST_PREFIX = tuple(str(d) for d in range(NEAR_ANCESTORS))


@dataclass
class PageFeatures:
    dense: np.ndarray
    struct_ids: np.ndarray
    word_ids: np.ndarray
    #: Stacking columns (``neural.stack``), for models trained with them; else None.
    stack: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.dense.shape[0])

    def model_dense(self) -> np.ndarray:
        """The model's ``dense`` input: the dense statistics, then the stacking columns."""
        if self.stack is None:
            return self.dense
        return np.hstack([self.dense, self.stack]).astype(np.float32, copy=False)


_hash_cache: dict[str, int] = {}


def hash_id(token: str) -> int:
    """Stable id in [1, HASH_SIZE) (Python's ``hash`` is salted per process)."""
    cached = _hash_cache.get(token)
    if cached is None:
        cached = 1 + zlib.crc32(token.encode("utf-8", "surrogatepass")) % (HASH_SIZE - 1)
        if len(_hash_cache) < 500_000:
            _hash_cache[token] = cached
    return cached


def _context_tokens(ctx: Context, prefix: str) -> list[str]:
    out = [f"t{prefix}:{ctx.tag}"]
    out.extend(f"c{prefix}:{tok}" for tok in ctx.tokens[:8])
    return out


#: Hashed ids per (tag, class/id attributes, prefix) and per (kind, tag path): the same few
#: element shapes recur across a site's pages, so these are shared between pages (bounded).
_context_cache: dict[tuple[str, str, str], list[int]] = {}
_path_cache: dict[tuple[str, ...], list[int]] = {}
_CACHE_LIMIT = 200_000


def _context_ids(ctx: Context, prefix: str) -> list[int]:
    key = (ctx.tag, ctx.attrs, prefix)
    ids = _context_cache.get(key)
    if ids is None:
        ids = [hash_id(t) for t in _context_tokens(ctx, prefix)]
        if len(_context_cache) < _CACHE_LIMIT:
            _context_cache[key] = ids
    return ids


def _path_ids(kind: str, tags: tuple[str, ...]) -> list[int]:
    """Ids of the block kind and the tag paths of its two and three nearest elements."""
    key = (kind, *tags)
    ids = _path_cache.get(key)
    if ids is None:
        ids = [hash_id(f"k:{kind}")]
        if len(tags) >= 2:
            ids.append(hash_id(f"p2:{tags[1]}>{tags[0]}"))
        if len(tags) >= 3:
            ids.append(hash_id(f"p3:{tags[2]}>{tags[1]}>{tags[0]}"))
        if len(_path_cache) < _CACHE_LIMIT:
            _path_cache[key] = ids
    return ids


class _FarAncestors:
    """Ids of tags and class/id tokens of ancestors beyond NEAR_ANCESTORS, memoised per page."""

    def __init__(self) -> None:
        self.memo: dict[int, tuple[int, ...]] = {}

    def ids(self, path: tuple[Context, ...]) -> tuple[int, ...]:
        far = path[:-NEAR_ANCESTORS]
        if not far:
            return ()
        return self._upto(far, len(far) - 1)

    def _upto(self, far: tuple[Context, ...], last: int) -> tuple[int, ...]:
        # Iterative on purpose: hostile pages can nest very deeply.
        start = last
        while start >= 0 and id(far[start]) not in self.memo:
            start -= 1
        acc = self.memo[id(far[start])] if start >= 0 else ()
        for k in range(start + 1, last + 1):
            ctx = far[k]
            own = [] if ctx.tag in _ALWAYS_FAR_TAGS else _context_ids(ctx, "a")
            merged = dict.fromkeys((*own, *acc))
            acc = tuple(merged)[:STRUCT_SLOTS]
            self.memo[id(ctx)] = acc
        return acc


def _struct_ids(block: RawBlock) -> list[int]:
    """Ids of the kind, the nearest ancestors' tags and class/id tokens, and tag paths."""
    near = block.path[-NEAR_ANCESTORS:][::-1]
    path_ids = _path_ids(block.kind, tuple(c.tag for c in near))
    ids = path_ids[:1]
    for dist, ctx in enumerate(near):
        ids.extend(_context_ids(ctx, _DIST_PREFIX[dist]))
    ids.extend(path_ids[1:])
    return ids


#: Structure id of blocks inside an element hidden by markup (kept only for models trained
#: with ``keep_hidden``; others never see such blocks).
_HIDDEN_ID = hash_id("h:hidden")


class _StructRows:
    """Padded structure ids per block, shared between blocks of the same shape on a page.

    The ids depend only on the kind, the tag and class/id of the three nearest elements and
    the far ancestors; sibling paragraphs or list items share all of these.
    """

    def __init__(self) -> None:
        self.far = _FarAncestors()
        self.memo: dict[tuple[Any, ...], list[int]] = {}

    def row(self, block: RawBlock) -> list[int]:
        path = block.path
        far_key = id(path[-NEAR_ANCESTORS - 1]) if len(path) > NEAR_ANCESTORS else None
        near = path[-NEAR_ANCESTORS:]
        key = (block.kind, block.hidden, far_key, *((c.tag, c.attrs) for c in near))
        cached = self.memo.get(key)
        if cached is None:
            # A hidden block (``segment(keep_hidden=True)``) says so first: it must not be
            # cut by the slot limit.
            first = [_HIDDEN_ID] if block.hidden else []
            ids = first + _struct_ids(block) + list(self.far.ids(path))
            cached = self.memo[key] = _padded(ids, STRUCT_SLOTS)
        return cached


def _padded(ids: list[int], slots: int) -> list[int]:
    unique = list(dict.fromkeys(ids))[:slots]
    return unique + [0] * (slots - len(unique))


_word_id_cache: dict[str, int] = {}


def _word_id(word: str) -> int:
    cached = _word_id_cache.get(word)
    if cached is None:
        cached = hash_id(f"w:{'<num>' if word.isdigit() else word}")
        if len(_word_id_cache) < 500_000:
            _word_id_cache[word] = cached
    return cached


def _word_ids(words: list[str]) -> list[int]:
    """Ids of the first HEAD_WORDS and the last TAIL_WORDS words."""
    # ``words[HEAD_WORDS:][-TAIL_WORDS:]`` without copying a long block's middle words.
    picked = words[:HEAD_WORDS] + words[max(HEAD_WORDS, len(words) - TAIL_WORDS) :]
    return [_word_id(w) for w in picked]


class _CharCounts(NamedTuple):
    letters: int
    upper: int
    digits: int
    punct: int
    cjk: int


_ASCII_DIGITS = b"0123456789"
_ASCII_UPPER = bytes(range(65, 91))
_ASCII_LETTERS = _ASCII_UPPER + bytes(range(97, 123))
_ASCII_PUNCT = b".,;:!?"


def _char_counts(text: str) -> _CharCounts:
    """Character class counts. Every class is one character wide, so the ASCII characters
    are counted on bytes (``_ascii_counts``) and the regexes read only the others: identical
    results, and a mostly-ASCII text ("café", curly quotes) costs little more than ASCII."""
    if text.isascii():
        return _ascii_counts(text.encode("ascii"))
    ascii_part = _ascii_counts(text.encode("ascii", "ignore"))
    rest = "".join(_NOT_ASCII.findall(text))
    return _CharCounts(
        letters=ascii_part.letters + len(_LETTER.findall(rest)),
        upper=ascii_part.upper + len(_UPPER.findall(rest)),
        digits=ascii_part.digits + len(_DIGIT.findall(rest)),
        punct=ascii_part.punct + len(_PUNCT.findall(rest)),
        cjk=len(_CJK.findall(rest)),
    )


def _ascii_counts(raw: bytes) -> _CharCounts:
    size = len(raw)
    return _CharCounts(
        letters=size - len(raw.translate(None, _ASCII_LETTERS)),
        upper=size - len(raw.translate(None, _ASCII_UPPER)),
        digits=size - len(raw.translate(None, _ASCII_DIGITS)),
        punct=size - len(raw.translate(None, _ASCII_PUNCT)),
        cjk=0,
    )


def _text_stats(block: RawBlock, words: list[str]) -> list[float]:
    text = block.text
    n_chars = max(len(text), 1)
    n_words = len(words)
    counts = _char_counts(text)
    return [
        math.log1p(len(text)) / 8.0,
        math.log1p(n_words) / 6.0,
        min(block.link_chars / n_chars, 1.0),
        (sum(map(len, words)) / n_words / 10.0) if n_words else 0.0,
        counts.punct / n_chars * 5.0,
        counts.digits / n_chars,
        counts.upper / max(counts.letters, 1),
        (sum(map(STOPWORDS.__contains__, words)) / n_words) if n_words else 0.0,
        float(text[-1] in _SENTENCE_END) if text else 0.0,
        float(text[:1].isupper()),
        min(text.count(",") / max(n_words, 1) * 5.0, 1.0),
        float(block.link_chars >= len(text) > 0),
        counts.cjk / n_chars,
    ]


#: The one-hot kind columns per block kind (all zeros for another kind).
_KIND_COLUMNS = {k: tuple(float(k == j) for j in KINDS) for k in KINDS}
_NO_KIND = (0.0,) * len(KINDS)


def _page_stats(block: RawBlock, index: int, n: int, before: int, total: int) -> list[float]:
    kinds = _KIND_COLUMNS.get(block.kind, _NO_KIND)
    return [
        index / max(n - 1, 1),
        before / max(total, 1),
        len(block.text) / max(total, 1),
        min(len(block.path) / 32.0, 2.0),
        block.level / 6.0,
        min(len(block.cells) / 10.0, 1.0),
        *kinds,
        math.log1p(n) / 8.0,
    ]


def featurize(blocks: list[RawBlock]) -> PageFeatures:
    """Model inputs for a page's blocks, in block order."""
    n = len(blocks)
    total = sum(len(b.text) for b in blocks)
    rows = _StructRows()
    dense, struct, word = [], [], []
    before = 0
    for i, block in enumerate(blocks):
        words = _WORD.findall(block.text.lower())
        dense.append(_text_stats(block, words) + _page_stats(block, i, n, before, total))
        before += len(block.text)
        struct.append(rows.row(block))
        word.append(_padded(_word_ids(words), WORD_SLOTS))
    return PageFeatures(
        np.array(dense, dtype=np.float32).reshape(n, DENSE_SIZE),
        np.array(struct, dtype=np.int64).reshape(n, STRUCT_SLOTS),
        np.array(word, dtype=np.int64).reshape(n, WORD_SLOTS),
    )
