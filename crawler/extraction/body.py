"""Turn a raw body into parsed HTML, refusing what is not a web page.

Every refusal is a short reason string, never an exception: callers put it in
``Document.reason``.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import lxml.html
from lxml import etree
from scrapy_maintext.extraction.options import ExtractOptions
from w3lib.encoding import html_to_unicode

#: How much of the start of a body is sniffed for magic numbers, NUL bytes and charsets.
SNIFF_BYTES = 4096
#: Share of control characters above which a decoded body is taken for binary.
MAX_CONTROL_SHARE = 0.1

_MAGIC = (
    b"%PDF",
    b"\x89PNG",
    b"GIF8",
    b"\xff\xd8\xff",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"BZh",
    b"\xfd7zXZ",
    b"RIFF",
    b"OggS",
    b"ID3",
    b"\x00\x00\x01\x00",
    b"wOFF",
    b"wOF2",
    b"\x7fELF",
)
#: NUL bytes a text body may hold in its sniffed start (one before ``<html>``, a few stray
#: ones in a template) and still be text; binary formats hold many more.
MAX_STRAY_NULS = 8
#: Share of control bytes (NUL, other C0 controls but white space) in the start of a body
#: with NUL bytes above which it is binary: text holds next to none, compressed or random
#: data about 10%.
MAX_CONTROL_BYTE_SHARE = 0.02
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20)])
#: Bytes ASCII text in UTF-16 holds beside its NUL bytes: printable ASCII and white space.
_TEXT_BYTES = frozenset(b"\t\n\r\x0c" + bytes(range(0x20, 0x7F)))
#: Least share of UTF-16 code units that are NUL-and-ASCII for a body without a BOM to
#: sniff as UTF-16 (markup is ASCII even where the text is not); the other byte order's
#: units may have a NUL in the other half at most this rarely.
_UTF16_ASCII_SHARE = 0.5
_UTF16_OTHER_SHARE = 0.05
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.I)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
_TAG = re.compile(r"<\s*(?:[a-zA-Z][a-zA-Z0-9]*|!doctype|!--)", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f]")
#: What no XML output can hold: C0 controls (vertical tab and form feed too: HTML reads
#: them as white space, trafilatura's XML tree raises on them), lone surrogates, U+FFFE/F.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: Nesting depth kept as it is. libxml2 stops at 256 levels without its "huge" option and
#: loses what is deeper; pages are parsed with it (2048 levels) and flattened to this
#: depth, which real pages stay far below and recursive tree code handles.
MAX_NESTING = 200
#: Longest start tag kept with its attributes. Real tags are well under 1 KB (long ones
#: carry inline styles or data URIs); one with 100,000 attributes takes libxml2 and the
#: extractors minutes (duplicate checks and attribute edits are quadratic).
MAX_TAG_CHARS = 16 * 1024
#: Possessive: the name is never given back to the attributes' run, which each tag would
#: otherwise scan once more per letter of its name (3x the time over a whole page).
_LONG_TAG = re.compile(rf"<([a-zA-Z][a-zA-Z0-9:-]*+)[^<>]{{{MAX_TAG_CHARS},}}+>")
#: Depth that pages deeper than MAX_NESTING are first flattened to, unwrapping all but
#: block elements (the margin leaves room for the blocks nested in each other).
FLATTEN_DEPTH = MAX_NESTING - 50
#: Tags whose boundaries are kept first when flattening (they separate paragraphs).
_BLOCK_TAGS = frozenset(
    [
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "pre",
        "blockquote",
        "table",
        "tr",
        "td",
        "th",
    ]
)


@dataclass
class ParsedPage:
    """The outcome of decoding and parsing: a tree, or a reason why there is none."""

    tree: lxml.html.HtmlElement | None = None
    reason: str | None = None
    #: What was repaired or lost on the way ("nesting-flattened", "nesting-cut",
    #: "attributes-cut"), for the crawl's stats.
    notes: list[str] = field(default_factory=list)


def parse_page(
    raw: str | bytes, options: ExtractOptions, encoding: str | None = None
) -> ParsedPage:
    """Decode, sanity-check and parse one body.

    ``encoding`` (bytes only) is the body's declared character encoding, as a crawl's
    ``response.encoding`` gives it: the body is then decoded exactly as Scrapy's
    ``response.text`` would be, without the sniffing for binary bodies (the crawl's own
    checks, of content type, magic numbers and binary bytes, stand for it, as they did for
    text).
    """
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
    if size > options.max_bytes:
        return ParsedPage(reason="too-large")
    if isinstance(raw, bytes) and encoding:
        text = decode_declared(raw, encoding)
    elif isinstance(raw, bytes):
        if looks_binary(raw):
            return ParsedPage(reason="binary")
        text = decode_bytes(raw)
    else:
        text = raw
    return parse_text(text, options)


def decode_declared(data: bytes, encoding: str) -> str:
    """``data`` decoded as Scrapy's ``TextResponse.text`` decodes it once it knows the
    encoding: w3lib's ``html_to_unicode`` with that charset (a BOM still wins; undecodable
    bytes become U+FFFD). A name that is no text encoding (unknown, or ``base64`` from a
    hostile header) is ignored: the body is sniffed like any other. So is a charset that a
    body without a BOM belies by its NUL pattern: UTF-16 text declared as UTF-8, or as
    ``utf-16`` (which w3lib reads big-endian) in little-endian order, is decoded as the
    UTF-16 it is (:func:`utf16_by_nuls`, as ``CharsetRepairMiddleware`` does in a crawl)."""
    if not is_text_encoding(encoding):
        return decode_bytes(data)
    if not data.startswith(_UTF16_BOMS):
        utf16 = utf16_by_nuls(data)
        if utf16 is not None:
            encoding = utf16
    return html_to_unicode(f"charset={encoding}", data)[1]


def looks_binary(data: bytes) -> bool:
    """Magic numbers of common non-HTML formats, or binary bytes near the start: more
    than a few NUL bytes, or NUL bytes among many control bytes. A UTF-16 body (by its BOM
    or :func:`utf16_by_nuls`) is text, NUL bytes and all."""
    head = data[:SNIFF_BYTES]
    # UTF-16/32 pages legitimately hold NUL bytes; their BOM says so.
    if head.startswith(_UTF16_BOMS):
        return False
    if head.startswith(_MAGIC):
        return True
    return has_binary_bytes(head) and utf16_by_nuls(head) is None


def has_binary_bytes(head: bytes) -> bool:
    """Whether ``head`` (the start of a body) holds bytes that text does not: more than
    :data:`MAX_STRAY_NULS` NUL bytes, or NUL bytes among more control bytes than
    :data:`MAX_CONTROL_BYTE_SHARE` of it. One NUL before ``<html>`` is not binary."""
    nuls = head.count(0)
    if not nuls:
        return False
    if nuls > MAX_STRAY_NULS:
        return True
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return controls > max(MAX_STRAY_NULS, MAX_CONTROL_BYTE_SHARE * len(head))


def utf16_by_nuls(data: bytes) -> str | None:
    """``"utf-16-le"`` or ``"utf-16-be"`` when the start of ``data`` reads as UTF-16 without
    a BOM: most code units an ASCII byte and a NUL, in one byte order (HTML markup is ASCII
    in any language); else None."""
    units = min(len(data), SNIFF_BYTES) // 2
    head = data[: 2 * units]
    # A cheap test first: text in one-byte encodings holds no NUL byte.
    if units < 2 or head.count(0) < _UTF16_ASCII_SHARE * units:
        return None
    low, high = head[0::2], head[1::2]
    for ascii_half, nul_half, name in ((low, high, "utf-16-le"), (high, low, "utf-16-be")):
        ascii_units = sum(
            1 for a, n in zip(ascii_half, nul_half, strict=True) if n == 0 and a in _TEXT_BYTES
        )
        if (
            ascii_units >= _UTF16_ASCII_SHARE * units
            and ascii_half.count(0) <= _UTF16_OTHER_SHARE * units
        ):
            return name
    return None


def decode_bytes(data: bytes) -> str:
    """``data`` decoded with :func:`sniffed_encoding` (undecodable bytes become U+FFFD)."""
    return _sniffed(data).text


def sniffed_encoding(data: bytes) -> str:
    """The BOM's encoding, else UTF-16 by its NUL pattern (:func:`utf16_by_nuls`), else
    UTF-8, else the declared charset, else Windows-1252.

    UTF-8 is tried before the declared charset because pages that lie about their
    charset almost always are UTF-8, and strict UTF-8 decoding of other text fails fast.
    """
    return _sniffed(data).encoding


@dataclass(frozen=True)
class _Sniffed:
    encoding: str
    text: str


def _sniffed(data: bytes) -> _Sniffed:
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return _Sniffed(encoding, data.decode(encoding, errors="replace"))
    utf16 = utf16_by_nuls(data)
    if utf16 is not None:
        return _Sniffed(utf16, data.decode(utf16, errors="replace"))
    try:
        return _Sniffed("utf-8", data.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    declared = _declared_charset(data[:SNIFF_BYTES])
    if declared and is_text_encoding(declared):
        try:
            return _Sniffed(declared, data.decode(declared))
        except UnicodeError:
            pass
    return _Sniffed("cp1252", data.decode("cp1252", errors="replace"))


def is_text_encoding(encoding: str) -> bool:
    """Whether ``encoding`` decodes any bytes to text as ``response.text`` does (undecodable
    bytes replaced): not unknown, not a bytes codec (``base64``, ``zlib``), not ``idna`` or
    ``punycode`` (which refuse the ``replace`` handler or raise on non-ASCII bytes)."""
    try:
        # Only text encodings encode a str (bytes.decode skips the check for b"").
        "x".encode(encoding)
        b"a\xe9".decode(encoding, errors="replace")
    except (LookupError, UnicodeError):
        return False
    return True


def _declared_charset(head: bytes) -> str | None:
    match = _CHARSET.search(head)
    if not match:
        return None
    name = match.group(1).decode("ascii", errors="ignore")
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def parse_text(text: str, options: ExtractOptions) -> ParsedPage:
    """Parse decoded text; refuse empty, binary-looking, non-HTML and oversized trees."""
    text = _XML_DECL.sub("", text, count=1)
    if not text.strip():
        return ParsedPage(reason="empty-page")
    sample = text[:SNIFF_BYTES]
    if len(_CONTROL.findall(sample)) > MAX_CONTROL_SHARE * len(sample):
        return ParsedPage(reason="binary")
    if not _TAG.search(sample):
        return ParsedPage(reason="not-html")
    # The parser chokes on NUL and keeps other C0 controls, which XML output cannot hold.
    text = _NOT_XML.sub(" ", text)
    page = ParsedPage()
    text, long_tags = _LONG_TAG.subn(r"<\1>", text)
    if long_tags:
        page.notes.append("attributes-cut")
    page.tree = _parse(text, page.notes)
    if page.tree is None:
        return ParsedPage(reason="unparsable")
    if _exceeds(page.tree, options.max_elements):
        return ParsedPage(reason="too-large")
    page.notes += repair_tree(page.tree)
    return page


def repair_tree(tree: lxml.html.HtmlElement) -> list[str]:
    """Flatten a page nested deeper than MAX_NESTING: wrappers are unwrapped first, so
    its paragraphs stay paragraphs; then whatever is still too deep."""
    if not deeper_than(tree, MAX_NESTING):
        return []
    _flatten(tree, FLATTEN_DEPTH, keep=_BLOCK_TAGS)
    _flatten(tree, MAX_NESTING, keep=frozenset())
    return ["nesting-flattened"]


def _depths(tree: lxml.html.HtmlElement) -> Iterator[tuple[int, Any]]:
    depth = 0
    for event, el in etree.iterwalk(tree, events=("start", "end")):
        if event == "end":
            depth -= 1
        else:
            depth += 1
            yield depth, el


def max_depth(tree: lxml.html.HtmlElement) -> int:
    return max((depth for depth, _ in _depths(tree)), default=0)


def deeper_than(tree: lxml.html.HtmlElement, depth: int) -> bool:
    """``max_depth(tree) > depth``, in one XPath pass: libxml2 walks the levels, not a
    Python loop over every element."""
    return bool(tree.xpath("boolean(." + "/*" * depth + ")"))


def _flatten(tree: lxml.html.HtmlElement, limit: int, keep: frozenset[str]) -> None:
    """Unwrap elements deeper than ``limit`` (but those in ``keep``): their text and
    children move up."""
    deep = [el for depth, el in _depths(tree) if depth > limit and el.tag not in keep]
    for el in reversed(deep):
        if isinstance(el.tag, str):
            el.drop_tag()


def _class_lookup() -> etree.ElementNamespaceClassLookup:
    """lxml.html's element classes (``HtmlElementClassLookup``: ``FormElement`` for
    ``<form>``, ..., ``HtmlElement`` for the rest) chosen in C: lxml.html's own lookup is a
    Python method, called for every element proxy a page's steps make (a third of the cost
    of making one)."""
    lookup = etree.ElementNamespaceClassLookup(
        etree.ElementDefaultClassLookup(
            element=lxml.html.HtmlElement,
            comment=lxml.html.HtmlComment,
            pi=lxml.html.HtmlProcessingInstruction,
            entity=lxml.html.HtmlEntity,
        )
    )
    # The HTML parser lowercases tag names, which lxml.html's lookup lowercases again.
    classes = lookup.get_namespace(None)
    for name, element_class in lxml.html.HtmlElementClassLookup._default_element_classes.items():
        classes[name] = element_class
    return lookup


_CLASS_LOOKUP = _class_lookup()


def _parse(text: str, notes: list[str]) -> lxml.html.HtmlElement | None:
    parser = lxml.html.HTMLParser(
        remove_comments=True, remove_pis=True, collect_ids=False, huge_tree=True
    )
    parser.set_element_class_lookup(_CLASS_LOOKUP)
    try:
        tree = lxml.html.document_fromstring(text, parser=parser)
        if any("Excessive depth" in error.message for error in parser.error_log):
            # Deeper than even the huge limit: the parser dropped the rest of the page.
            notes.append("nesting-cut")
        return tree
    except ValueError:
        # lxml refuses str input that still carries an encoding declaration (a malformed
        # one the regex above missed): hand it UTF-8 bytes and say so.
        utf8 = lxml.html.HTMLParser(
            remove_comments=True,
            remove_pis=True,
            collect_ids=False,
            encoding="utf-8",
            huge_tree=True,
        )
        utf8.set_element_class_lookup(_CLASS_LOOKUP)
        data = text.encode("utf-8", errors="replace")
        try:
            return lxml.html.document_fromstring(data, parser=utf8)
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            return None
    except (etree.ParserError, etree.XMLSyntaxError):
        return None


def _exceeds(tree: lxml.html.HtmlElement, limit: int) -> bool:
    """More than ``limit`` elements (counted by libxml2: the parser has dropped comments and
    processing instructions, so the elements are all the nodes ``tree.iter()`` gives)."""
    return bool(tree.xpath("count(descendant-or-self::*)") > limit)
