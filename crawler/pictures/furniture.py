"""Which pictures of a page are not the article's: page furniture (header, navigation, footer,
aside, elements named for logos, avatars, ads, sharing, related stories), teasers (a picture
linking to another page of the site), icons and pixels. Each test reads the picture's own
attributes and its ancestors only (bounded by the tree's depth). Scrapy-free.

A picture linking to a viewer of itself is no teaser: a link to the picture's file, one into
the article's own path ("/article/x/photo/y/"), one to a photo or attachment page
("/photo/AS2025.html", "/attachment/216479/") or one named for zooming ("lightbox", "zoom").
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import lxml.html
from scrapy_maintext.pictures.captions import CAPTION_WORDS

#: A picture whose width or height attribute is below this is an icon or a pixel.
MIN_SIDE = 100

#: Tags whose pictures are furniture. (``<button>`` is not one: a picture that opens a
#: lightbox sits in a button on some sites.)
_FURNITURE_TAGS = frozenset({"header", "nav", "footer", "aside", "form"})
#: Class and id words of furniture. Not "thumb", "thumbnail" or "widget": CMSs name the
#: article's own pictures so ("wp-post-image attachment-post-thumbnail", "widget-image",
#: "thumb thumb16_9"); on the tuning folds those words and ``<button>`` hid 27 of the
#: article's pictures and 2 others.
_FURNITURE_WORDS = re.compile(
    r"(?:^|[-_ ])(?:logo|avatar|icon|icons|ad|ads|advert|advertisement|banner|sponsor|"
    r"sponsored|teaser|teasers|related|recommend|recommended|recommendations|promo|share|"
    r"social|newsletter|author|authors|byline|profile|sidebar|outbrain|taboola|"
    r"nav|navigation|menu|footer|comments?|emoji|badge|more|search|close)"
    r"(?:$|[-_ ])",
    re.I,
)
#: A link's path segment that names a viewer of one picture, not another story.
_VIEWER_SEGMENT = re.compile(
    r"^(?:photos?|fotos?|bild|bilder|images?|pictures?|attachment|gallery|galerie|"
    r"bildergalerie|zoom|media)$",
    re.I,
)
#: Class words of a page's state, not of an element's role.
_STATE_WORD = re.compile(r"(?:^|(?<=\s))(?:(?:has|with|no)-\S+|\S+-(?:enabled|disabled))(?=\s|$)")
_PICTURE_WORDS = re.compile(r"(?:^|[-_ ])(?:image|photo|picture|figure|media)(?:$|[-_ ])", re.I)
#: File names of furniture ("wsh_logo.png", "appIcon.png", "website-banner-hi.jpg").
_FURNITURE_FILE = re.compile(r"logo|icon|sprite|avatar|badge|banner|blocker", re.I)
_VIEWER_LINK = re.compile(r"zoom|lightbox|fancybox|enlarge|fullscreen|pswp", re.I)
_PICTURE_FILE = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".avif")


def is_furniture(element: lxml.html.HtmlElement, url: str | None) -> bool:
    """Whether a picture is no picture of the article (see the module's doc)."""
    if is_tiny(element) or in_teaser(element, url):
        return True
    ancestors = list(element.iterancestors())
    inside = next((i for i, el in enumerate(ancestors) if el.tag in ("article", "main")), None)
    linked = False
    for el in ancestors[:inside]:
        if el.tag in ("body", "html"):
            # Their names say what kind of page it is ("single-post", "has-sidebar").
            break
        if _furniture_tag(el, inside is not None):
            return True
        words = _names(el)
        if _FURNITURE_WORDS.search(words) and not _own_figure(el, words, linked):
            return True
        linked = linked or el.tag == "a"
    return bool(_FURNITURE_WORDS.search(_names(element)))


def _own_figure(el: lxml.html.HtmlElement, words: str, linked: bool) -> bool:
    """Whether a furniture word names a picture's own container: a caption's, or a
    ``<figure>`` named for its picture ("articleImageFigure teaser-image") whose picture
    is no link (a teaser's figure holds a link to its story)."""
    if CAPTION_WORDS.search(words):
        return True
    return el.tag == "figure" and not linked and bool(_PICTURE_WORDS.search(words))


def _names(el: lxml.html.HtmlElement) -> str:
    """An element's class and id without the words that describe the page's state rather
    than the element ("comments-enabled", "cs-sidebar-enabled", "has-sidebar")."""
    names = f"{el.get('class', '')} {el.get('id', '')}"
    return _STATE_WORD.sub(" ", names) if "-" in names else names


def _furniture_tag(el: lxml.html.HtmlElement, in_article: bool) -> bool:
    """A furniture element; not an article's own header, nor a ``<form>`` that wraps the
    whole page (ASP.NET's ``<body><form id="aspnetForm">``)."""
    if el.tag not in _FURNITURE_TAGS:
        return False
    if el.tag == "header":
        return not in_article
    if el.tag == "aside":
        # An article's aside named for its picture ("left image wide") is its figure.
        return not (in_article and _PICTURE_WORDS.search(el.get("class", "")))
    if el.tag == "form":
        parent = el.getparent()
        return parent is None or parent.tag != "body"
    return True


def in_teaser(element: lxml.html.HtmlElement, url: str | None) -> bool:
    """Whether a picture is inside a link to another page of the site (a teaser); not a link
    to a viewer of the picture (the module's doc), nor to another site (a shop, an agency)."""
    link = next(element.iterancestors("a"), None)
    if link is None:
        return False
    href = (link.get("href") or "").strip()
    if not href or href.startswith("#") or _looks_like_picture(href):
        return False
    if _VIEWER_LINK.search(f"{link.get('class', '')} {link.get('data-type', '')}"):
        return False
    here = urlsplit(url or "")
    target = urlsplit(urljoin(url or "", href))
    if target.netloc and here.netloc and site_key(target.netloc) != site_key(here.netloc):
        return False
    return not (target.path == here.path or _views_a_picture(target.path, here.path))


def _views_a_picture(path: str, page_path: str) -> bool:
    """A path below the article's own ("/article/x/" -> "/article/x/photo/y/"), or one with
    a segment naming a picture viewer."""
    own = page_path.rstrip("/")
    if own and path.startswith(own + "/"):
        return True
    return any(_VIEWER_SEGMENT.match(segment) for segment in path.split("/"))


def site_key(netloc: str) -> str:
    """The last two labels of a host name (``www.example.com`` -> ``example.com``)."""
    return ".".join(netloc.lower().rsplit(":", 1)[0].split(".")[-2:])


def _looks_like_picture(href: str) -> bool:
    return urlsplit(href).path.lower().endswith(_PICTURE_FILE)


def is_tiny(element: lxml.html.HtmlElement) -> bool:
    """An icon, a pixel or a decorative picture (``role="presentation"``, ``aria-hidden``)."""
    if element.get("role") == "presentation" or element.get("aria-hidden") == "true":
        return True
    # A responsive picture sized by its style says width="0" (Next.js's ``fill``).
    sized_by_style = element.get("sizes") or element.get("srcset")
    for side in ("width", "height"):
        value = (element.get(side) or "").strip().removesuffix("px")
        if value.isdigit() and int(value) < MIN_SIDE and not (value == "0" and sized_by_style):
            return True
    return False


def is_furniture_file(url: str) -> bool:
    """Whether a picture's file name names furniture (a logo, an icon, a banner)."""
    return bool(_FURNITURE_FILE.search(urlsplit(url).path.rsplit("/", 1)[-1]))
