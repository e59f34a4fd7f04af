"""Which responses are pages worth extracting, and the encoding a response declares."""

from __future__ import annotations

from scrapy.http import Response, TextResponse
from scrapy_maintext.extraction.body import looks_binary
from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom

#: Content types a page may have; anything else (images, PDFs, archives) is skipped.
HTML_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/xml", "text/xml")


def declares_encoding(response: TextResponse) -> bool:
    """Whether the response names its encoding (BOM, Content-Type charset or ``<meta>``):
    what Scrapy reads before guessing, cheaply (the start of the body only)."""
    return declared_encoding(response) is not None


def declared_encoding(response: TextResponse) -> str | None:
    """The encoding the response names, by BOM, Content-Type charset or ``<meta>`` (in
    Scrapy's order), as w3lib resolves the name; None if it names none that Python knows."""
    body = response.body
    bom = read_bom(body)[0]
    if bom:
        return bom
    content_type = (response.headers.get("Content-Type") or b"").decode("latin-1")
    return http_content_type_encoding(content_type) or html_body_declared_encoding(body)


def is_html_response(response: Response) -> bool:
    """A text page worth extracting: declared HTML-ish and not binary in fact."""
    if not isinstance(response, TextResponse):
        return False
    ctype = (response.headers.get("Content-Type") or b"").decode("latin-1").lower()
    if ctype and ctype.split(";")[0].strip() not in HTML_TYPES:
        return False
    # UTF-16/32 text (by its BOM or declared charset) is full of NUL bytes.
    if response.encoding.lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        return True
    # Scrapy trusts a ".html" URL over the body; a magic number or binary bytes (more than a
    # few stray NULs) say it is binary after all. UTF-16 without a BOM, whatever charset it
    # declares, is text by its NUL pattern (CharsetRepairMiddleware gives it its encoding).
    return not looks_binary(response.body)
