"""The page's type (issue 39): article, service, forum, listing, documentation, collection or
product, WCXB's seven, with its probability.

A multinomial logistic regression over cheap structural features of the parsed page
(:func:`page_features`: the JSON-LD and Open Graph types it declares, words of its URL's
path, counts of elements, long paragraphs, links, prices, post markup and repeated sibling
structures), its weights in ``page_type.json`` beside this module (``models.page_type``
trains them; numpy inference, no model file to load at run time beyond that JSON); a page
that declares one product in its structured data is a product page whatever the model says
(``page_declared.declares_a_product``, issue 45). Every engine's ``Document`` gets the type;
the text convention reads it (``convention.judge``: the article rules apply to article-like
pages only). Scrapy-free.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import lxml.html
import numpy as np
from lxml import etree
from scrapy_maintext.extraction.page_declared import (
    LD_GROUPS,
    PRODUCTS,
    add_ld_types,
    declares_a_product,
    itemtype_name,
    og_type,
    read_declared,
    write_declared,
)

PAGE_TYPES = ("article", "service", "forum", "listing", "documentation", "collection", "product")
#: Elements the structure features read at most (the first, in document order, and the
#: first children of each): above every page of the labelled data (training and
#: evaluation); on a huge page the type would otherwise cost a share of the extraction it
#: does not on real pages (``benchmarks/huge_pages.py``).
MAX_ELEMENTS = 20_000
#: The types on which the article rules of the text convention apply (headline aside, which
#: every page's title repeats): bylines, datelines, captions and teasers are an article's
#: furniture; on a listing, a collection or a forum index, the items' titles, dates and
#: authors are the text.
ARTICLE_LIKE = frozenset({"article"})
WEIGHTS = Path(__file__).with_name("page_type.json")
#: Types whose pages the ``auto`` engine hands to trafilatura without asking the neural model
#: (its shop pages keep too much: models/CHANGELOG.md, chosen inside the folds).
TRAFILATURA_TYPES = frozenset({"product"})
#: A page predicted of a non-article type less sure than this keeps the article rules
#: (``article_rules``; chosen inside the folds, models/CHANGELOG.md).
ARTICLE_THRESHOLD = 0.6

_URL_GROUPS = {
    "shop": ("products", "product", "p", "shop", "store", "item", "dp", "buy"),
    "collection": ("collections", "collection", "category", "categories", "c", "catalog",
                   "catalogue", "tag", "tags", "topics", "brands", "all", "search"),
    "doc": ("docs", "doc", "documentation", "api", "guide", "guides", "manual", "reference",
            "wiki", "help", "kb", "tutorial", "tutorials", "learn", "handbook", "usersguide"),
    "forum": ("forum", "forums", "thread", "threads", "topic", "t", "questions", "community",
              "discussion", "discussions", "showthread", "viewtopic", "board", "r", "comments"),
    "news": ("news", "blog", "article", "articles", "post", "posts", "stories", "story"),
    "service": ("services", "service", "pricing", "contact", "about", "plans", "courses",
                "programs", "solutions", "features", "support", "apply", "admissions"),
}  # fmt: skip
_PRICE = re.compile(r"(?:[$€£¥₹]\s?\d[\d.,]*|\d[\d.,]*\s?(?:€|eur|usd|\$))", re.I)
_CART = re.compile(
    r"add to (?:cart|bag|basket)|in den warenkorb|ajouter au panier|buy now|añadir al carrito",
    re.I,
)
#: Class or id words of forum posts and of shop carts.
_POST_MARK = re.compile(
    r"(?<![a-z])(?:post|posts|reply|replies|comment|thread|topic|message|answer|votes?|avatar"
    r"|username|postbody)(?![a-z])"
)
_CART_MARK = re.compile(r"cart|basket|add-to|addto|warenkorb|panier")
#: Elements whose text and tag are not counted (their declared types are read).
SKIPPED = frozenset({"script", "style", "noscript", "template", "svg"})
#: Children that are never a list's items (the options of a select, a head's links).
_NOT_ITEMS = frozenset({"option", "script", "meta", "link", "br", "style"})
#: Prices and cart buttons are short texts; longer ones are not searched.
PRICE_TEXT_CHARS = 40
_COUNTED = ("article", "time", "h1", "h2", "h3", "p", "li", "a", "pre", "code", "table",
            "form", "input", "button", "img", "nav", "aside", "section", "dl")  # fmt: skip
LONG_WORDS = 25
#: Siblings sharing a tag and a class from this many on are a repeated structure (items).
REPEATED = 3


def feature_names() -> list[str]:
    names = [f"ld:{g}" for g in LD_GROUPS] + ["ld:any"]
    names += ["og:article", "og:product", "og:website", "og:other"]
    names += [f"url:{g}" for g in _URL_GROUPS]
    names += ["url:date", "url:slug", "url:depth", "url:root", "url:query", "url:id"]
    names += [f"n:{t}" for t in _COUNTED]
    names += ["long", "words", "link_share", "prices", "cart", "posts", "itemprop_price"]
    names += ["repeat_max", "repeat_items", "repeat_groups", "long_share", "head_per_long"]
    return names


_FEATURES = tuple(feature_names())


@dataclass(frozen=True)
class PageInputs:
    """What the type is predicted from: the features (``feature_names``) and how many
    products the page declares (``declares_a_product``; none on a page that declares an
    article)."""

    features: np.ndarray
    products: int


def page_features(
    tree: lxml.html.HtmlElement, url: str | None, structure: Structure | None = None
) -> np.ndarray:
    """The features (``feature_names``) of a parsed page and its URL; ``structure``: the
    structure counts when a walk of the page already gathered them (``Structure``)."""
    return page_inputs(tree, url, structure).features


def page_inputs(
    tree: lxml.html.HtmlElement, url: str | None, structure: Structure | None = None
) -> PageInputs:
    """The features and the declared products of a parsed page (see ``page_features``)."""
    values: dict[str, float] = {}
    if structure is not None and structure.whole:
        write_declared(structure.declared, structure.og, values)
        products = structure.products
    else:
        products = read_declared(tree, values)
    _url(url, values)
    if structure is None:
        structure = Structure()
        add = structure.add
        for el in islice(tree.iter(etree.Element), MAX_ELEMENTS):
            add(el, el.tag, el.text, el.attrib)
    structure.write(values)
    features = np.array([values.get(n, 0.0) for n in _FEATURES], dtype=np.float64)
    # An article that declares a product declares the one it reviews: the rule leaves it.
    return PageInputs(features, 0 if values["ld:article"] else products)


def _url(url: str | None, values: dict[str, float]) -> None:
    if not url:
        return
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    segments = [s for s in parts.path.lower().split("/") if s]
    words = set(segments)
    for group, names in _URL_GROUPS.items():
        values[f"url:{group}"] = float(bool(words.intersection(names)))
    values["url:date"] = float(bool(re.search(r"/(?:19|20)\d\d/\d\d?/", parts.path)))
    last = segments[-1] if segments else ""
    values["url:slug"] = float(last.count("-") >= 3 or last.count("_") >= 3)
    values["url:depth"] = math.log1p(len(segments))
    values["url:root"] = float(not segments)
    values["url:query"] = float(bool(parts.query))
    values["url:id"] = float(bool(re.search(r"\d{4,}", last)))


#: ``_marked``'s answers per class (or id) value: a site repeats its values on every page
#: (bounded: shared between pages).
_marks: dict[str, tuple[bool, bool]] = {}
_MARKS_LIMIT = 20_000


def _marked(marks: str) -> tuple[bool, bool]:
    """Whether a class (or id) value names a forum post, and a shop cart."""
    found = _marks.get(marks)
    if found is None:
        lowered = marks.lower()
        found = _POST_MARK.search(lowered) is not None, _CART_MARK.search(lowered) is not None
        if len(_marks) < _MARKS_LIMIT:
            _marks[marks] = found
    return found


class Structure:
    """The structure features' counts, fed the page's elements one by one in document order
    (``add``; the first ``MAX_ELEMENTS``): by the page type's own loop, or by the
    segmenter's walk (``extraction.page_walk``), which then spares the page this loop.

    ``add`` runs once per element of the page: it gathers (tags, class values, short texts,
    each appended as it comes) and ``write`` counts them and searches each distinct value
    once (a page repeats its few class values and short texts on most of its elements)."""

    def __init__(self) -> None:
        #: The counted elements' tags, in document order.
        self.tags: list[Any] = []
        self.paragraphs: list[int] = []
        #: Elements fed so far (those past ``MAX_ELEMENTS`` are not counted).
        self.seen = 0
        self.link_chars = self.text_chars = self.price_props = 0
        #: The counted elements' class (or, without one, id) values, and their texts shorter
        #: than ``PRICE_TEXT_CHARS`` (not a link's): searched in ``write``. Buttons' short
        #: texts that name a cart (rare) are searched as they come.
        self.marks: list[str] = []
        self.short_texts: list[str] = []
        self.cart_buttons = 0
        self.repeat_max = self.repeat_items = self.repeat_groups = 0
        #: The types the page declares (JSON-LD, microdata) and its first ``og:type`` (None:
        #: none yet), read on the way: used only when the walk saw the ``whole`` page
        #: (``page_walk``), as ``read_declared`` reads every element.
        self.declared: set[str] = set()
        self.products = 0
        self.og: str | None = None
        self.whole = False

    @property
    def full(self) -> bool:
        return self.seen >= MAX_ELEMENTS

    def add(self, el: Any, tag: Any, text: str | None, attrib: Any) -> None:
        """Count one element (its own text, attributes and children): ``tag``, ``text`` and
        ``attrib`` are its own as the walk read them (``text`` may be None for ``SKIPPED``
        tags)."""
        if self.seen >= MAX_ELEMENTS:
            return
        self.seen += 1
        if attrib:
            itemtype = attrib.get("itemtype")
            if itemtype is not None:
                name = itemtype_name(itemtype)
                self.declared.add(name)
                self.products += name in PRODUCTS
            if tag in SKIPPED:
                if tag == "script":
                    self.products += add_ld_types(el, self.declared)
                return
            if tag == "meta" and self.og is None:
                self.og = og_type(el)
            marks = attrib.get("class") or attrib.get("id")
            if marks:
                self.marks.append(marks)
            if attrib.get("itemprop") == "price":
                self.price_props += 1
        elif tag in SKIPPED:
            return
        self.tags.append(tag)
        if text:
            n = len(text)
            self.text_chars += n
            if tag == "a":
                self.link_chars += n
            elif n < PRICE_TEXT_CHARS:
                self.short_texts.append(text)
                if tag == "button":
                    self.cart_buttons += _CART.search(text) is not None
        if tag == "p":
            self.paragraphs.append(len(el.text_content().split()))
        if len(el) >= REPEATED:
            self._repeats(el)

    def _repeats(self, el: Any) -> None:
        # Counted in a plain dict, the tags that are no items left out afterwards: a
        # ``Counter`` over a filtering generator costs twice as much on every list a page has.
        sizes: dict[Any, int] = {}
        for child in islice(el, MAX_ELEMENTS) if len(el) > MAX_ELEMENTS else el:
            tag = child.tag
            sizes[tag] = sizes.get(tag, 0) + 1
        for tag, size in sizes.items():
            if size >= REPEATED and tag not in _NOT_ITEMS:
                self.repeat_max = max(self.repeat_max, size)
                self.repeat_items += size
                self.repeat_groups += 1

    def write(self, values: dict[str, float]) -> None:
        """The structure features into ``values``."""
        counts, paragraphs = Counter(self.tags), self.paragraphs
        # An element named ``itemprop_price`` counts with the price properties (one key).
        price_props = self.price_props + counts["itemprop_price"]
        posts = carts = 0
        for marks, n in Counter(self.marks).items():
            post, cart = _marked(marks)
            posts += n * post
            carts += n * cart
        prices = sum(
            n for text, n in Counter(self.short_texts).items() if _PRICE.search(text) is not None
        )
        long = sum(w >= LONG_WORDS for w in paragraphs)
        for tag in _COUNTED:
            values[f"n:{tag}"] = math.log1p(counts[tag])
        values["long"] = math.log1p(long)
        values["words"] = math.log1p(sum(paragraphs))
        values["link_share"] = self.link_chars / max(self.text_chars, 1)
        values["prices"] = math.log1p(prices)
        values["cart"] = math.log1p(carts + self.cart_buttons)
        values["posts"] = math.log1p(posts)
        values["itemprop_price"] = math.log1p(price_props)
        values["repeat_max"] = math.log1p(self.repeat_max)
        values["repeat_items"] = math.log1p(self.repeat_items)
        values["repeat_groups"] = math.log1p(self.repeat_groups)
        values["long_share"] = long / max(counts["p"], 1)
        heads = counts["h2"] + counts["h3"]
        values["head_per_long"] = math.log1p(heads / max(long, 1))


@dataclass(frozen=True)
class PageType:
    """The predicted type and its probability."""

    name: str
    probability: float

    @property
    def article_like(self) -> bool:
        return self.name in ARTICLE_LIKE


@dataclass(frozen=True)
class TypeModel:
    """A multinomial logistic regression over standardized features."""

    types: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: np.ndarray

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        z = ((features - self.mean) / self.scale) @ self.weights + self.bias
        z = np.exp(z - z.max(axis=-1, keepdims=True))
        return np.asarray(z / z.sum(axis=-1, keepdims=True))

    def predict(self, features: np.ndarray, products: int = 0) -> PageType:
        """The most probable type, or ``product`` on a page that declares a product
        (``products``: its declarations, ``declares_a_product``), with its probability."""
        probs = self.probabilities(features)
        best = int(np.argmax(probs))
        if declares_a_product(products):
            best = self.types.index("product")
        return PageType(self.types[best], round(float(probs[best]), 3))

    def to_json(self, about: dict[str, Any]) -> dict[str, Any]:
        return {
            **about,
            "types": list(self.types),
            "features": feature_names(),
            "mean": self.mean.round(6).tolist(),
            "scale": self.scale.round(6).tolist(),
            "weights": self.weights.round(6).tolist(),
            "bias": self.bias.round(6).tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TypeModel:
        if data["features"] != feature_names():
            raise ValueError("page_type.json was trained on other features")
        return cls(
            tuple(data["types"]),
            np.array(data["mean"]),
            np.array(data["scale"]),
            np.array(data["weights"]),
            np.array(data["bias"]),
        )


@functools.cache
def shipped_model() -> TypeModel:
    return TypeModel.from_json(json.loads(WEIGHTS.read_text("utf-8")))


def predict(
    tree: lxml.html.HtmlElement, url: str | None, structure: Structure | None = None
) -> PageType:
    """The page type of a parsed page (``structure``: see ``page_features``)."""
    inputs = page_inputs(tree, url, structure)
    return shipped_model().predict(inputs.features, inputs.products)


def article_rules(page_type: PageType, threshold: float) -> bool:
    """Whether the text convention's article rules apply to a page of ``page_type``: on
    article-like pages, and on any page whose other type is predicted less sure than
    ``threshold`` (an unsure type keeps the article convention)."""
    return page_type.article_like or page_type.probability < threshold


def describe(name: str | None, probability: float | None) -> str:
    """The type of a document and the convention rules it turned on, in words
    (``maintext explain``)."""
    if name is None or probability is None:
        return "not predicted (EXTRACT_PAGE_TYPES off): the article rules apply"
    if article_rules(PageType(name, probability), ARTICLE_THRESHOLD):
        rules = "article rules on (headline, bylines, datelines, captions, teasers leave the text)"
    else:
        rules = (
            "article rules off: only the headline and furniture lines leave the text; the "
            "items' bylines, dates and captions stay"
        )
    if name in TRAFILATURA_TYPES:
        rules += "; the auto engine gives such pages to trafilatura"
    return f"{name} (probability {probability:.2f}): {rules}"


def routes_to_trafilatura(page_type: PageType | None) -> bool:
    """Whether the ``auto`` engine gives a page of ``page_type`` to trafilatura."""
    return page_type is not None and page_type.name in TRAFILATURA_TYPES
