"""Keep or drop repeated structures as a group: the rows of a list whose content is the page.

Listing pages (topic lists, event lists, product grids, search results) repeat one element
shape many times: every row's title sits at the same element path, with the same classes.
A block classifier decides row by row and, on a page it is unsure of, keeps a few rows of
hundreds; the reader wanted all of them. Blocks that share a *path signature* (the tags and
class/id words of every element from the root down to the block, numbers dropped, and the
block's kind) are one slot of a repeated structure; a slot with at least ``min_rows`` blocks
is decided as a whole: kept entirely when the model kept at least ``keep_share`` of its
blocks (by count), else left as the model decided. The parameters live in the model folder's
``config.json`` (``"groups"``), chosen by site folds (``models.protocol``, in git at
bcbbc68); a folder without them decodes as before.

A model may also *read* the repeated structures (v7, ``config.json`` ``"slots"``): every
block gets ``SLOT_COLUMNS`` inputs describing its slot, what rs-trafilatura's listing profile
looks for, as inputs rather than a rule (``slot_columns``).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scrapy_maintext.neural.segment import RawBlock


@dataclass(frozen=True)
class GroupParams:
    #: Fewest blocks with one signature that count as a repeated structure.
    min_rows: int
    #: Keep every block of such a slot when the model kept at least this share of them.
    keep_share: float
    #: ... and the slot holds at least this share of the page's characters (the page's
    #: content is that list, not a row of small labels such as dates or user names).
    min_page_share: float = 0.0

    @classmethod
    def from_config(cls, spec: Any) -> GroupParams | None:
        if spec is None:
            return None
        if not isinstance(spec, dict):
            raise ValueError("groups must be an object with min_rows and keep_share")
        rows, share = spec.get("min_rows"), spec.get("keep_share")
        page = spec.get("min_page_share", 0.0)
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 2:
            raise ValueError("groups.min_rows must be an integer >= 2")
        return cls(rows, _share(share, "keep_share"), _share(page, "min_page_share"))


#: Inputs ``slot_columns`` appends to every block's dense inputs.
SLOT_COLUMNS = 4


@dataclass(frozen=True)
class SlotInputs:
    """How a model with slot inputs reads the repeated structures (``config.json``
    ``"slots"``; the defaults are what ``models.page_inputs`` trains with)."""

    #: Fewest blocks sharing a path signature that make a repeated structure (3 or more
    #: sibling items, as rs-trafilatura's listing profile).
    min_rows: int = 3
    #: Mean words per row from which a slot's rows are items with text of their own rather
    #: than labels.
    item_words: int = 15

    @classmethod
    def from_config(cls, spec: Any) -> SlotInputs | None:
        if spec is None:
            return None
        if not isinstance(spec, dict):
            raise ValueError("slots must be an object with min_rows and item_words")
        return cls(_count(spec, "min_rows"), _count(spec, "item_words"))


def _count(spec: dict[str, Any], name: str) -> int:
    value = spec.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"slots.{name} must be a positive integer")
    return value


def slot_columns(signatures: Sequence[str], texts: Sequence[str], params: SlotInputs) -> np.ndarray:
    """``N x SLOT_COLUMNS`` float32, per block: in a slot of ``min_rows`` rows or more; the
    slot's rows (log); the slot's share of the page's characters; its rows' mean words at
    least ``item_words``. Zeros for a block in no such slot."""
    out = np.zeros((len(signatures), SLOT_COLUMNS), dtype=np.float32)
    found = slots(signatures, params.min_rows)
    if not found:
        return out
    chars = np.fromiter((len(t) for t in texts), dtype=np.float64, count=len(texts))
    total = max(float(chars.sum()), 1.0)
    for idx in found:
        words = sum(len(texts[i].split()) for i in idx) / len(idx)
        out[idx, 0] = 1.0
        out[idx, 1] = np.log1p(len(idx)) / 5.0
        out[idx, 2] = float(chars[idx].sum()) / total
        out[idx, 3] = float(words >= params.item_words)
    return out


def _share(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"groups.{name} must be a number in [0, 1]")
    return float(value)


_DIGITS = re.compile(r"\d+")


@functools.lru_cache(maxsize=65536)
def _part(tag: str, attrs: str) -> str:
    # Numbers differ from row to row (ids such as post-1234); the class words do not.
    words = _DIGITS.sub("", attrs).lower().split()
    return f"{tag}.{' '.join(words[:6])}"


def path_signature(block: RawBlock) -> str:
    """The element path of ``block`` as one string: tag and class/id words per element."""
    return "/".join(_part(c.tag, c.attrs) for c in block.path) + "|" + block.kind


def path_signatures(raw: Sequence[RawBlock]) -> list[str]:
    """``path_signature`` of every block; the blocks of a page share their open elements
    (``Context`` objects), so each element's prefix is built once."""
    prefix: dict[int, str] = {}
    out = []
    for block in raw:
        sig = ""
        for ctx in block.path:
            known = prefix.get(id(ctx))
            if known is None:
                part = _part(ctx.tag, ctx.attrs)
                known = prefix[id(ctx)] = f"{sig}/{part}" if sig else part
            sig = known
        out.append(sig + "|" + block.kind)
    return out


def slots(signatures: Sequence[str], min_rows: int) -> list[np.ndarray]:
    """Indices of the blocks of every signature shared by ``min_rows`` blocks or more."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, sig in enumerate(signatures):
        members[sig].append(i)
    return [np.array(v) for v in members.values() if len(v) >= min_rows]


def keep_groups(
    signatures: Sequence[str], chars: np.ndarray, keep: np.ndarray, params: GroupParams
) -> np.ndarray:
    """A copy of ``keep`` where every large repeated slot the model partly kept is kept whole
    (``chars``: each block's length)."""
    out = keep.copy()
    total = max(float(chars.sum()), 1.0)
    for idx in slots(signatures, params.min_rows):
        if keep[idx].mean() < params.keep_share:
            continue
        if float(chars[idx].sum()) / total >= params.min_page_share:
            out[idx] = True
    return out
