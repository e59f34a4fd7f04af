"""Drop a second rendition of kept content: runs of blocks repeated from another container.

Shops and service pages often ship the same description twice, one copy for wide screens and
one for phones (or a tab and an accordion), and let CSS show one. The segmenter reads no CSS,
so the model sees both and keeps both; the reader of the page sees it once. A kept block is a
*repeat* when an earlier kept block has the same text under a different parent element; a run
of at least ``MIN_RUN_BLOCKS`` consecutive kept repeats is dropped. Repeats under the same
parent (a list that really says "No answer." twice) and lone repeated lines (a heading that is
also in the table of contents, a photo credit under two pictures) stay. Runs are counted over
the kept blocks, so blocks the model dropped do not break one; a forum reply that quotes two
or more paragraphs of an earlier post loses the quote, as a second copy of that text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scrapy_maintext.neural.segment import RawBlock

#: Shortest run of repeats dropped. Chosen on the training and validation sites with v4's
#: kept blocks (the table is in ``models/CHANGELOG.md``; its driver, since removed, is
#: recovered with ``git show cb1247c:models/repeats.py``): runs of 1
#: gained a little more on wcxb-dev pages but lost 0.1-0.4 points on the 2007-2013 sets
#: (headings repeated from a table of contents, captions); runs of 2 left those level.
MIN_RUN_BLOCKS = 2


def repeat_key(text: str) -> str:
    """What two blocks must share to count as the same text: words, case folded."""
    return " ".join(text.split()).casefold()


def _parent(block: RawBlock) -> Any:
    element = block.element
    return element.getparent() if element is not None else None


def repeats(raw: Sequence[RawBlock], keep: np.ndarray) -> np.ndarray:
    """Per block: kept, and the same text as an earlier kept block under another parent."""
    first_parent: dict[str, Any] = {}
    out = np.zeros(len(raw), dtype=bool)
    for i in np.flatnonzero(keep).tolist():
        key, parent = repeat_key(raw[i].text), _parent(raw[i])
        if not key:
            continue
        if key in first_parent:
            out[i] = first_parent[key] is not parent
        else:
            first_parent[key] = parent
    return out


def drop_repeated_runs(
    raw: Sequence[RawBlock], keep: np.ndarray, min_run: int = MIN_RUN_BLOCKS
) -> np.ndarray:
    """A copy of ``keep`` without the runs of ``min_run`` or more consecutive kept repeats."""
    return drop_runs(repeats(raw, keep), keep, min_run)


def drop_runs(rep: np.ndarray, keep: np.ndarray, min_run: int) -> np.ndarray:
    """A copy of ``keep`` without the runs of ``min_run`` or more consecutive kept blocks
    that ``rep`` marks (runs are counted over the kept blocks)."""
    out = keep.copy()
    if not rep.any():
        return out
    kept = np.flatnonzero(keep)
    start = 0
    while start < len(kept):
        if not rep[kept[start]]:
            start += 1
            continue
        end = start
        while end < len(kept) and rep[kept[end]]:
            end += 1
        if end - start >= min_run:
            out[kept[start:end]] = False
        start = end
    return out
