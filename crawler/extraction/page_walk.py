"""What the segmenter's walk of a page gives the page's other steps (issue 45, "one walk of
the page"): the page type's structure counts (``page_type.Structure``) and the pictures with
the page's text around them (``pictures.images.TextWalk``), read on the same pass in
document order, so that neither walks the tree again.

The segmenter skips subtrees (dropped and hidden elements, rows and ``<pre>`` it reads
whole) that both readers see: those are walked for the readers alone (``subtree``), in
their place, so the readers see every element in document order as their own walks would.
A walk that stopped early (the segmenter's limits) before the readers had read what they
read is not ``complete``: the steps then walk the page themselves. Scrapy-free.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lxml.html
from lxml import etree
from scrapy_maintext.extraction import page_type
from scrapy_maintext.extraction.page_type import Structure
from scrapy_maintext.pictures import images
from scrapy_maintext.pictures.images import PageText, TextWalk

_EVENTS = ("start", "end", "comment", "pi")
#: Elements whose own text neither reader reads (the segmenter drops them too:
#: ``neural.segment.UNREAD_TEXT``, which must be among these).
UNREAD_TEXT = page_type.SKIPPED & images.NO_TEXT


class PageWalk:
    """The readers fed by the segmenter (``neural.segment.segment(observer=...)``)."""

    def __init__(self) -> None:
        self.structure = Structure()
        self.pictures = TextWalk()
        #: Whether the readers saw what their own walks would have (set by ``finish``).
        self.complete = False
        # Ends and comments have one reader: the walk calls it without a call in between
        # (once per element of the page).
        self.end: Callable[[Any, str | None], None] = self.pictures.end
        self.other: Callable[[Any], None] = self.pictures.other

    @classmethod
    def of(cls, tree: lxml.html.HtmlElement) -> PageWalk | None:
        """A walk for ``tree``, or None when the segmenter's walk would not see what the
        readers' own walks see: a tree that is not the document's root, or a root with
        elements beside it (a broken page's second ``<html>``, which the pictures read)."""
        if tree.getparent() is not None:
            return None
        if any(isinstance(el.tag, str) for el in tree.itersiblings(preceding=True)):
            return None
        if any(isinstance(el.tag, str) for el in tree.itersiblings()):
            return None
        return cls()

    @property
    def done(self) -> bool:
        """Both readers have read as far as they read."""
        return self.structure.full and self.pictures.done

    def start(self, el: Any, tag: Any, text: str | None, attrib: Any) -> None:
        self.structure.add(el, tag, text, attrib)
        self.pictures.start(el, tag, text, attrib)

    def subtree(self, top: Any) -> None:
        """The events under ``top`` (its own start seen, its end to come): a subtree the
        segmenter does not walk."""
        if self.done or not len(top):
            # A leaf (most skipped elements: scripts, styles, images) has no events below it.
            return
        feed(etree.iterwalk(top, events=_EVENTS), self.structure.add, self.pictures, top)

    def finish(self, ended: bool) -> None:
        """The segmenter's walk is over; ``ended``: it reached the page's end."""
        self.complete = ended or self.done
        # The declared types are read from every element, not the first MAX_ELEMENTS.
        self.structure.whole = ended and not self.structure.full

    def page_text(self) -> PageText | None:
        """The pictures' ``walk`` of the page, when complete."""
        return self.pictures.page() if self.complete else None

    def structure_counts(self) -> Structure | None:
        """The page type's structure counts, when complete."""
        return self.structure if self.complete else None


def feed(events: Any, add: Any, pictures: TextWalk | None, top: Any = None) -> None:
    """The readers fed from ``events`` (an ``iterwalk`` with ``_EVENTS``; ``top``'s own
    skipped), each element's tag, text and attributes read once for both: ``add``
    (``Structure.add``) and ``pictures`` (a ``TextWalk``; None: the structure alone)."""
    for event, el in events:
        if el is top:
            continue
        if event == "start":
            tag = el.tag
            text = None if tag in UNREAD_TEXT else el.text
            attrib = el.attrib
            add(el, tag, text, attrib)
            if pictures is not None:
                pictures.start(el, tag, text, attrib)
        elif pictures is None:
            continue
        elif event == "end":
            pictures.end(el, el.tail)
        else:
            pictures.other(el)
