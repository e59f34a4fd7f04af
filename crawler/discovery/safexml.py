"""Defensive XML loading: capped gzip, no entities, no DTDs, no network."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree

#: Largest decompressed sitemap/feed we accept. The sitemap protocol caps a sitemap at
#: 50 MB uncompressed, so anything beyond that is either broken or a decompression bomb.
MAX_DECOMPRESSED_BYTES = 50 * 1024 * 1024

GZIP_MAGIC = b"\x1f\x8b"
#: Bytes looked at to tell XML from text or JSON.
SNIFF_BYTES = 512
# A DOCTYPE with an internal subset is how entity bombs and XXE arrive; feeds and sitemaps
# never need one.
_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)


@dataclass(frozen=True)
class LoadedDocument:
    """A sitemap or feed body, decompressed and, when it is XML, parsed."""

    data: bytes = b""
    #: The parsed root; None when the document is not XML (a text sitemap, a JSON Feed).
    root: etree._Element | None = None
    #: Why the document was refused ("gzip_bomb", "hostile_xml", ...), else None.
    error: str | None = None


class XmlError(ValueError):
    """Raised for XML we refuse or cannot parse; ``reason`` is a short stat-friendly code."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def gunzip_capped(data: bytes, limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress gzip data (every member), refusing to produce more than ``limit`` bytes."""
    out = bytearray()
    rest = data
    while rest[:2] == GZIP_MAGIC:
        decomp = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += decomp.decompress(rest, limit + 1 - len(out))
        except zlib.error as exc:
            raise XmlError("bad_gzip", str(exc)) from exc
        if len(out) > limit or decomp.unconsumed_tail:
            raise XmlError("gzip_bomb", f"more than {limit} bytes once decompressed")
        if not decomp.eof:
            raise XmlError("truncated_gzip", "the gzip stream ends early")
        rest = decomp.unused_data
    return bytes(out)


def maybe_gunzip(data: bytes, limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Return ``data`` decompressed when it starts with the gzip magic, else unchanged."""
    if data[:2] == GZIP_MAGIC:
        return gunzip_capped(data, limit)
    if len(data) > limit:
        raise XmlError("too_large", f"{len(data)} bytes")
    return data


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def utf16_codec(data: bytes) -> str | None:
    """The codec of a UTF-16 document: ``utf-16`` with a BOM; without one, ``utf-16-le``
    or ``-be`` when its first two characters are ASCII (``<``, ``{``, white space: a NUL
    byte beside each, as RFC 4627 sniffs JSON); else None."""
    if data[:2] in UTF16_BOMS:
        return "utf-16"
    if len(data) < 4:
        return None
    if data[0] and data[2] and not data[1] and not data[3]:
        return "utf-16-le"
    if data[1] and data[3] and not data[0] and not data[2]:
        return "utf-16-be"
    return None


def leading_bytes(data: bytes, size: int) -> bytes:
    """The first bytes of a document after a BOM and whitespace, to sniff its format
    (UTF-16 is decoded, so a UTF-16 document sniffs like a UTF-8 one)."""
    codec = utf16_codec(data)
    if codec:
        head = data[: size * 2].decode(codec, errors="replace")
        return head.encode("utf-8", errors="replace")[:size].lstrip(b" \t\r\n")
    return data[:size].lstrip(b"\xef\xbb\xbf \t\r\n")


def decode_text(data: bytes) -> str:
    """Plain text (a text sitemap) in UTF-8 or UTF-16 (:func:`utf16_codec`)."""
    return data.decode(utf16_codec(data) or "utf-8-sig", errors="replace")


def _parser(recover: bool) -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        recover=recover,
    )


# "&" that starts neither a predefined entity nor a character reference (entity
# declarations are refused, so no other name can be defined).
_BARE_AMPERSAND = re.compile(rb"&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);)")


def escape_bare_ampersands(data: bytes) -> bytes:
    """``?page=1&cat=2`` as ``?page=1&amp;cat=2``: an unescaped "&" in a sitemap URL is
    common, and lxml's recovery would drop "&cat" as an unknown entity. (Not for UTF-16,
    where the bytes of "&" differ.)"""
    if utf16_codec(data):
        return data
    return _BARE_AMPERSAND.sub(b"&amp;", data)


def parse_xml(data: bytes) -> etree._Element:
    """Parse untrusted XML, refusing entity declarations; recover from minor breakage."""
    # The whole document is scanned: a long comment can push a DOCTYPE far down.
    codec = utf16_codec(data)
    text_for_scan = data.decode(codec, "replace").encode() if codec else data
    if _ENTITY_DECL.search(text_for_scan):
        raise XmlError("hostile_xml", "entity declarations are refused")
    if not codec:
        data = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    try:
        root = etree.fromstring(data, parser=_parser(recover=False))
    except etree.XMLSyntaxError:
        try:
            root = etree.fromstring(escape_bare_ampersands(data), parser=_parser(recover=True))
        except etree.XMLSyntaxError as exc:
            raise XmlError("malformed_xml", str(exc)) from exc
    if root is None:
        raise XmlError("malformed_xml", "no root element")
    return root


def load_document(body: bytes, is_xml: Callable[[bytes], bool]) -> LoadedDocument:
    """Decompress ``body`` (capped) and parse it when ``is_xml(first bytes)`` says it is XML;
    never raises on bad input."""
    try:
        data = maybe_gunzip(body)
        if not is_xml(leading_bytes(data, SNIFF_BYTES)):
            return LoadedDocument(data)
        return LoadedDocument(data, parse_xml(data))
    except XmlError as exc:
        return LoadedDocument(error=exc.reason)


def local_name(el: etree._Element) -> str:
    """Tag name without namespace, lower-cased ('' for comments and the like)."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def child_text(el: etree._Element, name: str) -> str | None:
    """Text of the first child whose local name is ``name`` (any namespace)."""
    for child in el:
        if local_name(child) == name:
            text = "".join(child.itertext()).strip()
            return text or None
    return None
