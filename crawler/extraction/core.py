"""``extract()``: one page in, one :class:`~crawler.document.Document` out, never raising."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import islice
from typing import Any

import lxml.html
from scrapy_maintext.document import Block, Document, blocks_to_text
from scrapy_maintext.extraction import convention, page_type
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.convention import Convention, PageFacts
from scrapy_maintext.extraction.engines import (
    EngineResult,
    NeuralEngineError,
    run_engine,
    run_trafilatura,
    segment_first,
)
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.extraction.page_walk import PageWalk
from scrapy_maintext.extraction.second_opinion import prefers_other, wants_second_opinion
from scrapy_maintext.fields.fingerprint import fingerprint
from scrapy_maintext.fields.language import detect
from scrapy_maintext.fields.metadata import (
    apply_metadata,
    hostname_of,
    page_language,
    page_title,
)
from scrapy_maintext.fields.people import is_publisher, split_authors
from scrapy_maintext.pictures.images import PageText, article_images, same_picture
from scrapy_maintext.render.availability import NEEDS_JAVASCRIPT
from scrapy_maintext.render.embedded import embedded_text
from scrapy_maintext.render.marks import THIN_TEXT, needs_javascript, script_marks
from scrapy_maintext.site_memory.memory import PageSignatures, SiteMemory, page_signatures
from scrapy_maintext.vocabulary.names import Note

logger = logging.getLogger(__name__)

#: Pages up to this many elements keep every element's proxy while extracted (above every
#: labelled page; the page type's and the pictures' walks read at most 20,000).
HELD_PROXIES = 20_000


def extract(
    html: str | bytes,
    url: str | None = None,
    options: ExtractOptions | None = None,
    site: SiteMemory | None = None,
) -> Document:
    """Main text and metadata of one page.

    Bad input (binary, empty, non-HTML, oversized, hostile) gives a Document with empty
    text and ``reason`` set instead of an exception. Arguments of the wrong type (``None``
    or a number for ``html``, ...) are a programming error: :class:`TypeError`. With
    ``site`` (the :class:`SiteMemory` of the page's site), the page is learnt into it and
    the blocks it shows to be the site's template are removed.
    """
    if site is not None and not isinstance(site, SiteMemory):
        raise TypeError(f"extract() takes site as SiteMemory or None, not {type(site).__name__}")
    result = extract_page(html, url, options, signatures=site is not None)
    if site is not None and result.signatures is not None:
        site.add(result.signatures)
        site.apply(result.doc, result.signatures)
    return result.doc


@dataclass
class PageResult:
    """A Document and, when asked for and the page has text, its block signatures."""

    doc: Document
    signatures: PageSignatures | None = None
    #: When asked for: what ``maintext explain`` reads (None when the page did not get to
    #: the engine's result).
    inside: Inside | None = None


@dataclass
class Inside:
    """The page's tree, what the engine made of it and which of its blocks are the body."""

    tree: lxml.html.HtmlElement
    engine: EngineResult
    body: Body


@dataclass
class Body:
    """The document's blocks out of the engine's, and why each other engine block is not."""

    blocks: list[Block]
    #: Per engine block, the part of the text convention that took it out, or None.
    convention: list[Convention | None]
    #: The engine blocks (indices) the convention left but that end the text as headings
    #: (:func:`without_trailing_headings`).
    trailing: list[int]


def extract_page(
    html: str | bytes,
    url: str | None = None,
    options: ExtractOptions | None = None,
    signatures: bool = True,
    encoding: str | None = None,
    explain: bool = False,
) -> PageResult:
    """:func:`extract` plus what a :class:`SiteMemory` needs to learn and decide the page.

    The crawl runs this in its extraction workers and applies the site memory in the crawl
    process, in item arrival order (``scrapy_maintext.site_memory.registry``). The
    crawl sends the body as fetched (bytes) with its ``encoding`` (Scrapy's
    ``response.encoding``): decoding here, in the worker, gives the text
    ``response.text`` would, without the crawl process decoding and pickling a str.
    With ``explain``, the result also holds the engine's result and the body's verdicts
    (not picklable: the crawl never asks).
    """
    html = _check_arguments(html, url, options)
    if encoding is not None and not isinstance(encoding, str):
        raise TypeError(f"extract_page() takes encoding as str or None, not {encoding!r}")
    options = options or ExtractOptions()
    result = PageResult(Document(url=url, hostname=hostname_of(url)))
    doc = result.doc
    page = parse_page(html, options, encoding)
    doc.notes = page.notes
    if page.tree is None:
        doc.reason = page.reason
        return result
    # Every element's Python proxy, alive until the page is done: lxml makes a proxy (and
    # calls lxml.html's class lookup) for each element a walk or an XPath hands out, and
    # frees it again once nothing holds it; the steps below walk the tree several times,
    # and with the proxies held each later walk reuses them (one proxy per element, linear).
    # Not on huge pages: there the held proxies cost the garbage collector more than they
    # save (benchmarks/huge_pages.py), and the page type's and pictures' walks stop early.
    elements = list(islice(page.tree.iter(), HELD_PROXIES + 1))
    if len(elements) > HELD_PROXIES:
        elements = []
    try:
        engine, body = _extract_tree(doc, page.tree, options)
        if explain:
            result.inside = Inside(page.tree, engine, body)
        if signatures and not doc.reason:
            result.signatures = _signatures(page.tree, doc, engine.segments)
    except RecursionError:
        doc.reason = "too-deep"
    except NeuralEngineError as exc:
        doc.reason, doc.neural_error = "neural-error", str(exc)
    # The contract is "never an escaping exception": third-party parsers fail in many
    # ways on hostile pages, and one bad page must not stop a crawl.
    except Exception as exc:
        logger.debug("Extraction failed for %s: %r", url, exc)
        doc.reason = "extraction-error"
    if doc.reason:
        doc.body, doc.text = [], ""
        result.signatures = None
    del elements
    return result


def _signatures(
    tree: lxml.html.HtmlElement, doc: Document, segments: list[Any] | None
) -> PageSignatures:
    """Block signatures from the neural engine's segmentation, or a new one without it."""
    if segments is None:
        # Imported here: the neural package loads onnxruntime, which a trafilatura-only
        # extract() does not need.
        from scrapy_maintext.neural.segment import segment

        segments = segment(tree)
    return page_signatures(segments, doc.body)


def _check_arguments(html: object, url: object, options: object) -> str | bytes:
    if isinstance(html, bytearray | memoryview):
        html = bytes(html)
    if not isinstance(html, str | bytes):
        raise TypeError(f"extract() takes the page as str or bytes, not {type(html).__name__}")
    if url is not None and not isinstance(url, str):
        raise TypeError(f"extract() takes url as str or None, not {type(url).__name__}")
    if options is not None and not isinstance(options, ExtractOptions):
        name = type(options).__name__
        raise TypeError(f"extract() takes options as ExtractOptions or None, not {name}")
    return html


def _extract_tree(
    doc: Document, tree: lxml.html.HtmlElement, options: ExtractOptions
) -> tuple[EngineResult, Body]:
    """Fill ``doc``; returns what the engine made of the page and the body's verdicts."""
    if options.with_metadata:
        apply_metadata(doc, tree, doc.url)
    # One walk of the page: the segmenter's also gives the page type's structure counts and
    # the pictures (``page_walk``); without it (no neural engine) each walks the page itself.
    walk = PageWalk.of(tree) if options.page_types or options.images else None
    segments = segment_first(tree, options, walk)
    found = _page_type(doc, tree, options, walk)
    article = found is None or page_type.article_rules(found, page_type.ARTICLE_THRESHOLD)
    if options.engine == "auto" and page_type.routes_to_trafilatura(found):
        result = run_trafilatura(tree, doc.url, options)
    else:
        result = run_engine(tree, doc.url, options, segments, found.name if found else None)
    body = settle_body(doc, tree, result, options.with_metadata, options.include_captions, article)
    if options.second_opinion and options.engine == "auto" and result.extractor == "neural":
        result, body = _second_opinion(doc, tree, result, body, options, article)
    doc.body = body.blocks
    doc.text = blocks_to_text(doc.body)
    doc.authors = split_authors(doc.author)
    if options.images:
        add_images(doc, tree, result, body, walk.page_text() if walk else None)
    doc.comments = result.comments
    doc.extractor = result.extractor
    doc.confidence = result.confidence
    doc.model_version = result.model_version
    doc.neural_error = result.neural_error
    doc.escalated = result.escalated
    doc.trafilatura_bounded = result.trafilatura_bounded
    doc.fingerprint = fingerprint(doc.text)
    if result.extractor == "neural" and getattr(result.segments, "cut", False):
        # The text ends where the page's blocks were cut (neural.segment.MAX_BLOCKS).
        doc.notes.append(Note.BLOCKS_CUT)
    apply_language(doc, tree, options.with_metadata)
    if len(doc.text) < THIN_TEXT:
        read_shipped(doc, tree, options.with_metadata)
    if not doc.text.strip():
        doc.reason = NEEDS_JAVASCRIPT if doc.needs_javascript else "no-main-text"
    return result, body


def read_shipped(doc: Document, tree: lxml.html.HtmlElement, metadata: bool) -> None:
    """A thin page built by its scripts: its text from the data it ships (``render.embedded``)
    when that holds more, else marked as needing JavaScript (the crawl may render it)."""
    marks = script_marks(tree)
    if not marks.script_built:
        return
    found = embedded_text(tree)
    if found is not None and found.chars > len(doc.text):
        doc.body, doc.images = found.blocks, []
        doc.text = blocks_to_text(doc.body)
        doc.text_source, doc.extractor = f"embedded:{found.kind}", "embedded"
        doc.fingerprint = fingerprint(doc.text)
        apply_language(doc, tree, metadata)
        return
    doc.needs_javascript = needs_javascript(marks, len(doc.text))


def _page_type(
    doc: Document, tree: lxml.html.HtmlElement, options: ExtractOptions, walk: PageWalk | None
) -> page_type.PageType | None:
    """The page's type, also put in ``doc`` (None when ``options`` ask for none)."""
    if not options.page_types:
        return None
    found = page_type.predict(tree, doc.url, walk.structure_counts() if walk else None)
    doc.page_type, doc.page_type_probability = found.name, found.probability
    return found


def _second_opinion(
    doc: Document,
    tree: lxml.html.HtmlElement,
    result: EngineResult,
    body: Body,
    options: ExtractOptions,
    article: bool,
) -> tuple[EngineResult, Body]:
    """trafilatura's result and body instead of the neural engine's when the neural text is
    thin (``extraction.second_opinion``) and trafilatura's holds more."""
    page_chars = sum(len(s.text) for s in result.segments or ())
    ours = blocks_to_text(body.blocks)
    if not wants_second_opinion(len(ours), page_chars):
        return result, body
    other = run_trafilatura(tree, doc.url, options)
    other_body = settle_body(
        doc, tree, other, options.with_metadata, options.include_captions, article
    )
    if not prefers_other(ours, blocks_to_text(other_body.blocks)):
        return result, body
    other.confidence, other.model_version = result.confidence, result.model_version
    other.segments, other.decision = result.segments, result.decision
    return other, other_body


def settle_body(
    doc: Document,
    tree: lxml.html.HtmlElement,
    result: EngineResult,
    metadata: bool,
    captions: bool = False,
    article: bool = True,
) -> Body:
    """The document's body: the engine's blocks as the text convention leaves them
    (:func:`follow_convention`), without the headings they end with. ``maintext explain``
    reads its verdicts: it cannot disagree with the text."""
    verdicts = follow_convention(doc, tree, result, metadata, captions, article)
    left = [i for i, verdict in enumerate(verdicts) if verdict is None]
    blocks = without_trailing_headings([result.blocks[i] for i in left])
    return Body(blocks, verdicts, left[len(blocks) :])


def follow_convention(
    doc: Document,
    tree: lxml.html.HtmlElement,
    result: EngineResult,
    metadata: bool,
    captions: bool = False,
    article: bool = True,
) -> list[Convention | None]:
    """Per engine block, the part of the convention (``extraction.convention``: headline,
    bylines, datelines, captions, furniture) that takes it out of the text, or None; a body
    byline gives the author the metadata lacked. ``article``: whether the article rules
    apply (the page type's verdict)."""
    title = doc.title if metadata else page_title(tree)
    facts = PageFacts.of(title, doc.author)
    verdicts = convention.judge(
        result.blocks, facts, result.markup, captions=captions, article=article
    )
    unnamed = doc.author is None or is_publisher(doc.author, doc.sitename, doc.hostname)
    if metadata and unnamed and Convention.BYLINE in verdicts:
        doc.author = convention.byline_author(result.blocks, verdicts) or doc.author
    return verdicts


def add_images(
    doc: Document,
    tree: lxml.html.HtmlElement,
    result: EngineResult,
    body: Body,
    walked: PageText | None = None,
) -> None:
    """The article's pictures (``pictures.images``), with the caption lines the convention
    took out of the text; ``image`` is the first of them when the metadata gave no cover.
    ``walked``: the pictures' walk of the page when the segmenter's walk gave it."""
    captions = [
        block
        for block, verdict in zip(result.blocks, body.convention, strict=True)
        if verdict is Convention.CAPTION
    ]
    doc.images = article_images(tree, doc.url, doc.body, doc.image, doc.title, captions, walked)
    cover = next((image.url for image in doc.images if image.cover), None)
    if cover and not (doc.image and same_picture(doc.image, cover)):
        # The page shows its cover in the article: that picture, not another crop of it.
        doc.image = cover


def apply_language(doc: Document, tree: lxml.html.HtmlElement, metadata: bool) -> None:
    """The document's language from its text (title included), the markup's as a hint."""
    hint = doc.language if metadata else page_language(tree)
    text = f"{doc.title}\n{doc.text}" if doc.title and len(doc.text) < 200 else doc.text
    found = detect(text, hint)
    doc.language, doc.language_confidence = found.code, found.confidence


def without_trailing_headings(blocks: list[Block]) -> list[Block]:
    """``blocks`` without the headings they end with: a heading introduces what follows,
    and one with nothing after it belongs to a section left out (the "2 comments" of a
    comment section when comments are off, a "Related stories" box)."""
    end = len(blocks)
    while end and blocks[end - 1].kind == "head":
        end -= 1
    return blocks[:end]


def is_fallback(doc: Document) -> bool:
    """Whether the neural engine ran but handed the page to trafilatura."""
    return doc.extractor == "trafilatura" and doc.model_version is not None
