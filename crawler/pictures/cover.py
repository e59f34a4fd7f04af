"""Where the article starts among its pictures, and which picture is its cover.

The article starts at its headline: the last ``<h1>`` before the first body block that the
title opens (or that opens it), else the last ``<h1>`` shortly before that block (pages whose
``og:title`` or JSON-LD headline is not the ``<h1>``'s wording). A lead picture may stand
above the headline (a page header's picture or slider): the nearest picture of the article
within ``LEAD_REACH`` characters of text above it starts the article then.

The cover is the lead picture: the first of the article's pictures that stands before the
body's first block (above or below the headline); else the picture ``og:image`` shows, in
its page rendition or another crop of it (:func:`crop_of`); else the first picture. Each
step reads the walk's lists only (the ``<h1>``s and pictures with their offsets). Scrapy-free.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from scrapy_maintext.pictures.furniture import site_key
from scrapy_maintext.pictures.renditions import same_picture

#: Characters of page text (without whitespace) an ``<h1>`` may stand before the first body
#: block and be the headline without matching the title (a dateline, a standfirst, a
#: byline and a lead picture's caption between them).
HEADLINE_REACH = 1_000
#: Characters of page text (without whitespace) a lead picture may stand above the headline
#: (a breadcrumb, a kicker, a caption between them).
LEAD_REACH = 400
#: Pictures above the headline looked at, at most (a page header of hundreds of icons).
MAX_LEAD_CANDIDATES = 30
#: Characters of the title and of an ``<h1>`` compared.
TITLE_KEY_CHARS = 40
#: Digits of a picture's number in its file name ("1065948_der-buergermeister-...jpg"): the
#: crops of one picture share it.
MIN_PICTURE_NUMBER = 5
_PICTURE_NUMBER = re.compile(rf"(?<!\d)\d{{{MIN_PICTURE_NUMBER},}}(?!\d)")


def headline_offset(headings: Sequence[tuple[str, int]], title: str | None, first: int) -> int:
    """Where the headline stands in the page's text (the module's doc); ``headings`` are the
    ``<h1>``s' texts without whitespace with their offsets, ``first`` is the first body
    block's offset, returned when no ``<h1>`` is the headline."""
    key = "".join((title or "").split())[:TITLE_KEY_CHARS]
    matching = near = None
    for text, offset in headings:
        if offset >= first:
            break
        if key and text and (text.startswith(key) or key.startswith(text[:20])):
            matching = offset
        if first - offset <= HEADLINE_REACH:
            near = offset
    if matching is not None:
        return matching
    return near if near is not None else first


def lead_offset(
    pictures: Sequence[tuple[Any, int]],
    headline: int,
    is_article_picture: Callable[[Any], bool],
) -> int:
    """The offset of the nearest picture above the headline, within ``LEAD_REACH`` and the
    last ``MAX_LEAD_CANDIDATES`` pictures, that ``is_article_picture`` accepts; ``headline``
    when there is none. ``pictures`` are the walk's (element, offset) pairs in document
    order."""
    end = _bisect(pictures, headline)
    for element, offset in reversed(pictures[max(0, end - MAX_LEAD_CANDIDATES) : end]):
        if offset < headline - LEAD_REACH:
            break
        if is_article_picture(element):
            return offset
    return headline


def _bisect(pictures: Sequence[tuple[Any, int]], offset: int) -> int:
    """How many of ``pictures`` (in document order) stand before ``offset``."""
    low, high = 0, len(pictures)
    while low < high:
        middle = (low + high) // 2
        if pictures[middle][1] < offset:
            low = middle + 1
        else:
            high = middle
    return low


def cover_index(urls: Sequence[str], offsets: Sequence[int], first: int, og: str | None) -> int:
    """Which of the article's pictures (their URLs and offsets, in order) is the cover (the
    module's doc); -1 when there are none. ``first``: the first body block's offset; ``og``:
    the page's ``og:image`` (absolute)."""
    if not urls:
        return -1
    if offsets[0] < first:
        return 0
    if og:
        for test in (same_picture, crop_of):
            found = next((i for i, url in enumerate(urls) if test(url, og)), None)
            if found is not None:
                return found
    return 0


def crop_of(url: str, other: str) -> bool:
    """Whether two URLs of one site name crops of one picture by its number in their file
    names ("1065948_..._detail-800w_1FngrG.webp", "1065948_..._metadaten_1FngrG.jpg")."""
    a, b = urlsplit(url), urlsplit(other)
    if site_key(a.netloc) != site_key(b.netloc):
        return False
    return bool(_numbers(a.path) & _numbers(b.path))


def _numbers(path: str) -> set[str]:
    return set(_PICTURE_NUMBER.findall(path.rsplit("/", 1)[-1]))
