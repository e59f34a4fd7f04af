"""Which URL of a picture to keep, and whether two URLs are renditions of one picture.

A picture offers renditions in ``srcset`` (with width or density descriptors), in its
``<picture>``'s ``<source>``s and in lazy-loading attributes (``data-src``, ...); the largest
is kept. Renditions of one picture differ in their query, in the sizes and formats written in
the file name, or share a CMS's identifier. Scrapy-free.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import lxml.html

#: The elements that show a picture.
IMAGE_TAGS = frozenset({"img", "amp-img"})
#: Digits a long run of letters and digits in a URL needs to be a picture's identifier (a
#: site-wide token, "NvBQzQNjv4Bqq...", has a few).
IDENTIFIER_DIGITS = 5
#: Longer attribute values are no picture's URL.
MAX_URL_CHARS = 2_000
#: A file name this long, once sizes and formats are set aside, names one picture.
MIN_STEM = 6
#: ``<source>``s of one ``<picture>`` looked through (``_picture_of``).
MAX_SOURCES = 12
_URL_ATTRIBUTES = (
    "data-src", "data-lazy-src", "data-original", "data-url", "data-hi-res-src",
    "data-flickity-lazyload", "data-lazyload", "src",
)  # fmt: skip
_SRCSET_ATTRIBUTES = (
    "srcset", "data-srcset", "data-lazy-srcset", "data-flickity-lazyload-srcset", "imagesrcset",
)  # fmt: skip
_PLACEHOLDER = re.compile(
    r"^data:|blank\.|spacer\.|placeholder|pixel\.|1x1|transparent|lazy\.", re.I
)
_NOT_PICTURE = re.compile(r"\.(?:svg|ico)(?:$|\?)", re.I)
_SIZE_IN_URL = re.compile(r"(?<![a-z\d])(?:w|width|s)?[=_/-]?(\d{2,4})(?:x\d{2,4})?(?![\d])", re.I)
#: Sizes, formats and rendition words that differ between renditions of one picture.
_RENDITION = re.compile(
    r"(?:\d{2,4}x\d{0,4}|[wh]_?\d{2,4}|\d{2,4}[wh]|webp|jpe?g|png|avif|wide|free|alternates|"
    r"small|medium|large|thumb|crop|resize|scaled|c_limit|master)",
    re.I,
)
#: A long run of letters and digits in a path: an image id or a hash.
_IDENTIFIER = re.compile(r"[A-Za-z0-9]{12,}")


def best_url(element: lxml.html.HtmlElement, base: str | None) -> str | None:
    """The absolute URL of the largest rendition a picture offers (``srcset`` descriptors,
    its ``<picture>``'s ``<source>``s, lazy-loading attributes), None when it offers none."""
    candidates: list[tuple[float, str]] = []
    if element.tag not in IMAGE_TAGS:
        for meta in element.iter("meta", "link"):
            if (meta.get("itemprop") or "").lower() in ("url", "contenturl"):
                candidates.append((1.0, meta.get("content") or meta.get("href") or ""))
    elements = [element]
    picture = _picture_of(element)
    if picture is not None:
        elements += [s for s in picture.iter("source")]
    for el in elements:
        for name in _SRCSET_ATTRIBUTES:
            candidates += _srcset(el.get(name) or "")
    for name in _URL_ATTRIBUTES:
        value = (element.get(name) or "").strip()
        if value and not value.startswith("data:"):
            candidates.append((_size_hint(value), value))
            # A lazy-loading attribute holds the picture; ``src`` (last) its placeholder.
            break
    # Largest first; only the one kept is tested (placeholders are rare, candidates many).
    candidates.sort(key=lambda c: c[0], reverse=True)
    value = next((value for _, value in candidates if _usable(value)), None)
    if value is None:
        return None
    absolute = urljoin(base or "", value.strip())
    return absolute if absolute.startswith(("http://", "https://", "//")) else None


def _usable(value: str) -> bool:
    """A URL worth keeping: not inline data, a placeholder, an SVG or an icon. Inline data is
    never searched (a base64 picture is megabytes)."""
    if not value or len(value) > MAX_URL_CHARS or value.startswith("data:"):
        return False
    return not (_PLACEHOLDER.search(value) or _NOT_PICTURE.search(value))


def _picture_of(element: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """The ``<picture>`` a picture belongs to. libxml2's HTML parser does not know
    ``<source>`` as empty: the ``<img>`` after sources ends up inside the last of them."""
    parent = element.getparent()
    for _ in range(MAX_SOURCES):
        if parent is None or parent.tag not in ("picture", "source"):
            return None
        if parent.tag == "picture":
            return parent
        parent = parent.getparent()
    return None


def _srcset(value: str) -> list[tuple[float, str]]:
    out = []
    for entry in re.split(r",\s+(?=\S)", value.strip()):
        bits = entry.split()
        if not bits or bits[0].startswith("data:") or len(bits[0]) > MAX_URL_CHARS:
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
    sizes = [
        int(m.group(1)) for m in _SIZE_IN_URL.finditer(urlsplit(url).path + urlsplit(url).query)
    ]
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
    # A name that is all rendition ("wide__1000x562.jpg"): the folder names the picture.
    if stem == other_stem and (len(stem) >= MIN_STEM or folder == other_folder):
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
