"""The article's own pictures, each with its caption and credit, where it stands in the body.

Read from the page only (nothing is fetched). One walk of the tree in document order gives
every picture (``<img>``, ``<amp-img>``, a ``<picture>``'s sources, lazy-loading attributes)
and the page's text before it; the body's blocks are found in that text, so a picture's
place is the body block it stands before, whatever engine made the body. A picture is the
article's when it stands within the article (from its headline to its last body block),
outside page furniture (header, navigation, footer, aside, elements named for logos,
avatars, ads, teasers, sharing), not as a link to another page (a teaser), not tiny (icons,
tracking pixels). Captions come from the picture's ``<figcaption>`` or caption element, then
JSON-LD ``ImageObject``, then a caption line the text convention took out of the body just
after it; credits from credit markup inside the caption, a "Foto: ..." or "(c) ..." part of
the caption text, or JSON-LD. Scrapy-free.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import lxml.etree
import lxml.html
from scrapy_maintext.document import Block, Image
from scrapy_maintext.pictures.captions import (
    Picture,
    add_convention_captions,
    add_json_ld_captions,
    caption_of,
    clean,
)
from scrapy_maintext.pictures.cover import cover_index, headline_offset, lead_offset
from scrapy_maintext.pictures.furniture import is_furniture, is_furniture_file
from scrapy_maintext.pictures.renditions import IMAGE_TAGS, best_url, picture_key

# Re-exported: callers compare the cover with the pictures.
from scrapy_maintext.pictures.renditions import same_picture as same_picture

#: Pictures kept per page at most (a gallery of hundreds is not the article's pictures).
MAX_IMAGES = 60
#: Characters of a block's text used to find it in the page's text.
BLOCK_KEY_CHARS = 40
#: Elements the walk reads at most (the first, in document order): above every page of the
#: labelled data; on a larger page the pictures and body blocks after them are not looked for.
MAX_WALK_ELEMENTS = 20_000
#: Blocks looked for again from the page's start, at most, per page (see ``block_offsets``).
MAX_LOOKBACKS = 200

#: Elements whose own text is not the page's text (their pictures still count: lazy-loading
#: pages put the real ``<img>`` in a ``<noscript>``).
NO_TEXT = frozenset({"script", "style", "template", "noscript"})
_IMAGE_OBJECTS = lxml.etree.XPath("boolean(//*[@itemtype][contains(@itemtype, 'ImageObject')])")
#: The page's ``<base href>``: in ``<head>``, where the parser keeps it (not a whole-tree scan).
_BASE = lxml.etree.XPath("/html/head/base/@href")


@dataclass
class PageText:
    """The page's text without whitespace, and where each picture and ``<h1>`` stands in it."""

    text: str = ""
    pictures: list[tuple[lxml.html.HtmlElement, int]] = field(default_factory=list)
    headings: list[tuple[str, int]] = field(default_factory=list)


def article_images(
    tree: lxml.html.HtmlElement,
    url: str | None,
    body: Sequence[Block],
    cover: str | None = None,
    title: str | None = None,
    captions: Sequence[Block] = (),
    walked: PageText | None = None,
) -> list[Image]:
    """The article's pictures (see the module's doc); ``cover`` (``og:image``) marks the cover,
    ``captions`` are the caption lines the text convention took out of the body; ``walked``:
    the page's ``walk`` when the segmenter's walk already gave it."""
    if not body:
        return []
    if walked is None and not _has_pictures(tree):
        return []
    page = walked if walked is not None else walk(tree)
    if not page.pictures:
        return []
    starts = block_offsets(page.text, body)
    found_starts = [s for s in starts if s is not None]
    if not found_starts:
        return []
    headline = headline_offset(page.headings, title, found_starts[0])
    start = lead_offset(page.pictures, headline, lambda el: not is_furniture(el, url))
    end = max(found_starts) + len(_squash(body[starts.index(max(found_starts))].text))
    base = _base_url(tree, url)
    pictures: list[Picture] = []
    seen: set[str] = set()
    for element, offset in page.pictures:
        if not start <= offset <= end or is_furniture(element, url):
            continue
        picture_url = best_url(element, base)
        if picture_url is None or picture_key(picture_url) in seen:
            continue
        if is_furniture_file(picture_url):
            continue
        seen.add(picture_key(picture_url))
        alt = clean(element.get("alt"))
        pictures.append(Picture(element, picture_url, offset, alt))
        if len(pictures) >= MAX_IMAGES:
            break
    urls: dict[lxml.html.HtmlElement, str | None] = {}
    for picture in pictures:
        picture.caption, picture.credit = caption_of(picture.element, urls)
    add_json_ld_captions(tree, base, pictures)
    add_convention_captions(pictures, captions, block_offsets(page.text, captions))
    return _images(pictures, starts, cover, base)


def _images(
    pictures: list[Picture], starts: list[int | None], cover: str | None, base: str | None
) -> list[Image]:
    positions = [sum(1 for s in starts if s is not None and s < p.offset) for p in pictures]
    first = next((s for s in starts if s is not None), 0)
    og = urljoin(base or "", cover) if cover else None
    cover_at = cover_index([p.url for p in pictures], [p.offset for p in pictures], first, og)
    images = []
    for i, picture in enumerate(pictures):
        images.append(
            Image(
                picture.url,
                picture.alt,
                picture.caption,
                picture.credit,
                i == cover_at,
                positions[i],
            )
        )
    return images


# -- The walk ---------------------------------------------------------------------------------


def walk(tree: lxml.html.HtmlElement) -> PageText:
    """One pass in document order, linear in the page's size: the text without whitespace,
    the pictures and the ``<h1>``s, each at its offset in that text (``TextWalk``).

    (A single XPath uniting the text nodes with the pictures and headings, which this
    replaced, took time quadratic in the nodes: ``benchmarks/huge_pages.py``.)
    """
    reader = TextWalk()
    start, end, other = reader.start, reader.end, reader.other
    for event, el in _iterwalk_document(tree):
        if event == "start":
            start(el, el.tag, el.text, el.attrib)
            if reader.done:
                break
        elif event == "end":
            end(el, el.tail)
        else:
            other(el)
    return reader.page()


class TextWalk:
    """``walk``'s reader, fed the walk's events one by one (``start``, ``end``, ``other``
    for comments and processing instructions): by ``walk`` or by the segmenter's walk
    (``extraction.page_walk``), which then spares the page its own walk. Past
    ``MAX_WALK_ELEMENTS`` elements it is ``done`` and reads nothing more.

    The text is kept as it comes and squashed once in ``page`` (squashing the pieces one by
    one gives the same text: white space removed from a join is removed from each part);
    a picture or heading remembers how many pieces came before it."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        #: (pieces before it, the heading's squashed text or None, the picture or None).
        self.marks: list[tuple[int, str | None, Any]] = []
        # Whether each open element's own text is skipped; a tail belongs to the parent's.
        self.skipping = [False]
        self.elements = 0
        self.done = False

    def start(self, el: Any, tag: Any, text: str | None, attrib: Any) -> None:
        """``el`` opens (``tag``, ``text``, ``attrib``: its own, read once by the walk;
        ``text`` may be None for ``NO_TEXT`` tags)."""
        if self.done:
            return
        self.elements += 1
        if self.elements > MAX_WALK_ELEMENTS:
            self.done = True
            return
        if tag == "h1":
            self.marks.append((len(self.parts), "".join(el.text_content().split()), None))
        elif tag in IMAGE_TAGS or (attrib and attrib.get("itemtype") and _is_image_object(el)):
            self.marks.append((len(self.parts), None, el))
        skip = tag in NO_TEXT
        self.skipping.append(skip)
        if not skip and text:
            self.parts.append(text)

    def end(self, el: Any, tail: str | None) -> None:
        """``el`` closes (``tail``: its tail)."""
        if self.done:
            return
        skipping = self.skipping
        skipping.pop()
        if not skipping[-1] and tail:
            self.parts.append(tail)

    def other(self, el: Any) -> None:
        if not self.done and not self.skipping[-1]:
            tail = el.tail
            if tail:
                self.parts.append(tail)

    def page(self) -> PageText:
        page = PageText()
        parts, squashed = self.parts, []
        length = done = 0
        for count, heading, picture in self.marks:
            if count > done:
                piece = _squash("".join(parts[done:count]))
                squashed.append(piece)
                length += len(piece)
                done = count
            if picture is None:
                page.headings.append((heading or "", length))
            else:
                page.pictures.append((picture, length))
        squashed.append(_squash("".join(parts[done:])))
        page.text = "".join(squashed)
        return page


def _has_pictures(tree: lxml.html.HtmlElement) -> bool:
    """Whether the page has a picture or a microdata ``ImageObject`` at all (in C)."""
    return next(tree.iter(*IMAGE_TAGS), None) is not None or bool(_IMAGE_OBJECTS(tree))


def _iterwalk_document(tree: lxml.html.HtmlElement) -> Iterator[tuple[str, Any]]:
    """The document's every top-level element walked in order: a broken page can hold a
    second ``<html>`` after the first, which the parser keeps beside the root."""
    root = tree.getroottree().getroot()
    tops = [*reversed(list(root.itersiblings(preceding=True))), root, *root.itersiblings()]
    for top in tops:
        if isinstance(top.tag, str):
            yield from lxml.etree.iterwalk(top, events=("start", "end", "comment", "pi"))


def _is_image_object(el: lxml.html.HtmlElement) -> bool:
    """A microdata ``ImageObject`` that names its picture in ``<meta>`` only (no ``<img>``)."""
    if "ImageObject" not in (el.get("itemtype") or ""):
        return False
    return not any(True for _ in el.iter(*IMAGE_TAGS))


def _squash(text: str) -> str:
    return "".join(text.split())


def block_offsets(text: str, blocks: Sequence[Block]) -> list[int | None]:
    """Where each block's text starts in the page's text (None: not found), in order. A
    block not found after the one before is looked for from the start again, at most
    ``MAX_LOOKBACKS`` times a page: each is a scan of the text, and on a page cut by the
    walk's cap every block after the cut would be one."""
    offsets: list[int | None] = []
    cursor = 0
    lookbacks = MAX_LOOKBACKS
    for block in blocks:
        key = _squash(block.text)[:BLOCK_KEY_CHARS]
        at = text.find(key, cursor) if key else -1
        if at < 0 and key and lookbacks:
            lookbacks -= 1
            at = text.find(key)
        offsets.append(at if at >= 0 else None)
        if at >= cursor:
            cursor = at + len(key)
    return offsets


def _base_url(tree: lxml.html.HtmlElement, url: str | None) -> str | None:
    for href in _BASE(tree)[:1]:
        return urljoin(url or "", str(href).strip())
    return url
