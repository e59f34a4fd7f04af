"""Scrapy's meta-refresh redirects without decoding every page that has none.

Scrapy's ``MetaRefreshMiddleware`` reads ``response.text[:4096]``, which decodes the whole
body of every HTML response in the crawl process, where nothing else needs the text once
pages go to the extraction workers as bytes. A ``<meta http-equiv="refresh">`` tag is ASCII,
so a body whose first :data:`HEAD_BYTES` bytes do not contain ``refresh`` (in any case)
cannot have one in its first 4,096 characters when its encoding writes ASCII as single
bytes and no character in more than 4 (UTF-8, the ISO-8859 and Windows code pages, GBK,
GB18030, Big5, Shift_JIS, EUC): those responses pass untouched. Every other response (the
word is there, the body holds NUL bytes, or the encoding is UTF-16/32, EBCDIC or one with
escape sequences such as ISO-2022-JP) goes through Scrapy's own code, so redirects are
exactly Scrapy's.
"""

from __future__ import annotations

import codecs
import functools
from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware
from scrapy.http import HtmlResponse

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.http import Response

#: Bytes that hold Scrapy's 4,096 characters in any encoding of at most 4 bytes a
#: character (UTF-8 and GB18030 included).
HEAD_BYTES = 4 * 4096
_WORD = b"refresh"
#: Codecs that switch character sets with escape sequences (stateful: ASCII bytes can
#: stand for other characters, and a character can take more than 4 bytes).
_ESCAPED = ("iso2022", "utf-7", "hz")


def may_refresh(body: bytes) -> bool:
    """Whether the start of ``body`` could hold a meta refresh, read as bytes of an
    ASCII-safe encoding (False: surely not)."""
    head = body[:HEAD_BYTES]
    return b"\x00" in head or _WORD in head.lower()


@functools.lru_cache(maxsize=128)
def ascii_safe(encoding: str) -> bool:
    """Whether ``encoding`` writes ASCII as single bytes, without escape sequences."""
    try:
        name = codecs.lookup(encoding).name
        return not name.startswith(_ESCAPED) and _WORD.decode(name) == "refresh"
    except (LookupError, UnicodeError):
        return False


class HeadMetaRefreshMiddleware(MetaRefreshMiddleware):
    """``MetaRefreshMiddleware`` that skips bodies which cannot hold a refresh tag."""

    def process_response(  # type: ignore[override]
        self, request: Request, response: Response
    ) -> Request | Response:
        if (
            isinstance(response, HtmlResponse)
            and not may_refresh(response.body)
            and ascii_safe(response.encoding)
        ):
            return response
        return super().process_response(request, response)
