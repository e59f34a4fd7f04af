"""Split an lxml page into a flat sequence of text blocks.

A block is a leaf block-level element or a run of inline content between block boundaries.
Each block remembers its owner element, its kind (for rebuilding :class:`Block` objects) and
the structural context the feature extractor needs (ancestor tags and class/id tokens).

The walk is iterative (``etree.iterwalk``), so arbitrarily deep trees cannot exhaust the stack.
The input tree is never modified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from lxml import etree
from scrapy_maintext.document import Block
from scrapy_maintext.neural.tags import (
    BLOCK_TAGS,
    DROP_TAGS,
    KIND_OF_TAG,
    LIST_TAGS,
    NESTED_IN_ROW,
    known_name,
    name_of,
)
from scrapy_maintext.neural.visibility import is_hidden, is_popup, reveal_wrappers

#: With a value below 1.0, a hidden element with more than this share of the page's text (its
#: own plus the visible text) is read as visible: a wrapper that a script reveals when the page
#: loads (age gates, "lockdown" and anti-flicker apps). Off (1.0) in the product: on the
#: training sites 0.4-0.6 gained 0.2 points of wcxb-dev macro F1, the validation sites' did not
#: move, and the pages it changes swing widely both ways (React's streamed ``<div hidden>``
#: chunks and app shells' hidden error messages are not wrappers; ``models/CHANGELOG.md``).
#: Compared with the former ``models.repeats --reveal-share S`` (figures in ``models/CHANGELOG.md``;
#: ``git show cb1247c:models/repeats.py`` recovers the driver).
REVEAL_SHARE = 1.0

#: Limits against hostile pages: at most this many elements visited and blocks produced.
#: Far above real pages (the largest training page has ~40k elements and ~6k blocks). A page
#: read only to a limit says so: its :class:`Segments` are ``cut`` (``Note.BLOCKS_CUT``).
MAX_ELEMENTS = 400_000
MAX_BLOCKS = 20_000
#: Open elements remembered per block (nearest last); bounds memory on absurdly deep trees.
MAX_PATH = 64
#: Longest text kept for one block; longer runs are cut (a 20 MB text node is not a paragraph).
MAX_BLOCK_CHARS = 100_000

_TOKEN_SPLIT = re.compile(r"[^0-9a-zA-Z]+|(?<=[a-z])(?=[A-Z])")
#: What ``_TOKEN_SPLIT`` reads faster where it only splits on other characters.
_ALNUM_RUN = re.compile(r"[0-9a-zA-Z]+")
_CAMEL = re.compile(r"[a-z][A-Z]")


#: Elements whose own text no reader reads (all dropped; the page type and the pictures
#: skip their text too): the walk does not copy it out of the tree.
UNREAD_TEXT = frozenset({"script", "style", "template", "noscript"})


class Observer(Protocol):
    """Another reader of the segmenter's walk (``extraction.page_walk.PageWalk``): it sees
    every element's start and end and every comment, in document order, subtrees the
    segmenter skips included (``subtree``), and is told whether the walk reached the end.
    ``start`` gets what the walk read of the element once for every reader: its ``tag``
    (``el.tag``), its ``text`` (None for ``UNREAD_TEXT`` tags) and its ``attrib``;
    ``end`` its ``tail``."""

    def start(self, el: Any, tag: Any, text: str | None, attrib: Any) -> None: ...
    def end(self, el: Any, tail: str | None) -> None: ...
    def other(self, el: Any) -> None: ...
    def subtree(self, top: Any) -> None: ...
    def finish(self, ended: bool) -> None: ...


#: Word pieces per class and id value: a page, and a site, repeat their few values on many
#: elements (bounded: shared between pages).
_attr_tokens: dict[str, tuple[str, ...]] = {}
_ATTR_TOKENS_LIMIT = 200_000


def attr_tokens(attrs: str) -> tuple[str, ...]:
    """Lowercased word pieces of class and id values ("main-Content" -> main, content)."""
    found = _attr_tokens.get(attrs)
    if found is None:
        head = attrs[:200]
        if head.isascii() and _CAMEL.search(head) is None:
            # No word boundary inside a run of letters and digits: the runs, lowercased
            # (ASCII lowercasing keeps every letter a letter), as the split gives them.
            found = tuple(_ALNUM_RUN.findall(head.lower()))
        else:
            found = tuple(t.lower() for t in _TOKEN_SPLIT.split(head) if t)
        if len(_attr_tokens) < _ATTR_TOKENS_LIMIT:
            _attr_tokens[attrs] = found
    return found


@dataclass
class Context:
    """One open element on the walk's stack."""

    tag: str
    kind: str
    level: int
    #: Raw class and id attribute values; tokenised only when a feature needs them.
    attrs: str = ""

    @property
    def tokens(self) -> tuple[str, ...]:
        """Lowercased word pieces of class and id ("main-Content" -> main, content)."""
        return attr_tokens(self.attrs)


@dataclass
class RawBlock:
    """A block of page text with what is needed to featurise and rebuild it."""

    text: str
    kind: str
    element: Any
    level: int = 0
    cells: tuple[str, ...] = ()
    link_chars: int = 0
    #: Open elements from the root down to the owner element (owner last).
    path: tuple[Context, ...] = ()
    #: Inside an element hidden by markup (only with ``segment(keep_hidden=True)``).
    hidden: bool = False

    def to_block(self) -> Block:
        level = self.level
        if self.kind == "item":
            # An item's depth below the outermost list, for the output only (the features
            # read ``self.level``, 0 for items).
            level = max(sum(1 for c in self.path if c.tag in LIST_TAGS) - 1, 0)
        return Block(kind=self.kind, text=self.text, level=level, cells=self.cells)


class _Run:
    """The text of the block being read (a plain class: one is made per block)."""

    __slots__ = ("hidden", "link_chars", "pieces")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.link_chars = 0
        #: Text inside an element hidden by markup (``keep_hidden``).
        self.hidden = False


def normalize(text: str) -> str:
    """Whitespace runs collapsed to one space, ends stripped (same as ``\\s+`` -> " ")."""
    return " ".join(text.split())


def _attrs(el: Any) -> str:
    cls, ident = el.get("class"), el.get("id")
    if cls is None and ident is None:
        return ""
    return f"{cls or ''} {ident or ''}"


class Segments(list[RawBlock]):
    """A page's blocks in document order; ``cut`` when the walk stopped at ``MAX_BLOCKS`` or
    ``MAX_ELEMENTS`` with the page not read to its end (the rest is in no block)."""

    cut: bool = False


class _Segmenter:
    """State of one walk over the tree."""

    def __init__(self) -> None:
        self.blocks = Segments()
        self.root: Any = None
        self.stack: list[Context] = []
        self.owners: list[Any] = []
        self.run = _Run()
        self.link_depth = 0
        #: Set after skipping a dropped element: its end event comes next.
        self.skipping = False
        #: Hidden elements open on the walk (kept with ``keep_hidden``), innermost last.
        self.hidden: list[Any] = []

    def add_text(self, text: str | None) -> None:
        # Whitespace opening a run is stripped anyway; skipping it saves most flushes.
        if text and (self.run.pieces or not text.isspace()):
            hidden = bool(self.hidden)
            if hidden != self.run.hidden:
                # Hidden text is a run of its own, started by text (an empty hidden
                # element, a tracking pixel, splits nothing).
                self.flush()
                self.run.hidden = hidden
                if text.isspace():
                    return
            self.run.pieces.append(text)
            if self.link_depth:
                self.run.link_chars += len(text.strip())

    def flush(self) -> None:
        if not self.run.pieces:
            return
        text = normalize("".join(self.run.pieces))[:MAX_BLOCK_CHARS]
        link_chars = min(self.run.link_chars, len(text))
        hidden, self.run = self.run.hidden, _Run()
        if text and self.owners:
            top = self.stack[-1]
            self.emit(RawBlock(text, top.kind, self.owners[-1], top.level, (), link_chars), hidden)

    def emit(self, block: RawBlock, hidden: bool) -> None:
        block.path = tuple(self.stack[-MAX_PATH:])
        block.hidden = hidden
        if len(self.blocks) < MAX_BLOCKS:
            self.blocks.append(block)
        else:
            self.blocks.cut = True

    def push(self, el: Any, tag: str) -> None:
        parent = self.stack[-1] if self.stack else Context("", "p", 0)
        kind = KIND_OF_TAG.get(tag, parent.kind)
        level = int(tag[1]) if kind == "head" and tag in KIND_OF_TAG else parent.level
        self.stack.append(Context(tag, kind, level if kind == "head" else 0, _attrs(el)))
        self.owners.append(el)

    def pop(self) -> None:
        self.stack.pop()
        self.owners.pop()


def _simple_row_cells(el: Any) -> tuple[str, ...] | None:
    """Cell texts of a data row (cells holding only inline content), else None."""
    if next(el.iterdescendants(*NESTED_IN_ROW), None) is not None:
        return None
    if next(el.iterdescendants(*DROP_TAGS), None) is not None:
        return None
    cells = tuple(
        normalize(c.text_content())[:MAX_BLOCK_CHARS] for c in el.iterchildren("td", "th")
    )
    return cells


def _leaf_text(el: Any) -> str | None:
    """Text of a <pre> with line breaks kept, or None when it holds markup to drop."""
    if next(el.iterdescendants(*DROP_TAGS), None) is not None:
        return None
    lines = [line.rstrip() for line in el.text_content().strip("\n").split("\n")]
    return "\n".join(lines).strip()[:MAX_BLOCK_CHARS]


def _start_block(seg: _Segmenter, walker: Any, el: Any, tag: str, text: str | None) -> bool:
    """Open a block at ``el`` (``text``: its own text); True when its subtree was read whole
    (and is skipped)."""
    seg.flush()
    seg.push(el, tag)
    if tag == "tr":
        cells = _simple_row_cells(el)
        if cells is not None:
            walker.skip_subtree()
            filled = tuple(c for c in cells if c)
            hidden = bool(seg.hidden)
            if len(filled) >= 2:
                row = RawBlock(" | ".join(cells), "row", el, 0, cells, _link_chars(el))
                seg.emit(row, hidden)
            elif filled:
                kind = seg.stack[-1].kind
                seg.emit(RawBlock(filled[0], kind, el, 0, (), _link_chars(el)), hidden)
            return True
    if tag == "pre":
        code = _leaf_text(el)
        if code is not None:
            walker.skip_subtree()
            if code:
                seg.emit(RawBlock(code, "code", el, 0, (), _link_chars(el)), bool(seg.hidden))
            return True
    seg.add_text(text)
    return False


def _link_chars(el: Any) -> int:
    return sum(len(normalize(a.text_content())) for a in el.iterdescendants("a"))


def segment(root: Any, keep_hidden: bool = False, observer: Observer | None = None) -> Segments:
    """Blocks of ``root`` in document order. Never modifies the tree.

    Elements hidden by markup are dropped, or with ``keep_hidden`` kept as blocks of their
    own marked ``hidden`` (shops reveal product descriptions by script); pop-ups are always
    dropped. ``REVEAL_SHARE`` (off by default; ignored with ``keep_hidden``) reads a hidden
    element holding most of the page's text as visible. ``observer`` reads the first walk
    (``Observer``).
    """
    blocks = _walk(root, keep_hidden, frozenset(), observer)
    if keep_hidden or REVEAL_SHARE >= 1.0:
        return blocks
    wrappers = reveal_wrappers(root, sum(len(b.text) for b in blocks), REVEAL_SHARE, MAX_ELEMENTS)
    return _walk(root, keep_hidden, wrappers) if wrappers else blocks


def _walk(
    root: Any, keep_hidden: bool, revealed: frozenset[Any], observer: Observer | None = None
) -> Segments:
    seg = _Segmenter()
    seg.root = root
    walker = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    visited = 0
    ended = True
    # Each element's tag, text, tail and attributes are read once, for the observer too.
    on_start = observer.start if observer is not None else None
    on_end = observer.end if observer is not None else None
    hidden_open = seg.hidden
    for event, el in walker:
        if event == "start":
            visited += 1
            if visited > MAX_ELEMENTS or len(seg.blocks) >= MAX_BLOCKS:
                seg.blocks.cut = True
                ended = False
                break
            raw = el.tag
            tag = known_name(raw, "")
            if tag == "":
                tag = name_of(raw)
            text = None if tag in UNREAD_TEXT else el.text
            attrib = el.attrib
            if on_start is not None:
                on_start(el, raw, text, attrib)
            hidden = tag is not None and bool(attrib) and is_hidden(attrib) and el not in revealed
            if (
                tag is None
                or tag in DROP_TAGS
                or (attrib and is_popup(attrib))
                or (hidden and not keep_hidden)
            ):
                seg.skipping = True
                walker.skip_subtree()
                if observer is not None:
                    observer.subtree(el)
                continue
            if hidden:
                seg.hidden.append(el)
            if tag in BLOCK_TAGS or visited == 1:
                if _start_block(seg, walker, el, tag, text) and observer is not None:
                    observer.subtree(el)
            elif tag == "br":
                seg.flush()
            else:
                seg.link_depth += tag == "a"
                if text:
                    seg.add_text(text)
        elif event == "end":
            # Inline, not a function: one call fewer per element of the page.
            tail = el.tail
            if seg.skipping:
                seg.skipping = False
            else:
                raw = el.tag
                tag = known_name(raw, "")
                if tag == "":
                    tag = name_of(raw)
                if tag in BLOCK_TAGS or el is root:
                    seg.flush()
                    seg.pop()
                elif tag == "a":
                    seg.link_depth -= 1
            if hidden_open and hidden_open[-1] is el:
                hidden_open.pop()  # its tail is not hidden
            if tail:
                seg.add_text(tail)
            if on_end is not None:
                on_end(el, tail)
        else:
            seg.add_text(el.tail)
            if observer is not None:
                observer.other(el)
    seg.flush()
    if observer is not None:
        observer.finish(ended)
    return seg.blocks
