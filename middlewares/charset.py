"""Responses that declare a codec which decodes no text get an encoding that does.

``Content-Type: text/html; charset=base64`` (or ``hex``, ``zlib``, ``rot13``, in the header
or a ``<meta>``) names a codec Python knows, so Scrapy takes it as the page's encoding;
``response.text`` then raises ``LookupError`` in Scrapy's own middlewares and in every
callback, and the page is lost. This middleware, placed right after decompression, gives
such a response the encoding its body sniffs as (BOM, UTF-8, its ``<meta>`` charset, else
Windows-1252: ``extraction.body.sniffed_encoding``, as the extraction workers decode an
undeclared body), counted as ``discovery/charset_repaired``. Other responses pass untouched
and undecoded: only their declared charset is read, from the header and the body's start;
so does a response built with an explicit ``encoding``, which Scrapy puts first.

A body without a BOM whose NUL pattern says UTF-16 (``extraction.body.utf16_by_nuls``: ASCII
markup with a NUL byte beside each character) gets that encoding too, in the byte order it
is written in, whatever it declares: UTF-16 served as ``charset=utf-8`` (Scrapy would decode
it as UTF-8, NUL bytes and all, and the page be skipped as binary), or little-endian served
as ``charset=utf-16`` (which w3lib decodes big-endian, as RFC 2781 says when there is no
BOM). Counted alike.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.http import TextResponse
from scrapy_maintext.extraction.body import is_text_encoding, sniffed_encoding, utf16_by_nuls
from scrapy_maintext.scrapy_internals import explicit_encoding
from scrapy_maintext.spiders.pages import declared_encoding
from scrapy_maintext.vocabulary.names import Stat
from w3lib.encoding import read_bom, resolve_encoding

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: Stat: responses given a sniffed encoding in place of their declared codec.
REPAIRED_STAT = Stat.CHARSET_REPAIRED


class CharsetRepairMiddleware:
    """Downloader middleware: a declared codec that decodes no text is replaced."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_response(self, request: Request, response: Response) -> Response:
        # An encoding given to the response itself wins over every declaration, in Scrapy
        # too (private: behind scrapy_internals).
        if not isinstance(response, TextResponse) or explicit_encoding(response):
            return response
        declared = declared_encoding(response)
        utf16 = None if read_bom(response.body)[0] else utf16_by_nuls(response.body)
        if utf16 is not None:
            if _as_w3lib_decodes(declared) == utf16:
                return response
            encoding, why = utf16, "but its body is UTF-16 by its NUL bytes"
        elif declared is None or is_text_encoding(declared):
            return response
        else:
            encoding, why = sniffed_encoding(response.body), "which decodes no text"
        logger.debug(
            "%s declares charset %r, %s: read as %s", response.url, declared, why, encoding
        )
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(REPAIRED_STAT)
        return response.replace(encoding=encoding)


def _as_w3lib_decodes(encoding: str | None) -> str | None:
    """The codec w3lib decodes a body without a BOM with, for a declared charset: its
    canonical name, and ``utf-16`` big-endian."""
    resolved = resolve_encoding(encoding) if encoding else None
    return "utf-16-be" if resolved == "utf-16" else resolved
