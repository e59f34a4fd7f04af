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

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html
from scrapy_maintext.document import Block, Image

#: Pictures kept per page at most (a gallery of hundreds is not the article's pictures).
MAX_IMAGES = 60
#: A picture whose width or height attribute is below this is an icon or a pixel.
MIN_SIDE = 100
#: Characters of body text a caption line may stand after its picture and still be its own.
CAPTION_REACH = 40
#: Characters of a block's text used to find it in the page's text.
BLOCK_KEY_CHARS = 40
#: Digits a long run of letters and digits in a URL needs to be a picture's identifier (a
#: site-wide token, "NvBQzQNjv4Bqq...", has a few).
IDENTIFIER_DIGITS = 5
MAX_CAPTION_CHARS = 600
MAX_CREDIT_CHARS = 200

_IMAGE_TAGS = frozenset({"img", "amp-img"})
_SKIP_TAGS = frozenset({"script", "style", "template", "svg"})
#: Elements whose text is no page text (a ``<noscript>``'s pictures still count: lazy-loading
#: pages put the real ``<img>`` there).
_NO_TEXT_TAGS = frozenset({"noscript"})
_FURNITURE_TAGS = frozenset({"header", "nav", "footer", "aside", "form", "button"})
_FURNITURE_WORDS = re.compile(
    r"(?:^|[-_ ])(?:logo|avatar|icon|icons|ad|ads|advert|advertisement|banner|sponsor|"
    r"sponsored|teaser|teasers|related|recommend|recommended|recommendations|promo|share|"
    r"social|newsletter|author|authors|byline|profile|sidebar|widget|outbrain|taboola|"
    r"nav|navigation|menu|footer|comments?|emoji|badge|thumb|thumbnail|more)"
    r"(?:$|[-_ ])",
    re.I,
)
_CAPTION_WORDS = re.compile(
    r"caption|legend|beschreibung|bildtext|bildunterschrift|subtitle|description|infotext|"
    r"(?:img|image|media|photo|picture|foto|bild)[-_]?info",
    re.I,
)
_CREDIT_WORDS = re.compile(
    r"credit|copyright|source|photographer|rights|quelle|fotograf|author|byline|agency", re.I
)
_URL_ATTRIBUTES = (
    "data-src", "data-lazy-src", "data-original", "data-url", "data-hi-res-src",
    "data-flickity-lazyload", "data-lazyload", "src",
)  # fmt: skip
_SRCSET_ATTRIBUTES = (
    "srcset", "data-srcset", "data-lazy-srcset", "data-flickity-lazyload-srcset", "imagesrcset",
)  # fmt: skip
_PLACEHOLDER = re.compile(r"^data:|blank\.|spacer\.|placeholder|pixel\.|1x1|transparent|lazy\.", re.I)
_NOT_PICTURE = re.compile(r"\.(?:svg|ico)(?:$|\?)", re.I)
_SIZE_IN_URL = re.compile(r"(?<![a-z])(?:w|width|s)?[=_/-]?(\d{2,4})(?:x\d{2,4})?(?![\d])", re.I)
#: A credit written in the caption: "... (Foto: dpa)", "... Photo: AP", "... © Reuters".
_CREDIT_IN_TEXT = re.compile(
    r"\s*(?:[|/\u2013\u2014-]\s*)?[(\[]?\s*"
    r"((?:©|\(c\)|copyright\b|(?i:fotos?|photos?|photograph|bild|bilder|bildquelle|image|credit|"
    r"credits|quelle|source|foto ?credit|picture|pictures|imagem|imagen|immagine|kuva)\s*:)"
    r"\s*[^()\[\]]{1,120}?)[)\]]?\s*$"
)
_CREDIT_LEAD = re.compile(
    r"^(?:©|\(c\)|copyright|(?i:fotos?|photos?|photograph|bild|bilder|bildquelle|image|credit|credits|"
    r"quelle|source|foto ?credit|picture|pictures|imagem|imagen|immagine|kuva))\s*:?\s*",
    re.I,
)
_NON_SPACE = re.compile(r"\s+")
#: Sizes, formats and rendition words that differ between renditions of one picture.
_RENDITION = re.compile(
    r"(?:\d{2,4}x\d{0,4}|[wh]_?\d{2,4}|\d{2,4}[wh]|webp|jpe?g|png|avif|wide|free|alternates|"
    r"small|medium|large|thumb|crop|resize|scaled|c_limit|master)",
    re.I,
)
#: A long run of letters and digits in a path: an image id or a hash.
_IDENTIFIER = re.compile(r"[A-Za-z0-9]{12,}")


@dataclass
class Found:
    """One picture of the page as the walk met it."""

    element: lxml.html.HtmlElement
    url: str
    #: Characters of page text (without whitespace) before it.
    offset: int
    alt: str | None = None
    caption: str | None = None
    credit: str | None = None


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
) -> list[Image]:
    """The article's pictures (see the module's doc); ``cover`` (``og:image``) marks the cover,
    ``captions`` are the caption lines the text convention took out of the body."""
    page = walk(tree)
    starts = block_offsets(page.text, body)
    found_starts = [s for s in starts if s is not None]
    if not found_starts:
        return []
    start = min(found_starts[0], _title_offset(page, title, found_starts[0]))
    end = max(found_starts) + len(_squash(body[starts.index(max(found_starts))].text))
    base = _base_url(tree, url)
    linked = _linked_images(tree, url)
    pictures: list[Found] = []
    seen: set[str] = set()
    for element, offset in page.pictures:
        if not start <= offset <= end or _is_furniture(element, linked, url):
            continue
        picture_url = best_url(element, base)
        if picture_url is None or picture_key(picture_url) in seen:
            continue
        seen.add(picture_key(picture_url))
        alt = _clean(element.get("alt"))
        pictures.append(Found(element, picture_url, offset, alt))
        if len(pictures) >= MAX_IMAGES:
            break
    for picture in pictures:
        picture.caption, picture.credit = caption_of(picture.element)
    _json_ld_captions(tree, base, pictures)
    _convention_captions(page.text, pictures, captions, starts)
    return _images(pictures, starts, cover, base)


def _images(
    pictures: list[Found], starts: list[int | None], cover: str | None, base: str | None
) -> list[Image]:
    cover_url = urljoin(base or "", cover) if cover else None
    matches = [i for i, p in enumerate(pictures) if cover_url and same_picture(p.url, cover_url)]
    cover_at = matches[0] if matches else (0 if pictures else -1)
    images = []
    for i, picture in enumerate(pictures):
        position = sum(1 for s in starts if s is not None and s < picture.offset)
        caption = picture.caption
        images.append(
            Image(picture.url, picture.alt, caption, picture.credit, i == cover_at, position)
        )
    return images


# -- The walk ---------------------------------------------------------------------------------


def walk(tree: lxml.html.HtmlElement) -> PageText:
    """One pass in document order: the text without whitespace, pictures and ``<h1>``s."""
    page = PageText()
    parts: list[str] = []
    length = 0
    skipping: lxml.html.HtmlElement | None = None
    for event, el in lxml.etree.iterwalk(tree, events=("start", "end")):
        tag = el.tag if isinstance(el.tag, str) else ""
        if event == "start":
            if skipping is not None:
                continue
            if tag in _SKIP_TAGS:
                skipping = el
                continue
            if tag in _IMAGE_TAGS or _is_image_object(el):
                page.pictures.append((el, length))
            elif tag == "h1":
                page.headings.append((_squash(el.text_content()), length))
            if el.text and tag and tag not in _NO_TEXT_TAGS:
                piece = _squash(el.text)
                parts.append(piece)
                length += len(piece)
        else:
            if skipping is el:
                skipping = None
            elif skipping is not None:
                continue
            if el.tail:
                piece = _squash(el.tail)
                parts.append(piece)
                length += len(piece)
    page.text = "".join(parts)
    return page


def _is_image_object(el: lxml.html.HtmlElement) -> bool:
    """A microdata ``ImageObject`` that names its picture in ``<meta>`` only (no ``<img>``)."""
    if "ImageObject" not in (el.get("itemtype") or ""):
        return False
    return not any(True for _ in el.iter(*_IMAGE_TAGS))


def _squash(text: str) -> str:
    return _NON_SPACE.sub("", text)


def block_offsets(text: str, blocks: Sequence[Block]) -> list[int | None]:
    """Where each block's text starts in the page's text (None: not found), in order."""
    offsets: list[int | None] = []
    cursor = 0
    for block in blocks:
        key = _squash(block.text)[:BLOCK_KEY_CHARS]
        at = text.find(key, cursor) if key else -1
        if at < 0 and key:
            at = text.find(key)
        offsets.append(at if at >= 0 else None)
        if at >= cursor:
            cursor = at + len(key)
    return offsets


def _title_offset(page: PageText, title: str | None, first: int) -> int:
    """Where the article's headline stands: the last ``<h1>`` before the first body block
    that the title opens (or that opens it); the first body block when none."""
    key = _squash(title or "")[:BLOCK_KEY_CHARS]
    best = first
    for text, offset in page.headings:
        if offset < first and key and (text.startswith(key) or key.startswith(text[:20])):
            best = offset
    return best


# -- Which pictures -----------------------------------------------------------------------------


def _linked_images(
    tree: lxml.html.HtmlElement, url: str | None
) -> set[lxml.html.HtmlElement]:
    """Pictures inside a link to another page of the site (teasers); not links to the picture
    itself, nor to other sites (a product's shop, a photo agency)."""
    out: set[lxml.html.HtmlElement] = set()
    here = urlsplit(url or "")
    for link in tree.iter("a"):
        href = (link.get("href") or "").strip()
        if not href or href.startswith("#") or _looks_like_picture(href):
            continue
        target = urlsplit(urljoin(url or "", href))
        if target.netloc and here.netloc and _site(target.netloc) != _site(here.netloc):
            continue
        if target.path == here.path:
            continue
        out.update(el for el in link.iter(*_IMAGE_TAGS))
    return out


def _site(netloc: str) -> str:
    """The last two labels of a host name (``www.example.com`` -> ``example.com``)."""
    return ".".join(netloc.lower().rsplit(":", 1)[0].split(".")[-2:])


def _looks_like_picture(href: str) -> bool:
    path = urlsplit(href).path.lower()
    return path.endswith((".jpg", ".jpeg", ".png", ".webp", ".gif", ".avif"))


def _is_furniture(
    element: lxml.html.HtmlElement, linked: set[lxml.html.HtmlElement], url: str | None
) -> bool:
    if element in linked or _tiny(element):
        return True
    ancestors = list(element.iterancestors())
    inside = next((i for i, el in enumerate(ancestors) if el.tag in ("article", "main")), None)
    for el in ancestors[:inside]:
        if el.tag in _FURNITURE_TAGS and not (inside is not None and el.tag == "header"):
            return True
        words = f"{el.get('class', '')} {el.get('id', '')}"
        if _FURNITURE_WORDS.search(words) and not _CAPTION_WORDS.search(words):
            return True
    words = f"{element.get('class', '')} {element.get('id', '')}"
    return bool(_FURNITURE_WORDS.search(words))


def _tiny(element: lxml.html.HtmlElement) -> bool:
    """An icon, a pixel or a decorative picture (``role="presentation"``, ``aria-hidden``)."""
    if element.get("role") == "presentation" or element.get("aria-hidden") == "true":
        return True
    for side in ("width", "height"):
        value = (element.get(side) or "").strip().removesuffix("px")
        if value.isdigit() and int(value) < MIN_SIDE:
            return True
    return False


def best_url(element: lxml.html.HtmlElement, base: str | None) -> str | None:
    """The absolute URL of the largest rendition a picture offers (``srcset`` descriptors,
    its ``<picture>``'s ``<source>``s, lazy-loading attributes), None when it offers none."""
    candidates: list[tuple[float, str]] = []
    if element.tag not in _IMAGE_TAGS:
        for meta in element.iter("meta", "link"):
            if (meta.get("itemprop") or "").lower() in ("url", "contenturl"):
                candidates.append((1.0, meta.get("content") or meta.get("href") or ""))
    elements = [element]
    parent = element.getparent()
    if parent is not None and parent.tag == "picture":
        elements += [s for s in parent.iterchildren("source")]
    for el in elements:
        for name in _SRCSET_ATTRIBUTES:
            candidates += _srcset(el.get(name) or "")
    for name in _URL_ATTRIBUTES:
        value = (element.get(name) or "").strip()
        if value and not _PLACEHOLDER.search(value):
            candidates.append((_size_hint(value), value))
    candidates = [
        (size, value)
        for size, value in candidates
        if value and not _PLACEHOLDER.search(value) and not _NOT_PICTURE.search(value)
    ]
    if not candidates:
        return None
    value = max(candidates, key=lambda c: c[0])[1]
    absolute = urljoin(base or "", value.strip())
    return absolute if absolute.startswith(("http://", "https://", "//")) else None


def _srcset(value: str) -> list[tuple[float, str]]:
    out = []
    for entry in re.split(r",\s+(?=\S)", value.strip()):
        bits = entry.split()
        if not bits:
            continue
        size = 0.0
        if len(bits) > 1:
            descriptor = bits[-1].lower()
            number = descriptor[:-1]
            try:
                size = float(number) * (1000.0 if descriptor.endswith("x") else 1.0)
            except ValueError:
                size = 0.0
        out.append((size or _size_hint(bits[0]), bits[0]))
    return out


def _size_hint(url: str) -> float:
    """A rendition's width as its URL writes it ("..._1200.jpg", "w=800"), else 1."""
    sizes = [int(m.group(1)) for m in _SIZE_IN_URL.finditer(urlsplit(url).path + urlsplit(url).query)]
    plausible = [s for s in sizes if 100 <= s <= 4000]
    return float(max(plausible)) if plausible else 1.0


def picture_key(url: str) -> str:
    """What renditions of one picture share: the URL without query and fragment."""
    parts = urlsplit(url)
    return f"{parts.netloc.lower()}{parts.path}"


def same_picture(url: str, other: str) -> bool:
    """Whether two URLs are renditions of one picture: the same :func:`picture_key`, the same
    file name once sizes, formats and rendition words are set aside, or the same long
    identifier with digits in their paths (a CMS's image id or hash)."""
    if picture_key(url) == picture_key(other):
        return True
    (folder, stem), (other_folder, other_stem) = _stem(url), _stem(other)
    if len(stem) >= 6 or len(other_stem) >= 6:
        if stem == other_stem:
            return True
    elif folder == other_folder:
        return True
    return bool(_identifiers(url) & _identifiers(other))


def _stem(url: str) -> tuple[str, str]:
    """A URL's folder and its file name without sizes, formats and rendition words."""
    path = urlsplit(url).path.rstrip("/")
    folder, _, name = path.rpartition("/")
    return folder, _RENDITION.sub("", name.rsplit(".", 1)[0]).strip("-_.,=").lower()


def _identifiers(url: str) -> set[str]:
    return {
        t
        for t in _IDENTIFIER.findall(urlsplit(url).path)
        if sum(c.isdigit() for c in t) >= IDENTIFIER_DIGITS
    }


def _base_url(tree: lxml.html.HtmlElement, url: str | None) -> str | None:
    for href in tree.xpath("//base/@href")[:1]:
        return urljoin(url or "", str(href).strip())
    return url


# -- Captions and credits -----------------------------------------------------------------------


def caption_of(element: lxml.html.HtmlElement) -> tuple[str | None, str | None]:
    """The caption and credit the markup gives a picture: its figure's ``<figcaption>`` or an
    element named for captions or credits beside it (within the few elements that hold this
    picture and no other), else its ``data-caption`` or ``title`` attribute."""
    container = _own_container(element)
    caption_el = next(iter(container.iter("figcaption")), None)
    credit_els = [el for el in container.iter() if _named(el, _CREDIT_WORDS) and el is not element]
    if caption_el is None:
        caption_el = next(
            (el for el in container.iter() if _named(el, _CAPTION_WORDS) and el is not element),
            None,
        )
    credit = _first_text(credit_els)
    caption = _text_without(caption_el, credit_els) if caption_el is not None else None
    if caption is None:
        caption = _clean(element.get("data-caption"))
    if caption and not credit:
        caption, credit = split_credit(caption)
    elif caption and credit:
        caption = split_credit(caption)[0] or caption
    if not credit and element.get("title"):
        credit = split_credit(" ".join(element.get("title", "").split()))[1]
    return _clip(caption, MAX_CAPTION_CHARS), _clip(_credit_text(credit), MAX_CREDIT_CHARS)


def _own_container(element: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """The largest of the picture's few ancestors that shows no other picture (its renditions
    and a lazy-loading placeholder do not count), up to its ``<figure>``."""
    container = element
    own = best_url(element, None)
    for _ in range(4):
        parent = container.getparent()
        if parent is None or parent.tag in ("body", "article", "main"):
            break
        others = {
            picture_key(u)
            for el in parent.iter(*_IMAGE_TAGS)
            if el is not element and (u := best_url(el, None)) and not (own and same_picture(u, own))
        }
        if others:
            break
        container = parent
        if container.tag == "figure":
            break
    return container


def _named(el: Any, pattern: re.Pattern[str]) -> bool:
    if not isinstance(el.tag, str) or el.tag in _IMAGE_TAGS:
        return False
    return bool(pattern.search(f"{el.get('class', '')} {el.get('id', '')} {el.get('itemprop', '')}"))


def _first_text(elements: list[Any]) -> str | None:
    for el in elements:
        text = _clean(el.text_content())
        if text:
            return text
    return None


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
    return _clean(" ".join(parts))


def split_credit(caption: str) -> tuple[str | None, str | None]:
    """A caption and the credit written at its end ("Trams in Basel. Foto: Anna Maier")."""
    match = _CREDIT_IN_TEXT.search(caption)
    if not match:
        return caption, None
    rest = caption[: match.start()].strip(" |/-\u2013\u2014")
    return (rest or None), match.group(1)


def _credit_text(credit: str | None) -> str | None:
    """A credit without its lead word ("Foto: dpa" -> "dpa")."""
    if not credit:
        return None
    return _clean(_CREDIT_LEAD.sub("", credit.strip(" ()[]"))) or None


def _clean(text: str | None) -> str | None:
    if not text:
        return None
    text = " ".join(text.split())
    return text or None


def _clip(text: str | None, limit: int) -> str | None:
    return text[:limit] if text else None


def _json_ld_captions(
    tree: lxml.html.HtmlElement, base: str | None, pictures: list[Found]
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
            picture.caption = _clean(caption)
        if not picture.credit:
            picture.credit = _credit_text(_object_credit(obj))


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


def _convention_captions(
    text: str, pictures: list[Found], captions: Sequence[Block], starts: list[int | None]
) -> None:
    """A caption line the text convention took out of the body, for the picture it follows
    (within ``CAPTION_REACH`` characters) that has no caption of its own."""
    if not captions:
        return
    for block, at in zip(captions, block_offsets(text, captions), strict=True):
        if at is None:
            continue
        before = [p for p in pictures if p.offset <= at <= p.offset + CAPTION_REACH]
        if before and not before[-1].caption:
            before[-1].caption, credit = split_credit(" ".join(block.text.split()))
            before[-1].credit = before[-1].credit or _credit_text(credit)
