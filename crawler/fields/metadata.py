"""Page metadata for every engine: trafilatura's metadata extractor (htmldate inside), run
step by step so that its slowest steps, the author search and the category and tag search,
can be the equivalents in ``fields.author`` (same answers, a fifth of the time) and
``fields.catstags``.

``trafilatura_metadata`` follows ``trafilatura.metadata.extract_metadata`` of the versions
pyproject.toml allows, calling the same functions in the same order;
``tests/test_metadata_fast.py`` checks both give the same fields.
"""

from __future__ import annotations

import copy
import html
import json
import logging
import re
from typing import Any
from urllib.parse import urlsplit

import lxml.html
from courlan import extract_domain
from htmldate import find_date
from lxml import etree
from scrapy_maintext.document import Document
from scrapy_maintext.fields import datescan
from scrapy_maintext.fields.author import extract_author
from scrapy_maintext.fields.catstags import extract_catstags
from scrapy_maintext.fields.metadata_rules import FALLBACK, RULES, Rule, add_clean_titles
from scrapy_maintext.fields.pagedate import find_dates
from scrapy_maintext.fields.startup_cache import compiled_patterns
from scrapy_maintext.fields.structured import (
    BYLINE,
    MAX_JSON_LD_CHARS,
    Candidates,
    add_byline,
    page_candidates,
)
from scrapy_maintext.fields.topics import page_keywords, sections
from trafilatura import json_metadata as tj
from trafilatura import metadata as tm
from trafilatura.settings import Document as MetaDocument
from trafilatura.settings import set_date_params
from trafilatura.utils import HTML_STRIP_TAGS, trim

logger = logging.getLogger(__name__)

# htmldate's page-wide date patterns run only where a date can be (same answers).
datescan.install()

#: Longest malformed JSON-LD block handed to trafilatura (chars). Its fallback regexes
#: are quadratic: 10,000 chars cost well under 0.1 s; real blocks, even broken ones, put
#: author and type in their first few hundred characters.
MAX_MALFORMED_JSON_LD = 10_000
#: Elements above which htmldate's free-text date search is skipped. Real pages have a few
#: thousand (the largest in a fifth of the developer pages: ~10,500); the search costs
#: ~40 µs per element.
MAX_DATE_SEARCH_ELEMENTS = 30_000
#: Text that no locale reads as a date: parsing it makes dateparser compile the word
#: regexes of all its locales, which it otherwise does on the first page whose date only
#: htmldate's external parser finds (1.66 s of CPU and 40.7 MiB, once per process, in
#: ``python -m benchmarks.worker_warmup --data ../shared/data --measure cpu``).
WARM_DATE_TEXT = "xq 2021"
# The page's XPaths compiled once (``tree.xpath(text)`` compiles its text on every call).
_FOOTER_LINKS = etree.XPath(
    './/footer//a[@href]|.//div[contains(@class, "footer") or contains(@id, "footer")]//a[@href]'
)
#: Letters (in any case, as ``TEXT_LICENSE_REGEX`` reads them) that a licence text holds.
_LICENCE_CUE = re.compile(r"cc|creativecommons", re.I)
_LICENCE_KIND = re.compile(r"by|zero", re.I)
_JSON_LD_XPATH = '//script[@type="application/ld+json" or @type="application/settings+json"]'
_JSON_LD = etree.XPath(_JSON_LD_XPATH)
_JSON_LD_BELOW = etree.XPath("." + _JSON_LD_XPATH)
_ELEMENTS = etree.XPath("count(//*)")
_OG_TITLE = etree.XPath("//meta[@property='og:title']/@content")
_TITLE_OR_H1 = (etree.XPath("//title"), etree.XPath("//h1"))
_LICENSE_LINKS = etree.XPath("//link[@rel='license']/@href|//a[@rel='license']/@href")
#: trafilatura's ``JSON_MINIFY`` (``("(?:\\.|[^"\\])*")|\s``) in a faster form (``minify_json``).
_JSON_MINIFY = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")|\s+')
_SURROGATES = re.compile("[\ud800-\udfff]")
_LANG = re.compile(r"^\s*([a-zA-Z]{2,3})(?:[-_][a-zA-Z0-9]{1,8})*\s*$")
_LANG_XPATHS = tuple(
    etree.XPath(path, namespaces={"xml": "http://www.w3.org/XML/1998/namespace"})
    for path in (
        "/html/@lang",
        # The HTML parser keeps "xml:lang" as a plain attribute name, not a namespaced one.
        "/html/@*[name()='xml:lang']",
        "/html/@xml:lang",
        "//meta[translate(@http-equiv,'CONTENT-LANGUAGE','content-language')"
        "='content-language']/@content",
        "//meta[@property='og:locale']/@content",
    )
)


def apply_metadata(doc: Document, tree: lxml.html.HtmlElement, url: str | None) -> None:
    """Fill the metadata fields of ``doc`` from the page (the tree is not modified).

    Never raises: a metadata block that breaks a parser costs the metadata, not the text.
    """
    try:
        meta, found = gather(tree, url)
    # Third-party parsers (htmldate, dateparser, trafilatura's) fail in many ways on odd
    # markup; RecursionError included.
    except Exception as exc:
        logger.debug("Metadata failed for %s: %r", url, exc)
        doc.language = page_language(tree)
        return
    doc.title = RULES["title"].pick(found.title)[0]
    doc.author = RULES["author"].pick(found.author)[0]
    day, source = RULES["date"].pick(found.date)
    doc.date = with_time(day, source, found.moments)
    doc.date_modified = modified_date(found)
    doc.sitename = meta.sitename or None
    doc.hostname = meta.hostname or doc.hostname
    doc.description = meta.description or None
    doc.categories = sections(split_terms(meta.categories))
    doc.tags = page_keywords(tree) or split_terms(meta.tags)
    doc.license = meta.license or page_license(tree)
    doc.image = meta.image or None
    doc.language = page_language(tree) or meta.language or None


def gather(
    tree: lxml.html.HtmlElement, url: str | None, rules: dict[str, Rule] | None = RULES
) -> tuple[MetaDocument, Candidates]:
    """trafilatura's metadata and every structured source of title, author and date, with
    trafilatura's answers as the source "trafilatura" (``metadata_rules`` chooses).

    With ``rules``, the byline search and trafilatura's author and date searches (its slowest
    steps) are skipped on pages where a decision list believes a source that gives a value
    first; None runs every step (``benchmarks.metadata`` learns the rules from all of them).
    """
    found = page_candidates(tree, url)
    if rules is None or rules["author"].needs(found.author, BYLINE):
        add_byline(tree, found)
    skip = frozenset(
        f for f in ("author", "date") if rules and not rules[f].needs(getattr(found, f), FALLBACK)
    )
    # extract_metadata leaves the tree as it is (htmldate copies what it prunes), so the
    # tree is copied only when a malformed JSON-LD block must be cut (a copy is ~1 ms).
    bounded, dates = bound_json_ld(tree), date_config(tree)
    meta = trafilatura_metadata(bounded, url, dates, skip | {"date"})
    date = None
    if "date" not in skip:
        # htmldate's date as trafilatura's step asks for it, and real_date's check of it
        # (fields.pagedate: the two in one pass).
        meta.date, date = find_dates(bounded, meta.url, dates, url, tree)
    add_fallback(found, url, meta.title, meta.author, date)
    return meta, found


#: Date sources of a publication time, in the order one is taken for a day another source
#: chose; and the sources of the last modification.
TIME_SOURCES = (
    "jsonld_published", "article_published", "microdata_date", "time_first", "meta_date",
    "dc_date", "jsonld_created",
)  # fmt: skip
MODIFIED_SOURCES = ("modified", "meta_updated")


def with_time(day: str | None, source: str | None, moments: dict[str, str]) -> str | None:
    """The chosen day with the time the page gives it: the chosen source's own, else that of
    the first source in ``TIME_SOURCES`` on the same day."""
    if not day:
        return day
    sources = (source, *TIME_SOURCES) if source not in MODIFIED_SOURCES else TIME_SOURCES
    for name in sources:
        moment = moments.get(name or "")
        if moment and moment[:10] == day:
            return moment
    return day


def modified_date(found: Candidates) -> str | None:
    """When the page says it was last changed: with its time where it gives one."""
    for source in MODIFIED_SOURCES:
        value = found.moments.get(source) or found.date.get(source)
        if value:
            return value
    return None


def add_fallback(
    found: Candidates, url: str | None, title: str | None, author: str | None, date: str | None
) -> None:
    """trafilatura's title, author and date as the source "trafilatura", and the titles
    without site names derived from every title source."""
    found.add("title", FALLBACK, title)
    found.add("author", FALLBACK, author)
    found.add("date", FALLBACK, date)
    add_clean_titles(found, url)


def warm_date_parser() -> None:
    """Compile dateparser's locale data in this process, as htmldate's parser uses it, so
    that processes forked from this one (the extraction workers, also those that replace a
    recycled worker) do not each pay for it on a page."""
    from htmldate.extractors import get_external_parser

    # Compiled once for all processes (fields.startup_cache).
    with compiled_patterns("dateparser"):
        get_external_parser().get_date_data(WARM_DATE_TEXT)


def trafilatura_metadata(
    tree: lxml.html.HtmlElement,
    url: str | None,
    dates: dict[str, Any],
    skip: frozenset[str] = frozenset(),
) -> MetaDocument:
    """``trafilatura.metadata.extract_metadata(tree, default_url=url, date_config=dates)``,
    without its author search and date search for the fields in ``skip``."""
    meta = tm.examine_meta(tree)
    if meta.author and " " not in meta.author:
        meta.author = None
    try:
        meta = extract_meta_json(tree, meta)
    # As in trafilatura: its JSON-LD reader fails in many ways on odd blocks.
    except Exception as exc:
        logger.debug("JSON-LD metadata failed for %s: %r", url, exc)
    meta.title = meta.title or tm.extract_title(tree)
    if "author" not in skip:
        meta.author = meta.author or extract_author(tree)
    meta.url = meta.url or tm.extract_url(tree, url)
    if meta.url:
        meta.hostname = extract_domain(meta.url, fast=True)
    if "date" not in skip:
        meta.date = find_date(tree, **{**dates, "url": meta.url})
    _sitename(tree, meta)
    meta.categories = meta.categories or extract_catstags("category", tree)
    meta.tags = meta.tags or extract_catstags("tag", tree)
    meta.license = extract_license(tree)
    meta.filedate = dates.get("max_date")
    meta.clean_and_trim()
    return meta


def extract_meta_json(tree: lxml.html.HtmlElement, meta: MetaDocument) -> MetaDocument:
    """``trafilatura.metadata.extract_meta_json``, each block's text minified and normalised
    by faster equivalents (``minify_json``, ``normalize_json``) of its two slowest steps."""
    for script in _JSON_LD_BELOW(tree):
        if not script.text:
            continue
        text = normalize_json(minify_json(script.text))
        try:
            meta = tj.extract_json(json.loads(text, strict=False), meta)
        except json.JSONDecodeError:
            meta = tj.extract_json_parse_error(text, meta)
    return meta


def minify_json(text: str) -> str:
    """``JSON_MINIFY.sub(r"\\1", text)``: its strings' pattern unrolled and white space taken
    a run at a time (the same matches: a string ends at its first unescaped quote)."""
    return _JSON_MINIFY.sub(r"\1", text)


def normalize_json(text: str) -> str:
    """``trafilatura.json_metadata.normalize_json``, lone surrogates dropped by a regex."""
    if "\\" in text:
        text = text.replace("\\n", "").replace("\\r", "").replace("\\t", "")
        text = tj.JSON_UNICODE_REPLACE.sub(lambda match: chr(int(match[1], 16)), text)
        text = html.unescape(_SURROGATES.sub("", text))
    return trim(HTML_STRIP_TAGS.sub("", text))


def _sitename(tree: lxml.html.HtmlElement, meta: MetaDocument) -> None:
    """trafilatura's site name: markup, else the URL's domain; "@handle" and case fixed."""
    meta.sitename = meta.sitename or tm.extract_sitename(tree)
    if meta.sitename:
        meta.sitename = meta.sitename.lstrip("@")
        if meta.sitename and "." not in meta.sitename and not meta.sitename[0].isupper():
            meta.sitename = meta.sitename.title()
    elif meta.url:
        match = tm.META_URL.match(meta.url)
        if match:
            meta.sitename = match[1]


def date_config(tree: lxml.html.HtmlElement) -> dict[str, Any]:
    """htmldate's settings: its free-text date search only on pages of a sane size.

    That search visits every element (a 190,000-paragraph page spent 8 s in it on one core,
    more under load, most of a 30 s page timeout); on larger pages only markup (meta tags,
    ``<time>``, JSON-LD, the URL) is searched.
    """
    extensive = _ELEMENTS(tree) <= MAX_DATE_SEARCH_ELEMENTS
    return set_date_params(extensive=extensive)


def bound_json_ld(tree: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """``tree``, or a copy of it with its JSON-LD blocks bounded (``tree`` itself is never
    modified): malformed blocks cut to MAX_MALFORMED_JSON_LD chars, blocks above
    ``structured.MAX_JSON_LD_CHARS`` emptied.

    trafilatura reads a block that is not valid JSON with regular expressions that are
    quadratic in its length (a 163 KB block took 30 s); what it looks for there (author,
    type, publisher, title) sits near the start. Valid JSON is parsed in linear time, but
    what trafilatura makes of a huge value is not: an 8 MB ``author`` took a worker past
    1 GB. A block nested too deep for ``json`` counts as malformed.
    """
    scripts = _JSON_LD(tree)
    bounded_texts = {i: _bounded(script.text) for i, script in enumerate(scripts)}
    changes = {i: text for i, text in bounded_texts.items() if text is not None}
    if not changes:
        return tree
    bounded = copy.deepcopy(tree)
    scripts = _JSON_LD(bounded)
    for i, text in changes.items():
        scripts[i].text = text
    return bounded


def _bounded(text: str | None) -> str | None:
    """What a JSON-LD block's text must become, or None when it may stay."""
    if not text or len(text) <= MAX_MALFORMED_JSON_LD:
        return None
    if len(text) > MAX_JSON_LD_CHARS:
        return ""
    try:
        json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return text[:MAX_MALFORMED_JSON_LD]
    return None


def page_title(tree: lxml.html.HtmlElement) -> str | None:
    """The page's own title without the metadata pass: ``og:title``, else ``<title>``, else
    the first ``<h1>`` (what the text convention compares the first blocks with)."""
    for value in _OG_TITLE(tree)[:1]:
        if str(value).strip():
            return str(value)
    for path in _TITLE_OR_H1:
        for el in path(tree)[:1]:
            text = " ".join(el.text_content().split())
            if text:
                return text
    return None


def page_language(tree: lxml.html.HtmlElement) -> str | None:
    """Primary language subtag the page declares ("en" for ``lang="en-GB"``), or None."""
    for xpath in _LANG_XPATHS:
        for value in xpath(tree):
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


def extract_license(tree: lxml.html.HtmlElement) -> str | None:
    """``trafilatura.metadata.extract_license``, which copies every footer link to read its
    text (``block_text``): here a footer link is read only when its href or the letters of
    its text could name a Creative Commons licence (the same answers)."""
    for element in tree.findall(".//a[@rel][@href]"):
        if "license" in element.get("rel", "").lower().split():
            result = tm.parse_license_element(element, strict=False)
            if result is not None:
                return result
    for element in _FOOTER_LINKS(tree):
        if tm.LICENSE_REGEX.search(element.get("href", "")) or _may_name_licence(element):
            result = tm.parse_license_element(element, strict=True)
            if result is not None:
                return result
    return None


def _may_name_licence(link: lxml.html.HtmlElement) -> bool:
    """Whether ``block_text(link)`` can match ``TEXT_LICENSE_REGEX`` ("CC BY 4.0", "Creative
    Commons BY-SA"): the letters of its text, in order, hold both cues (spaces that
    ``block_text`` adds and the control characters it drops are not letters)."""
    letters = "".join(filter(str.isalpha, link.text_content()))
    return bool(_LICENCE_CUE.search(letters) and _LICENCE_KIND.search(letters))


def page_license(tree: lxml.html.HtmlElement) -> str | None:
    """The licence URL a ``rel="license"`` link points to (trafilatura reads only <a> text)."""
    for href in _LICENSE_LINKS(tree):
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
