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
#: Tuples: the garbage collector stops tracking a tuple of numbers, and every full pass of
#: it would otherwise visit each of these long-lived entries again.
_context_cache: dict[tuple[str, str, str], tuple[int, ...]] = {}
_path_cache: dict[tuple[str, ...], tuple[int, ...]] = {}
#: ``_struct_ids`` per (kind, tag and class/id attributes of the nearest elements).
_near_cache: dict[tuple[str, ...], tuple[int, ...]] = {}
_CACHE_LIMIT = 200_000


def _context_ids(ctx: Context, prefix: str) -> tuple[int, ...]:
    key = (ctx.tag, ctx.attrs, prefix)
    ids = _context_cache.get(key)
    if ids is None:
        ids = tuple([hash_id(t) for t in _context_tokens(ctx, prefix)])
        if len(_context_cache) < _CACHE_LIMIT:
            _context_cache[key] = ids
    return ids


def _path_ids(kind: str, tags: tuple[str, ...]) -> tuple[int, ...]:
    """Ids of the block kind and the tag paths of its two and three nearest elements."""
    key = (kind, *tags)
    ids = _path_cache.get(key)
    if ids is None:
        found = [hash_id(f"k:{kind}")]
        if len(tags) >= 2:
            found.append(hash_id(f"p2:{tags[1]}>{tags[0]}"))
        if len(tags) >= 3:
            found.append(hash_id(f"p3:{tags[2]}>{tags[1]}>{tags[0]}"))
        ids = tuple(found)
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
            own = () if ctx.tag in _ALWAYS_FAR_TAGS else _context_ids(ctx, "a")
            merged = dict.fromkeys((*own, *acc))
            acc = tuple(merged)[:STRUCT_SLOTS]
            self.memo[id(ctx)] = acc
        return acc


def _struct_ids(block: RawBlock) -> list[int]:
    """Ids of the kind, the nearest ancestors' tags and class/id tokens, and tag paths."""
    near = block.path[-NEAR_ANCESTORS:][::-1]
    path_ids = _path_ids(block.kind, tuple(c.tag for c in near))
    ids = list(path_ids[:1])
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
        if len(path) > NEAR_ANCESTORS:
            far, a, b, c = path[-NEAR_ANCESTORS - 1 :]
            key: tuple[Any, ...] = (
                block.kind, block.hidden, id(far), a.tag, a.attrs, b.tag, b.attrs, c.tag, c.attrs
            )  # fmt: skip
        else:
            key = (block.kind, block.hidden, None, *((c.tag, c.attrs) for c in path))
        cached = self.memo.get(key)
        if cached is None:
            # A hidden block (``segment(keep_hidden=True)``) says so first: it must not be
            # cut by the slot limit.
            first = [_HIDDEN_ID] if block.hidden else []
            near_key = (key[0], *key[3:])
            near = _near_cache.get(near_key)
            if near is None:
                near = tuple(_struct_ids(block))
                if len(_near_cache) < _CACHE_LIMIT:
                    _near_cache[near_key] = near
            ids = [*first, *near, *self.far.ids(path)]
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


def _word_row(words: list[str]) -> list[int]:
    """Ids of the first HEAD_WORDS and the last TAIL_WORDS words, padded to WORD_SLOTS."""
    # ``words[HEAD_WORDS:][-TAIL_WORDS:]`` without copying a long block's middle words.
    picked = words[:HEAD_WORDS] + words[max(HEAD_WORDS, len(words) - TAIL_WORDS) :]
    cached = _word_id_cache.get
    return _padded([cached(w) or _word_id(w) for w in picked], WORD_SLOTS)


_ASCII_DIGITS = b"0123456789"
_ASCII_UPPER = bytes(range(65, 91))
_ASCII_LETTERS = _ASCII_UPPER + bytes(range(97, 123))
_ASCII_PUNCT = b".,;:!?"


def _char_counts(text: str) -> tuple[int, int, int, int, int]:
    """Character class counts: letters, capitals, digits, punctuation, CJK. Every class is
    one character wide, so the ASCII characters are counted on bytes (``_ascii_counts``)
    and the regexes read only the others: identical results, and a mostly-ASCII text
    ("café", curly quotes) costs little more than ASCII."""
    if text.isascii():
        return _ascii_counts(text.encode("ascii"))
    letters, upper, digits, punct, _ = _ascii_counts(text.encode("ascii", "ignore"))
    rest = "".join(_NOT_ASCII.findall(text))
    return (
        letters + len(_LETTER.findall(rest)),
        upper + len(_UPPER.findall(rest)),
        digits + len(_DIGIT.findall(rest)),
        punct + len(_PUNCT.findall(rest)),
        len(_CJK.findall(rest)),
    )


#: Every byte to its class (U upper, l lower, d digit, p punctuation, o other): one
#: ``translate`` and four ``count`` calls per block.
_BYTE_CLASSES = bytes(
    ord("U") if b in _ASCII_UPPER
    else ord("l") if b in _ASCII_LETTERS
    else ord("d") if b in _ASCII_DIGITS
    else ord("p") if b in _ASCII_PUNCT
    else ord("o")
    for b in range(256)
)  # fmt: skip


def _ascii_counts(raw: bytes) -> tuple[int, int, int, int, int]:
    classes = raw.translate(_BYTE_CLASSES)
    upper = classes.count(b"U")
    return upper + classes.count(b"l"), upper, classes.count(b"d"), classes.count(b"p"), 0


#: Per block kind, its one-hot column (the last row, all zeros, for another kind).
_KIND_INDEX = {k: i for i, k in enumerate(KINDS)}
_KIND_TABLE = np.vstack([np.eye(len(KINDS)), np.zeros((1, len(KINDS)))])


class _Counts(NamedTuple):
    """What a block's dense columns are computed from (``_dense``), read in one pass: the
    order of the plain tuple ``_block_counts`` makes (a named tuple per block costs more
    than the counting)."""

    chars: int
    words: int
    link_chars: int
    word_chars: int
    punct: int
    digits: int
    upper: int
    letters: int
    stopwords: int
    sentence_end: bool
    starts_upper: bool
    commas: int
    cjk: int
    depth: int
    level: int
    cells: int
    kind: int


_COUNT_FIELDS = len(_Counts._fields)
_OTHER_KIND = len(KINDS)


def _block_counts(block: RawBlock, words: list[str]) -> tuple[Any, ...]:
    """The block's ``_Counts``, as a plain tuple."""
    text = block.text
    letters, upper, digits, punct, cjk = _char_counts(text)
    return (
        len(text),
        len(words),
        block.link_chars,
        len("".join(words)),  # the words' characters: one C call, not one per word
        punct,
        digits,
        upper,
        letters,
        sum(map(STOPWORDS.__contains__, words)),
        text[-1] in _SENTENCE_END if text else False,
        text[:1].isupper(),
        text.count(","),
        cjk,
        len(block.path),
        block.level,
        len(block.cells),
        _KIND_INDEX.get(block.kind, _OTHER_KIND),
    )


def _dense(rows: list[tuple[Any, ...]]) -> np.ndarray:
    """The dense columns of every block (float64, as the per-block Python arithmetic they
    replace: the same operations in the same order, so the same numbers): text statistics
    (length, words, link share, word length, punctuation, digits, capitals, stop words,
    sentence end, capital start, commas, all-link, CJK), then the block's place on the page
    (index, text before it, its share, depth, heading level, cells, kind, the page's
    blocks)."""
    n = len(rows)
    c = np.array(rows, dtype=np.float64).reshape(n, _COUNT_FIELDS)
    chars, words = c[:, 0], c[:, 1]
    n_chars = np.maximum(chars, 1.0)
    has_words = words > 0
    safe_words = np.maximum(words, 1.0)
    total = float(max(int(chars.sum()), 1))
    before = np.zeros(n)
    np.cumsum(chars[:-1], out=before[1:])
    out = np.empty((n, DENSE_SIZE))
    out[:, 0] = np.fromiter(map(math.log1p, chars), np.float64, n) / 8.0
    out[:, 1] = np.fromiter(map(math.log1p, words), np.float64, n) / 6.0
    out[:, 2] = np.minimum(c[:, 2] / n_chars, 1.0)
    out[:, 3] = np.where(has_words, c[:, 3] / safe_words / 10.0, 0.0)
    out[:, 4] = c[:, 4] / n_chars * 5.0
    out[:, 5] = c[:, 5] / n_chars
    out[:, 6] = c[:, 6] / np.maximum(c[:, 7], 1.0)
    out[:, 7] = np.where(has_words, c[:, 8] / safe_words, 0.0)
    out[:, 8] = c[:, 9]
    out[:, 9] = c[:, 10]
    out[:, 10] = np.minimum(c[:, 11] / safe_words * 5.0, 1.0)
    out[:, 11] = (c[:, 2] >= chars) & (chars > 0)
    out[:, 12] = c[:, 12] / n_chars
    out[:, 13] = np.arange(n) / float(max(n - 1, 1))
    out[:, 14] = before / total
    out[:, 15] = chars / total
    out[:, 16] = np.minimum(c[:, 13] / 32.0, 2.0)
    out[:, 17] = c[:, 14] / 6.0
    out[:, 18] = np.minimum(c[:, 15] / 10.0, 1.0)
    out[:, 19 : 19 + len(KINDS)] = _KIND_TABLE[c[:, 16].astype(np.intp)]
    out[:, 19 + len(KINDS)] = math.log1p(n) / 8.0
    return out


def featurize(blocks: list[RawBlock]) -> PageFeatures:
    """Model inputs for a page's blocks, in block order."""
    n = len(blocks)
    rows = _StructRows()
    counts, struct, word = [], [], []
    findall, row = _WORD.findall, rows.row
    for block in blocks:
        words = findall(block.text.lower())
        counts.append(_block_counts(block, words))
        struct.append(row(block))
        word.append(_word_row(words))
    return PageFeatures(
        _dense(counts).astype(np.float32) if n else np.zeros((0, DENSE_SIZE), np.float32),
        np.array(struct, dtype=np.int64).reshape(n, STRUCT_SLOTS),
        np.array(word, dtype=np.int64).reshape(n, WORD_SLOTS),
    )
