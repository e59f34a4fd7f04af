"""What a page declares about itself (issue 39; products: issue 45): the JSON-LD ``@type``s
and microdata ``itemtype``s it declares, grouped as the page type's features read them, its
first Open Graph type, and how many products it declares (``declares_a_product``). Read by
``page_type``, from the parsed page or on the page walk (``page_type.Structure``).
Scrapy-free.
"""

from __future__ import annotations

import re
from typing import Any

import lxml.html

_LD_TYPE = re.compile(r'"@type"\s*:\s*\[?\s*"([A-Za-z]+)"')
LD_GROUPS = {
    "article": ("article", "newsarticle", "blogposting", "reportagenewsarticle", "report",
                "analysisnewsarticle", "opinionnewsarticle", "scholarlyarticle", "posting"),
    "product": ("product", "offer", "aggregateoffer", "productgroup", "individualproduct"),
    "forum": ("discussionforumposting", "qapage", "question", "answer", "comment",
              "socialmediaposting"),
    "list": ("itemlist", "collectionpage", "searchresultspage", "listitem", "offercatalog"),
    "doc": ("techarticle", "apireference", "softwaresourcecode", "howto", "course"),
    "service": ("service", "faqpage", "contactpage", "aboutpage", "organization",
                "localbusiness", "event", "softwareapplication", "webapplication"),
}  # fmt: skip
#: The declared types of one product (``declares_a_product``).
PRODUCTS = frozenset({"product", "productgroup", "individualproduct"})
#: Product declarations (JSON-LD ``@type``, microdata ``itemtype``) up to this many make the
#: page a product page (``declares_a_product``; chosen inside the folds, models/CHANGELOG.md).
DECLARED_PRODUCTS = 2


def read_declared(tree: lxml.html.HtmlElement, values: dict[str, float]) -> int:
    """The declared types into ``values``; returns how many products the page declares."""
    found: set[str] = set()
    products = 0
    for script in tree.iter("script"):
        products += add_ld_types(script, found)
    for el in tree.xpath("//*[@itemtype]"):
        name = itemtype_name(el.get("itemtype"))
        found.add(name)
        products += name in PRODUCTS
    og = None
    for meta in tree.iter("meta"):
        og = og_type(meta)
        if og is not None:
            break
    write_declared(found, og, values)
    return products


def add_ld_types(script: Any, found: set[str]) -> int:
    """The ``@type``s a JSON-LD ``<script>`` declares, into ``found``; returns how many of
    its declarations are products."""
    if "ld+json" in (script.get("type") or "") and script.text:
        names = [t.lower() for t in _LD_TYPE.findall(script.text)]
        found.update(names)
        return sum(n in PRODUCTS for n in names)
    return 0


def itemtype_name(itemtype: str) -> str:
    return str(itemtype).rstrip("/").rsplit("/", 1)[-1].lower()


def og_type(meta: Any) -> str | None:
    """The Open Graph type a ``<meta>`` gives ("" when empty), None when it gives none."""
    if (meta.get("property") or meta.get("name") or "").lower() == "og:type":
        return (meta.get("content") or "").lower()
    return None


def write_declared(found: set[str], og: str | None, values: dict[str, float]) -> None:
    for group, names in LD_GROUPS.items():
        values[f"ld:{group}"] = float(bool(found.intersection(names)))
    values["ld:any"] = float(bool(found))
    og = og or ""
    kind = og if og in ("article", "product", "website") else ("other" if og else "")
    if kind:
        values[f"og:{kind}"] = 1.0


def declares_a_product(products: int) -> bool:
    """Whether a page that declares ``products`` products in its structured data is a
    product page whatever its structure looks like: one product, or two (a product and its
    variants' group); a brand's product pages look like its service pages, a shop's home
    page can be one product's page, and a shop's list declares one product per item. A page
    that declares an article is left to the model (``page_type.page_inputs`` counts no
    product there): a review declares the product it reviews."""
    return 1 <= products <= DECLARED_PRODUCTS
