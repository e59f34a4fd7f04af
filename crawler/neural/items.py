"""Decoding of listing and collection pages by their repeated items (issue 45).

On a listing (search results, a topic's articles, an event calendar) or a collection (a
gallery, a shelf of products), the reader wants the items: each item's heading and, where it
has one, its text. A block classifier decides block by block, and on such a page it keeps a
few of the item headings and drops the rest, or keeps the texts and drops their headings.

This module finds the items and decodes them together:

* a *column* is a slot of ``neural.groups`` (blocks sharing one path signature, ``min_rows``
  of them or more): the headings of every item, or their texts;
* the *items* of a column are the elements at the first depth of its rows' paths where the
  rows sit in ``min_rows`` distinct elements (a card, a list item, a table row); columns
  whose items are the same elements form one *group*, and every block inside an item belongs
  to it.

``ListDecoding`` (``config.json`` ``"by_type"``, for the predicted page types named there)
pools each column's probabilities (a block reads its column's mean, weighted by ``pool``),
then decides with the model's threshold moved by ``delta``; and where at least
``keep_share`` of a group's items keep a block, it keeps in every item the blocks of the
columns kept in at least ``column_share`` of their rows. The values were chosen inside site
folds from out-of-fold probabilities (``models.list_decoding``). Every step is one pass over
the blocks' paths.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scrapy_maintext.neural.decision import Decision, DecodeParams, decide
from scrapy_maintext.neural.segment import RawBlock


@dataclass(frozen=True, eq=False)
class Items:
    """Per block: its column (-1: in none), its group and its item in that group (-1)."""

    column: np.ndarray
    group: np.ndarray
    item: np.ndarray

    def to_json(self) -> dict[str, list[int]]:
        return {k: [int(v) for v in getattr(self, k)] for k in ("column", "group", "item")}

    @classmethod
    def from_json(cls, data: dict[str, list[int]]) -> Items:
        return cls(*(np.array(data[k], dtype=np.int64) for k in ("column", "group", "item")))


def repeated_items(raw: Sequence[RawBlock], signatures: Sequence[str], min_rows: int) -> Items:
    """The columns, groups and items of ``raw`` (``signatures``: ``groups.path_signatures``)."""
    n = len(raw)
    column = np.full(n, -1, dtype=np.int64)
    group = np.full(n, -1, dtype=np.int64)
    item = np.full(n, -1, dtype=np.int64)
    members: dict[str, list[int]] = defaultdict(list)
    for i, sig in enumerate(signatures):
        members[sig].append(i)
    # id(element context) -> (group, item): the elements that are items of some column.
    items_of: dict[int, tuple[int, int]] = {}
    sizes: list[int] = []
    for rows in members.values():
        if len(rows) < min_rows:
            continue
        column[rows] = int(column.max()) + 1
        depth = _item_depth(raw, rows, min_rows)
        if depth < 0:
            continue
        elements = [raw[i].path[depth] for i in rows]
        known = next((items_of[id(e)][0] for e in elements if id(e) in items_of), -1)
        if known < 0:
            known = len(sizes)
            sizes.append(0)
        for element in elements:
            if id(element) not in items_of:
                items_of[id(element)] = (known, sizes[known])
                sizes[known] += 1
    if not items_of:
        return Items(column, group, item)
    for i, block in enumerate(raw):
        # The outermost item on the path: an item nested in another belongs to the outer one.
        for ctx in block.path:
            found = items_of.get(id(ctx))
            if found is not None:
                group[i], item[i] = found
                break
    return Items(column, group, item)


def _item_depth(raw: Sequence[RawBlock], rows: list[int], min_rows: int) -> int:
    """The first depth of the rows' (equally long) paths where they sit in ``min_rows``
    distinct elements; -1 when there is none."""
    depth = len(raw[rows[0]].path)
    for d in range(depth):
        if len({id(raw[i].path[d]) for i in rows}) >= min_rows:
            return d
    return -1


@dataclass(frozen=True)
class ListDecoding:
    """How a listing's items are decoded (``config.json`` ``"by_type"``: type -> these)."""

    #: Added to the model's threshold on these pages.
    delta: float = 0.0
    #: Weight of a column's mean probability in each of its blocks' probability.
    pool: float = 0.0
    #: A group's items are kept by column when at least this share of them keep a block
    #: (above 1: never).
    keep_share: float = 2.0
    #: ... the columns kept in at least this share of their rows (0: every block of the items).
    column_share: float = 0.5
    #: ... and the group holds at least this share of the page's characters (the page's
    #: content is that list, not a box of related links beside an article).
    min_group_share: float = 0.0
    #: Fewest items of a group decoded as one.
    min_rows: int = 3

    @classmethod
    def from_config(cls, spec: Any) -> ListDecoding:
        if not isinstance(spec, dict) or set(spec) - set(cls.__dataclass_fields__):
            raise ValueError(f"by_type decodings take {sorted(cls.__dataclass_fields__)}")
        found = cls(**spec)
        numbers = (
            found.delta, found.pool, found.keep_share, found.column_share, found.min_group_share
        )  # fmt: skip
        if any(isinstance(v, bool) or not isinstance(v, int | float) for v in numbers):
            raise ValueError("by_type: delta, pool and the shares must be numbers")
        if not -1 < found.delta < 1 or not 0 <= found.pool <= 1 or found.column_share < 0:
            raise ValueError("by_type: delta in (-1, 1), pool in [0, 1], column_share >= 0")
        if not 0 <= found.min_group_share <= 1:
            raise ValueError("by_type: min_group_share in [0, 1]")
        if isinstance(found.min_rows, bool) or not isinstance(found.min_rows, int):
            raise ValueError("by_type.min_rows must be an integer")
        if found.min_rows < 2:
            raise ValueError("by_type.min_rows must be 2 or more")
        return found

    @property
    def by_items(self) -> bool:
        return self.keep_share <= 1.0


def pooled(probs: np.ndarray, column: np.ndarray, pool: float) -> np.ndarray:
    """``probs`` with each column's blocks moved towards the column's mean by ``pool``."""
    inside = column >= 0
    if pool <= 0 or not inside.any():
        return probs
    cols = column[inside]
    means = np.bincount(cols, weights=probs[inside]) / np.bincount(cols)
    out = probs.astype(np.float64, copy=True)
    out[inside] = (1.0 - pool) * out[inside] + pool * means[cols]
    return out.astype(probs.dtype)


def decide_listing(
    probs: np.ndarray,
    lengths: np.ndarray,
    items: Items,
    base: DecodeParams,
    params: ListDecoding,
) -> Decision:
    """The page's decision under ``params`` (``base``: the model's own decoding)."""
    threshold = min(max(base.threshold + params.delta, 0.05), 0.95)
    moved = DecodeParams(threshold, base.smooth_margin, base.min_confidence, base.min_chars)
    decision = decide(pooled(probs, items.column, params.pool), lengths, moved)
    if params.by_items:
        decision.keep = keep_items(decision.keep, items, params, lengths)
    return decision


def keep_items(
    keep: np.ndarray, items: Items, params: ListDecoding, lengths: np.ndarray | None = None
) -> np.ndarray:
    """``keep`` where every group whose items mostly keep a block (and that holds
    ``min_group_share`` of the page's characters, ``lengths``: each block's) keeps, in every
    item, the blocks of its columns kept in ``column_share`` of their rows (0: all)."""
    inside = items.group >= 0
    if not inside.any():
        return keep
    out = keep.copy()
    groups = items.group[inside]
    # Per (group, item): whether it keeps a block; then per group the share of such items.
    key = groups * (int(items.item.max()) + 1) + items.item[inside]
    uniq, inverse = np.unique(key, return_inverse=True)
    kept_item = np.bincount(inverse, weights=keep[inside]) > 0
    item_group = uniq // (int(items.item.max()) + 1)
    n_groups = int(groups.max()) + 1
    items_in_group = np.bincount(item_group, minlength=n_groups)
    share = np.bincount(item_group, weights=kept_item, minlength=n_groups) / np.maximum(
        items_in_group, 1
    )
    counted = items_in_group >= params.min_rows
    chosen = counted & (share >= params.keep_share)
    if params.min_group_share > 0 and lengths is not None:
        chars = np.bincount(groups, weights=lengths[inside], minlength=n_groups)
        chosen &= chars >= params.min_group_share * max(float(lengths.sum()), 1.0)
    if not chosen.any():
        return out
    whole = np.zeros(len(keep), dtype=bool)
    whole[inside] = chosen[groups]
    if params.column_share <= 0:
        return out | whole
    cols = items.column
    in_col = cols >= 0
    if not in_col.any():
        return out
    size = int(cols.max()) + 1
    col_share = np.bincount(cols[in_col], weights=keep[in_col], minlength=size) / np.maximum(
        np.bincount(cols[in_col], minlength=size), 1
    )
    good = np.zeros(len(keep), dtype=bool)
    good[in_col] = col_share[cols[in_col]] >= params.column_share
    return out | (whole & good)
