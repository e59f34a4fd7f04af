"""Page metadata for every engine, from trafilatura's metadata extractor (htmldate inside)."""

from __future__ import annotations

import copy
import re
from urllib.parse import urlsplit

import lxml.html
from scrapy_maintext.document import Document
from trafilatura.metadata import extract_metadata

_LANG = re.compile(r"^\s*([a-zA-Z]{2,3})(?:[-_][a-zA-Z0-9]{1,8})*\s*$")
_LANG_XPATHS = (
    "/html/@lang",
    "/html/@xml:lang",
    "//meta[translate(@http-equiv,'CONTENT-LANGUAGE','content-language')"
    "='content-language']/@content",
    "//meta[@property='og:locale']/@content",
)


def apply_metadata(doc: Document, tree: lxml.html.HtmlElement, url: str | None) -> None:
    """Fill the metadata fields of ``doc`` from the page (the tree is not modified)."""
    meta = extract_metadata(copy.deepcopy(tree), default_url=url)
    doc.title = meta.title or None
    doc.author = meta.author or None
    doc.date = meta.date or None
    doc.sitename = meta.sitename or None
    doc.hostname = meta.hostname or doc.hostname
    doc.description = meta.description or None
    doc.categories = split_terms(meta.categories)
    doc.tags = split_terms(meta.tags)
    doc.license = meta.license or page_license(tree)
    doc.image = meta.image or None
    doc.language = page_language(tree) or meta.language or None


def page_language(tree: lxml.html.HtmlElement) -> str | None:
    """Primary language subtag the page declares ("en" for ``lang="en-GB"``), or None."""
    for xpath in _LANG_XPATHS:
        for value in tree.xpath(xpath, namespaces={"xml": "http://www.w3.org/XML/1998/namespace"}):
            match = _LANG.match(str(value))
            if match:
                return match.group(1).lower()
    return None


def split_terms(values: list[str] | None) -> list[str]:
    """Terms from keyword lists, splitting comma-separated ones, without duplicates."""
    terms: list[str] = []
    for value in values or ():
        for term in value.split(","):
            term = " ".join(term.split())
            if term and term not in terms:
                terms.append(term)
    return terms


def page_license(tree: lxml.html.HtmlElement) -> str | None:
    """The licence URL a ``rel="license"`` link points to (trafilatura reads only <a> text)."""
    for href in tree.xpath("//link[@rel='license']/@href|//a[@rel='license']/@href"):
        if str(href).strip():
            return str(href).strip()
    return None


def hostname_of(url: str | None) -> str | None:
    if not url:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.removeprefix("www.") if host else None
