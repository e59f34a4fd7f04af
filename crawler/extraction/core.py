"""``extract()``: one page in, one :class:`~crawler.document.Document` out, never raising."""

from __future__ import annotations

import logging

import lxml.html
from scrapy_maintext.document import Document, blocks_to_text
from scrapy_maintext.extraction.decode import parse_page
from scrapy_maintext.extraction.engines import run_engine
from scrapy_maintext.extraction.fingerprint import fingerprint
from scrapy_maintext.extraction.metadata import apply_metadata, hostname_of
from scrapy_maintext.extraction.options import ExtractOptions

logger = logging.getLogger(__name__)


def extract(
    html: str | bytes, url: str | None = None, options: ExtractOptions | None = None
) -> Document:
    """Main text and metadata of one page.

    Bad input (binary, empty, non-HTML, oversized, hostile) gives a Document with empty
    text and ``reason`` set instead of an exception.
    """
    options = options or ExtractOptions()
    doc = Document(url=url, hostname=hostname_of(url))
    page = parse_page(html, options)
    if page.tree is None:
        doc.reason = page.reason
        return doc
    try:
        _extract_tree(doc, page.tree, options)
    except RecursionError:
        doc.reason = "too-deep"
    # The contract is "never an escaping exception": third-party parsers fail in many
    # ways on hostile pages, and one bad page must not stop a crawl.
    except Exception as exc:
        logger.debug("Extraction failed for %s: %r", url, exc)
        doc.reason = "extraction-error"
    if doc.reason:
        doc.body, doc.text = [], ""
    return doc


def _extract_tree(doc: Document, tree: lxml.html.HtmlElement, options: ExtractOptions) -> None:
    if options.with_metadata:
        apply_metadata(doc, tree, doc.url)
    result = run_engine(tree, doc.url, options)
    doc.body = result.blocks
    doc.text = blocks_to_text(result.blocks)
    doc.comments = result.comments
    doc.extractor = result.extractor
    doc.confidence = result.confidence
    doc.model_version = result.model_version
    doc.fingerprint = fingerprint(doc.text)
    if not doc.text.strip():
        doc.reason = "no-main-text"


def is_fallback(doc: Document) -> bool:
    """Whether the neural engine ran but handed the page to trafilatura."""
    return doc.extractor == "trafilatura" and doc.model_version is not None
