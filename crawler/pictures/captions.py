"""A picture's caption and credit: from its markup (``<figcaption>``, elements named for
captions and credits beside it, ``data-caption``, ``title``), a credit written in the caption
("... Foto: dpa"), JSON-LD ``ImageObject``s, and the caption lines the text convention took
out of the body. Scrapy-free.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import lxml.html
from scrapy_maintext.document import Block
from scrapy_maintext.pictures.renditions import IMAGE_TAGS, best_url, picture_key, same_picture

#: Characters of body text a caption line may stand after its picture and still be its own.
CAPTION_REACH = 40
#: Picture elements besides its own a picture's container may hold (a lazy-loading
#: placeholder, the ``<noscript>`` copy, a rendition); more: other pictures.
MAX_RENDITION_ELEMENTS = 3
MAX_CAPTION_CHARS = 600
MAX_CREDIT_CHARS = 200
CAPTION_WORDS = re.compile(
    r"caption|legend|beschreibung|bildtext|bildunterschrift|subtitle|description|infotext|"
    r"(?:img|image|media|photo|picture|foto|bild)[-_]?info",
    re.I,
)
_CREDIT_WORDS = re.compile(
    r"credit|copyright|source|photographer|rights|quelle|fotograf|author|byline|agency", re.I
)
#: A credit written in the caption: "... (Foto: dpa)", "... Photo: AP", "... © Reuters".
_CREDIT_IN_TEXT = re.compile(
    r"\s*(?:[|/\u2013\u2014-]\s*)?[(\[]?\s*"
    r"((?:©|\(c\)|copyright\b|(?i:fotos?|photos?|photograph|bild|bilder|bildquelle|image|credit|"
    r"credits|quelle|source|foto ?credit|picture|pictures|imagem|imagen|immagine|kuva)\s*:)"
    r"\s*[^()\[\]]{1,120}?)[)\]]?\s*$"
)
#: A credit in the caption's closing parentheses, checked by ``_is_agency``.
_AGENCY_IN_TEXT = re.compile(r"\s*\(([^()]{1,80})\)\s*$")
AGENCY_MAX_WORDS = 4
_NOT_AGENCIES = frozenset((
    "left", "right", "centre", "center", "file", "front", "back", "top", "bottom", "l", "r",
    "m", "c", "archive", "archiv", "archivbild", "symbolbild", "illustration", "video",
))  # fmt: skip
_CREDIT_LEAD = re.compile(
    r"^(?:©|\(c\)|copyright|(?i:fotos?|photos?|photograph|bild|bilder|bildquelle|image|credit|credits|"
    r"quelle|source|foto ?credit|picture|pictures|imagem|imagen|immagine|kuva))\s*:?\s*",
    re.I,
)
#: Resolves relative picture URLs for comparing them with each other only.
_COMPARISON_BASE = "https://page.invalid/"
#: Elements whose text is never a caption.
_SKIP_TAGS = frozenset({"script", "style", "template", "svg"})


@dataclass
class Picture:
    """One picture of the page as the walk met it, and what is said of it."""

    element: lxml.html.HtmlElement
    url: str
    #: Characters of page text (without whitespace) before it.
    offset: int
    alt: str | None = None
    caption: str | None = None
    credit: str | None = None


def caption_of(
    element: lxml.html.HtmlElement, urls: dict[Any, str | None] | None = None
) -> tuple[str | None, str | None]:
    """The caption and credit the markup gives a picture: its figure's ``<figcaption>`` or an
    element named for captions or credits beside it (within the few elements that hold this
    picture and no other), else its ``data-caption`` or ``title`` attribute. ``urls``: the
    pictures' URLs found so far (``best_url``), kept between calls on one page."""
    container = _own_container(element, {} if urls is None else urls)
    caption_el = next(iter(container.iter("figcaption")), None)
    credit_els = [
        el
        for el in container.iter()
        if el is not element and (el.tag == "cite" or _named(el, _CREDIT_WORDS))
    ]
    if caption_el is None:
        caption_el = next(
            (el for el in container.iter() if _named(el, CAPTION_WORDS) and el is not element),
            None,
        )
    credit = _credits(credit_els)
    caption = _text_without(caption_el, credit_els) if caption_el is not None else None
    if caption is None:
        caption = clean(element.get("data-caption"))
    if caption and not credit:
        caption, credit = split_credit(caption)
    elif caption and credit:
        caption = split_credit(caption)[0] or caption
    if not credit and element.get("title"):
        credit = split_credit(" ".join(element.get("title", "").split()))[1]
    return _clip(caption, MAX_CAPTION_CHARS), _clip(credit_text(credit), MAX_CREDIT_CHARS)


def _own_container(
    element: lxml.html.HtmlElement, urls: dict[Any, str | None]
) -> lxml.html.HtmlElement:
    """The largest of the picture's few ancestors that shows no other picture (its renditions
    and a lazy-loading placeholder do not count), up to its ``<figure>``."""
    container = element
    own = _url(element, urls)
    for _ in range(4):
        parent = container.getparent()
        if parent is None or parent.tag in ("body", "article", "main"):
            break
        inside = [el for el in parent.iter(*IMAGE_TAGS) if el is not element]
        if len(inside) > MAX_RENDITION_ELEMENTS:
            break
        found = (_url(el, urls) for el in inside)
        others = {picture_key(u) for u in found if u and not (own and same_picture(u, own))}
        if others:
            break
        container = parent
        if container.tag == "figure":
            break
    return container


def _url(element: lxml.html.HtmlElement, urls: dict[Any, str | None]) -> str | None:
    """A picture's URL to compare with the page's others: relative ones resolved against a
    stand-in base (without one, ``best_url`` gives None for them, and a container holding
    other pictures with relative URLs looked like the picture's own)."""
    if element not in urls:
        urls[element] = best_url(element, _COMPARISON_BASE)
    return urls[element]


def _named(el: Any, pattern: re.Pattern[str]) -> bool:
    if not isinstance(el.tag, str) or el.tag in IMAGE_TAGS:
        return False
    return bool(
        pattern.search(f"{el.get('class', '')} {el.get('id', '')} {el.get('itemprop', '')}")
    )


def _credits(elements: list[Any]) -> str | None:
    """The texts of the credit elements ("GHULAM RASOOL", "AFP via Getty Images"), those
    inside another one left out, joined by " / "."""
    chosen = set(elements)
    texts: list[str] = []
    for el in elements:
        if any(a in chosen for a in el.iterancestors()):
            continue
        text = clean(el.text_content())
        if text and text not in texts:
            texts.append(text)
    return " / ".join(texts) or None


def _text_without(el: Any, left_out: list[Any]) -> str | None:
    """``el``'s text without the text of the elements in ``left_out`` below it."""
    skip = {id(x) for x in left_out if x is not el}
    parts: list[str] = []

    def add(node: Any) -> None:
        if id(node) in skip or node.tag in _SKIP_TAGS:
            return
        if node.text:
            parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str):
                add(child)
            if child.tail:
                parts.append(child.tail)

    add(el)
    return clean(" ".join(parts))


def split_credit(caption: str) -> tuple[str | None, str | None]:
    """A caption and the credit written at its end ("Trams in Basel. Foto: Anna Maier", "...
    in Gaza. (Mohamed El Saife/CBC)", "... (AP)")."""
    match = _CREDIT_IN_TEXT.search(caption)
    if match:
        rest = caption[: match.start()].strip(" |/-\u2013\u2014")
        return (rest or None), match.group(1)
    match = _AGENCY_IN_TEXT.search(caption)
    if match and _is_agency(match.group(1)):
        return (caption[: match.start()].strip() or None), match.group(1)
    return caption, None


def _is_agency(text: str) -> bool:
    """Whether the words in a caption's closing parentheses credit someone: a name with a
    slash ("Mohamed El Saife/CBC"), or a few capitalised words that are no stage direction
    ("(left)", "(file)")."""
    if "/" in text:
        return True
    words = text.split()
    return (
        len(words) <= AGENCY_MAX_WORDS
        and all(w[:1].isupper() for w in words)
        and words[0].casefold() not in _NOT_AGENCIES
    )


def credit_text(credit: str | None) -> str | None:
    """A credit without its lead word ("Foto: dpa" -> "dpa")."""
    if not credit:
        return None
    return clean(_CREDIT_LEAD.sub("", credit.strip(" ()[]"))) or None


def clean(text: str | None) -> str | None:
    if not text:
        return None
    text = " ".join(text.split())
    return text or None


def _clip(text: str | None, limit: int) -> str | None:
    return text[:limit] if text else None


def add_json_ld_captions(
    tree: lxml.html.HtmlElement, base: str | None, pictures: list[Picture]
) -> None:
    """Captions and credits of JSON-LD ``ImageObject``s, for pictures the markup left without."""
    wanting = {picture_key(p.url): p for p in pictures if not (p.caption and p.credit)}
    if not wanting:
        return
    for obj in _image_objects(tree):
        picture_url = obj.get("contentUrl") or obj.get("url")
        if not isinstance(picture_url, str):
            continue
        picture = wanting.get(picture_key(urljoin(base or "", picture_url)))
        if picture is None:
            continue
        caption = obj.get("caption") or obj.get("description")
        if not picture.caption and isinstance(caption, str):
            picture.caption = clean(caption)
        if not picture.credit:
            picture.credit = credit_text(_object_credit(obj))


def _object_credit(obj: dict[str, Any]) -> str | None:
    for name in ("creditText", "copyrightHolder", "author", "creator", "copyrightNotice"):
        value = obj.get(name)
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, dict):
            value = value.get("name")
        if isinstance(value, str) and value.strip():
            return value
    return None


def _image_objects(tree: lxml.html.HtmlElement) -> Iterator[dict[str, Any]]:
    for script in tree.xpath('//script[@type="application/ld+json"]'):
        text = script.text or ""
        if "ImageObject" not in text or len(text) > 1_000_000:
            continue
        try:
            data = json.loads(text, strict=False)
        except (ValueError, RecursionError):
            continue
        queue: list[Any] = [data]
        budget = 5_000
        while queue and budget > 0:
            budget -= 1
            item = queue.pop()
            if isinstance(item, dict):
                if item.get("@type") == "ImageObject":
                    yield item
                queue.extend(v for v in item.values() if isinstance(v, dict | list))
            elif isinstance(item, list):
                queue.extend(v for v in item if isinstance(v, dict | list))


def add_convention_captions(
    pictures: list[Picture], captions: Sequence[Block], offsets: Sequence[int | None]
) -> None:
    """A caption line the text convention took out of the body (``offsets``: where each
    stands in the page's text), for the picture it follows within ``CAPTION_REACH``
    characters when that picture has no caption of its own."""
    for block, at in zip(captions, offsets, strict=True):
        if at is None:
            continue
        before = [p for p in pictures if p.offset <= at <= p.offset + CAPTION_REACH]
        if before and not before[-1].caption:
            before[-1].caption, credit = split_credit(" ".join(block.text.split()))
            before[-1].credit = before[-1].credit or credit_text(credit)
