"""What the page's markup says of a block, for the text convention (``convention``): inside
a caption, a byline, a ``<time>``, a table, a reader-comment section; all link. Read from
the open elements above the block (``neural.segment.Context``: tag and class/id words), so
the neural engine's blocks only. Scrapy-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Share of a block's characters inside links from which it is "all link" (``Markup``).
LINKED_SHARE = 0.9
#: Class/id words of an element whose text is a caption, a byline or reader comments.
CAPTION_WORDS = frozenset({"caption", "figcaption", "credit", "credits", "copyright"})
BYLINE_WORDS = frozenset({"byline", "author", "authors", "autor", "auteur", "dateline"})
#: WordPress's ``#comments``, ``ol.commentlist``, ``.comment-body``; Disqus's thread; the
#: German and French words. Not "reply" or "discussion": a forum's posts use them.
COMMENT_WORDS = frozenset(
    {"comment", "comments", "commentlist", "disqus", "kommentar", "kommentare", "commentaires"}
)


@dataclass(frozen=True)
class Markup:
    """What the page's markup says of one block (the neural engine's blocks only)."""

    caption: bool = False
    byline: bool = False
    time: bool = False
    #: Inside a table: cells are data, never a byline or a dateline.
    table: bool = False
    #: All of its text is link text (``LINKED_SHARE``).
    linked: bool = False
    #: Inside an element named for reader comments (``COMMENT_WORDS``).
    comments: bool = False


Flags = tuple[bool, bool, bool, bool, bool]
_NO_FLAGS: Flags = (False, False, False, False, False)


def _flags(flags: Flags, ctx: Any) -> Flags:
    """``flags`` (caption, byline, time, table, comments) with one more open element."""
    caption, byline, time, table, comments = flags
    tag = getattr(ctx, "tag", "")
    toks = set(getattr(ctx, "tokens", ()))
    return (
        caption or tag == "figcaption" or bool(toks & CAPTION_WORDS),
        byline or tag == "address" or bool(toks & BYLINE_WORDS),
        time or tag == "time",
        table or tag == "table",
        comments or bool(toks & COMMENT_WORDS),
    )


def _markup(flags: Flags, linked: bool) -> Markup:
    caption, byline, time, table, comments = flags
    return Markup(caption, byline, time, table, linked, comments)


def block_markup(block: Any) -> Markup:
    """:func:`markup_of` a page block (``neural.segment.RawBlock``: its path and link text)."""
    return markup_of(block.path, block.link_chars / max(len(block.text), 1))


def blocks_markup(blocks: Sequence[Any]) -> list[Markup]:
    """:func:`block_markup` of each of a page's blocks: what the open elements say is
    gathered once per run of them that blocks share (a path's flags are those of its
    beginning and of the elements after it; ``_PathFlags``)."""
    flags = _PathFlags()
    return [
        _markup(flags.of(block.path), block.link_chars / max(len(block.text), 1) >= LINKED_SHARE)
        for block in blocks
    ]


class _PathFlags:
    """``markup_of``'s flags of a page's block paths (tuples of ``neural.segment.Context``,
    outermost first), memoised per path prefix: a prefix is known by its first and last
    element (a path is a contiguous run of the walk's stack)."""

    def __init__(self) -> None:
        self.memo: dict[tuple[int, int], Flags] = {}

    def of(self, path: Sequence[Any]) -> Flags:
        if not path:
            return _NO_FLAGS
        memo, first = self.memo, id(path[0])
        known = len(path) - 1
        while known >= 0 and (first, id(path[known])) not in memo:
            known -= 1
        flags = memo[first, id(path[known])] if known >= 0 else _NO_FLAGS
        for ctx in path[known + 1 :]:
            flags = _flags(flags, ctx)
            memo[first, id(ctx)] = flags
        return flags


def markup_of(path: Sequence[object], link_share: float = 0.0) -> Markup:
    """What the open elements (``neural.segment.Context``) above a block say of it, and
    whether its text is all link (``link_share``: the share of its characters in links)."""
    flags = _NO_FLAGS
    for ctx in path:
        flags = _flags(flags, ctx)
    return _markup(flags, link_share >= LINKED_SHARE)
