"""Responses that declare a codec which decodes no text get an encoding that does.

``Content-Type: text/html; charset=base64`` (or ``hex``, ``zlib``, ``rot13``, in the header
or a ``<meta>``) names a codec Python knows, so Scrapy takes it as the page's encoding;
``response.text`` then raises ``LookupError`` in Scrapy's own middlewares and in every
callback, and the page is lost. This middleware, placed right after decompression, gives
such a response the encoding its body sniffs as (BOM, UTF-8, its ``<meta>`` charset, else
Windows-1252: ``extraction.decode.sniffed_encoding``, as the extraction workers decode an
undeclared body), counted as ``discovery/charset_repaired``. Other responses pass untouched
and undecoded: only their declared charset is read, from the header and the body's start;
so does a response built with an explicit ``encoding``, which Scrapy puts first.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.http import TextResponse
from scrapy_maintext.extraction.body import is_text_encoding, sniffed_encoding
from scrapy_maintext.spiders.pages import declared_encoding

if TYPE_CHECKING:
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

#: Stat: responses given a sniffed encoding in place of their declared codec.
REPAIRED_STAT = "discovery/charset_repaired"


class CharsetRepairMiddleware:
    """Downloader middleware: a declared codec that decodes no text is replaced."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_response(self, request: Request, response: Response) -> Response:
        # An encoding given to the response itself wins over every declaration, in Scrapy
        # too (``TextResponse._encoding``, private: pinned in tests/test_charset.py).
        if not isinstance(response, TextResponse) or getattr(response, "_encoding", None):
            return response
        declared = declared_encoding(response)
        if declared is None or is_text_encoding(declared):
            return response
        encoding = sniffed_encoding(response.body)
        logger.debug(
            "%s declares charset %r, which decodes no text: read as %s",
            response.url,
            declared,
            encoding,
        )
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(REPAIRED_STAT)
        return response.replace(encoding=encoding)
