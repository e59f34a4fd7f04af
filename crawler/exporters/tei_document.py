"""One document as TEI P5 (``<TEI>``): its header and its body. Scrapy-free.

Every document validates against ``tei_all`` (tests check it): the header holds title,
author, date, URL, site, licence, language, keywords and the extractor (with model
version); the body keeps headings (as ``<div>`` sections), paragraphs, lists, tables,
quotes and code.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

import scrapy_maintext
from lxml import etree
from scrapy_maintext.document import Block, Image
from scrapy_maintext.exporters.records import (
    images_before,
    string_list,
    text_of,
    to_record,
    xml_safe,
)

TEI_NS = "http://www.tei-c.org/ns/1.0"
XML_NS = "http://www.w3.org/XML/1998/namespace"
DEFAULT_CORPUS_TITLE = "Web corpus"

_WHEN = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
_VERSION = re.compile(r"\d+(\.\d+){0,2}")
_LANGUAGE = re.compile(r"^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$")
#: Characters an ``xsd:anyURI`` (``@url``) cannot hold as they are: percent-encoded.
_URL_UNSAFE = re.compile(r"[\s<>\"{}|\\^`]")


def el(parent: etree._Element | None, tag: str, text: str | None = None, **attrs: str) -> Any:
    name = f"{{{TEI_NS}}}{tag}"
    if parent is None:
        element = etree.Element(name, nsmap={None: TEI_NS})
    else:
        element = etree.SubElement(parent, name)
    for key, value in attrs.items():
        element.set(key, xml_safe(value))
    if text:
        element.text = xml_safe(text)
    return element


def build_tei(item: Any) -> etree._Element:
    """A standalone ``<TEI>`` element for one exported item."""
    record = to_record(item)
    tei = el(None, "TEI")
    language = record.get("language")
    if isinstance(language, str) and _LANGUAGE.match(language):
        tei.set(f"{{{XML_NS}}}lang", language)
    _build_header(el(tei, "teiHeader"), record)
    _build_body(el(el(tei, "text"), "body"), record)
    return tei


def _build_header(header: Any, record: dict[str, Any]) -> None:
    file_desc = el(header, "fileDesc")
    title_stmt = el(file_desc, "titleStmt")
    el(title_stmt, "title", record.get("title") or record.get("url") or "Untitled")
    _authors(title_stmt, record)
    _build_publication(el(file_desc, "publicationStmt"), record)
    if record.get("description"):
        el(el(file_desc, "notesStmt"), "note", record["description"], type="description")
    _build_source(el(el(file_desc, "sourceDesc"), "bibl"), record)
    _build_encoding(el(header, "encodingDesc"), record)
    _build_profile(header, record)


def _build_publication(stmt: Any, record: dict[str, Any]) -> None:
    el(stmt, "publisher", record.get("sitename") or record.get("hostname") or "unknown")
    if record.get("url"):
        el(stmt, "idno", record["url"], type="URL")
    if record.get("fingerprint"):
        el(stmt, "idno", record["fingerprint"], type="fingerprint")
    _date(stmt, record.get("date"))
    if record.get("license"):
        el(el(stmt, "availability"), "licence", record["license"])


def _date(parent: Any, value: Any, kind: str | None = None) -> None:
    if not value:
        return
    date = el(parent, "date", str(value), **({"type": kind} if kind else {}))
    if _is_iso_date(str(value)) or _is_moment(str(value)):
        date.set("when", str(value))


def _is_moment(value: str) -> bool:
    """Whether ``value`` is an ISO 8601 date and time (``@when`` takes ``xsd:dateTime``)."""
    if not re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})?$", value):
        return False
    try:
        datetime.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _is_iso_date(value: str) -> bool:
    """Whether ``value`` is a real YYYY, YYYY-MM or YYYY-MM-DD date (what @when accepts)."""
    if not _WHEN.match(value):
        return False
    padded = value + "-01" * (2 - value.count("-"))
    try:
        datetime.date.fromisoformat(padded)
    except ValueError:
        return False
    return True


def _build_source(bibl: Any, record: dict[str, Any]) -> None:
    el(bibl, "title", record.get("title") or record.get("url") or "Untitled")
    _authors(bibl, record)
    if record.get("sitename"):
        el(bibl, "publisher", record["sitename"])
    _date(bibl, record.get("date"))
    _date(bibl, record.get("date_modified"), "modified")
    if record.get("url"):
        el(bibl, "idno", record["url"], type="URL")
    if record.get("image"):
        el(bibl, "idno", record["image"], type="image")
    _build_provenance(bibl, record)


def _authors(parent: Any, record: dict[str, Any]) -> None:
    """One ``<author>`` per name of ``authors``; the ``author`` string when there are none."""
    names = string_list(record.get("authors")) or string_list(record.get("author"))
    for name in names:
        el(parent, "author", name)


#: Provenance fields (WARC_OUTPUT, or ``maintext extract`` of a WARC) as ``<idno>`` types.
PROVENANCE_IDNOS = (
    ("warc_file", "WARC-file"),
    ("warc_offset", "WARC-offset"),
    ("warc_record_id", "WARC-Record-ID"),
    ("payload_digest", "WARC-Payload-Digest"),
)


def _build_provenance(bibl: Any, record: dict[str, Any]) -> None:
    """Where the document came from: its WARC record, the fetch time and HTTP status."""
    for key, kind in PROVENANCE_IDNOS:
        if record.get(key) not in (None, ""):
            el(bibl, "idno", str(record[key]), type=kind)
    fetched = record.get("fetched_at")
    if isinstance(fetched, str) and fetched:
        date = el(bibl, "date", fetched, type="fetched")
        if _is_datetime(fetched):
            date.set("when", fetched)
    if record.get("status") not in (None, ""):
        el(bibl, "note", str(record["status"]), type="http-status")


def _is_datetime(value: str) -> bool:
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        return False
    return moment.tzinfo is not None and "T" in value


def _build_encoding(desc: Any, record: dict[str, Any]) -> None:
    app_info = el(desc, "appInfo")
    crawler_app = el(
        app_info, "application", ident="scrapy-maintext", version=scrapy_maintext.__version__
    )
    el(crawler_app, "label", "scrapy-maintext")
    extractor = record.get("extractor") or "unknown"
    version = record.get("model_version") or _engine_version(extractor)
    engine = el(app_info, "application", ident=_ident(extractor), version=_version(version))
    el(engine, "label", extractor)
    if _version(version) != version:
        el(engine, "desc", version, type="version")
    if record.get("confidence") is not None:
        el(engine, "desc", f"confidence {float(record['confidence']):.3f}")


def _engine_version(extractor: str) -> str:
    if extractor == "trafilatura":
        import trafilatura

        return str(trafilatura.__version__)
    return "unknown"


def _version(version: str) -> str:
    """``@version`` must be digits and dots (teidata.versionNumber); the full string, when
    different, goes into a ``<desc type="version">``."""
    match = _VERSION.search(version)
    return match.group(0) if match else "0"


def _ident(name: str) -> str:
    """A valid ``xsd:Name`` from an extractor name."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "-", name)
    return cleaned if cleaned[:1].isalpha() else f"x-{cleaned}"


def _build_profile(header: Any, record: dict[str, Any]) -> None:
    language = record.get("language")
    categories, tags = string_list(record.get("categories")), string_list(record.get("tags"))
    has_language = isinstance(language, str) and bool(_LANGUAGE.match(language))
    page_type = record.get("page_type")
    if not isinstance(page_type, str) or not page_type:
        page_type = None
    if not (has_language or categories or tags or page_type):
        return
    profile = el(header, "profileDesc")
    if has_language:
        language_el = el(el(profile, "langUsage"), "language", str(language), ident=str(language))
        confidence = record.get("language_confidence")
        if isinstance(confidence, int | float) and 0 <= confidence <= 1:
            # TEI's @cert takes a probability: the language detector's.
            language_el.set("cert", f"{float(confidence):.4g}")
    if categories or tags or page_type:
        text_class = el(profile, "textClass")
        if page_type:
            _page_type_code(text_class, page_type, record.get("page_type_probability"))
        for scheme, terms in (("categories", categories), ("tags", tags)):
            if terms:
                keywords = el(text_class, "keywords", scheme=f"#{scheme}")
                for term in terms:
                    el(keywords, "term", term)


def _page_type_code(text_class: Any, page_type: str, probability: Any) -> None:
    """The page type (``extraction.page_type``) as a ``<classCode scheme="#page-type">``,
    the model's probability as its ``@cert``."""
    code = el(text_class, "classCode", page_type, scheme="#page-type")
    if isinstance(probability, int | float) and 0 <= probability <= 1:
        code.set("cert", f"{float(probability):.4g}")


def _build_body(body: Any, record: dict[str, Any]) -> None:
    blocks = record["body"] or [Block("p", line) for line in text_of(record).splitlines()]
    images: list[Image] = record["images"] if record["body"] else []
    div = None
    index = 0
    while index < len(blocks):
        block = blocks[index]
        if block.kind == "head" or div is None:
            div = el(body, "div", type="section")
        index = _add_block(div, blocks, index, images)
    if div is None:
        div = el(body, "div", type="section")
        el(div, "p")
    for image in images_before(images, len(blocks), len(blocks), True):
        _add_figure(div, image)
    comments = record.get("comments")
    if isinstance(comments, str) and comments.strip():
        section = el(body, "div", type="comments")
        for line in comments.splitlines():
            if line.strip():
                el(section, "p", line)


def _add_block(div: Any, blocks: list[Block], index: int, images: list[Image]) -> int:
    """Append ``blocks[index]`` (with the run of list items or rows it starts) to ``div``,
    after the figures of the images that stand before it; returns the next block's index."""
    block = blocks[index]
    end = index + 1
    if block.kind in ("item", "row"):
        while end < len(blocks) and blocks[end].kind == block.kind:
            end += 1
    for image in images_before(images, index, end, False):
        # A figure may open a section before its <head> (TEI's model.global).
        _add_figure(div, image)
    if block.kind in ("item", "row"):
        _add_group(div, blocks[index:end])
    elif block.kind == "head":
        head = el(div, "head", block.text)
        if block.level:
            head.set("rend", f"h{block.level}")
    elif block.kind == "code":
        el(div, "ab", block.text, type="code").set(f"{{{XML_NS}}}space", "preserve")
    elif block.kind == "quote":
        el(div, "quote", block.text)
    else:
        el(div, "p", block.text)
    return end


def _add_figure(div: Any, image: Image) -> None:
    """``<figure>``: the picture's ``<graphic url>``, its caption as ``<head>``, its alt text
    as ``<figDesc>``, its credit as ``<note type="credit">``; ``type="cover"`` for the cover."""
    figure = el(div, "figure", type="cover") if image.cover else el(div, "figure")
    el(figure, "graphic", url=_URL_UNSAFE.sub(_percent, image.url))
    if image.caption:
        el(figure, "head", image.caption)
    if image.alt:
        el(figure, "figDesc", image.alt)
    if image.credit:
        el(figure, "note", image.credit, type="credit")


def _percent(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode())


def _add_group(div: Any, group: list[Block]) -> None:
    if group[0].kind == "item":
        listing = el(div, "list")
        for block in group:
            el(listing, "item", block.text)
        return
    table = el(div, "table")
    for block in group:
        row = el(table, "row")
        for cell in block.cells or (block.text,):
            el(row, "cell", cell)


def tei_bytes(item: Any) -> bytes:
    """One document as a standalone, pretty-printed TEI file."""
    return etree.tostring(
        build_tei(item), xml_declaration=True, encoding="utf-8", pretty_print=True
    )
