"""The page ``maintext explain`` reads: a file, or a URL fetched with one plain GET.

A URL is fetched with the standard library (no Scrapy, no trafilatura download), with a
timeout and the extraction's size limit; what cannot be read is a :class:`SourceError` whose
message is the one line the command prints.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from pathlib import Path

import scrapy_maintext

#: Who asks (one page, asked for by a person): the crawl's product name.
USER_AGENT = f"scrapy-maintext/{scrapy_maintext.__version__} (maintext explain)"
#: Content types read as HTML; a response without one is sniffed by the extraction.
HTML_TYPES = ("text/html", "application/xhtml+xml")


class SourceError(Exception):
    """A page that cannot be read; the message names it and says why, in one line."""


@dataclass(frozen=True)
class Source:
    """A page's bytes, its URL and the encoding its server declared."""

    body: bytes
    url: str | None
    encoding: str | None = None


def is_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))


def read_source(source: str, max_bytes: int, timeout: float, url: str | None = None) -> Source:
    """The page at ``source`` (a path or an http(s) URL); ``url`` names a file's page."""
    if is_url(source):
        return fetch(source, max_bytes, timeout)
    scheme, separator, _ = source.partition("://")
    if separator and scheme.isalpha():
        raise SourceError(f"{source}: only http:// and https:// URLs are fetched")
    path = Path(source)
    try:
        if path.is_dir():
            raise SourceError(f"{source}: a folder, not a page")
        with path.open("rb") as handle:
            body = handle.read(max_bytes + 1)
    except OSError as exc:
        raise SourceError(f"{source}: {exc.strerror or exc}") from None
    if len(body) > max_bytes:
        raise SourceError(f"{source}: larger than {max_bytes} bytes")
    return Source(body, url or path.resolve().as_uri())


def fetch(url: str, max_bytes: int, timeout: float) -> Source:
    """One GET of ``url`` (redirects followed); the page's URL is where it ended."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "*/*"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            headers: Message = response.headers
            kind = headers.get_content_type() if headers.get("Content-Type") else ""
            if kind and kind not in HTML_TYPES:
                raise SourceError(f"{url}: not an HTML page ({kind})")
            body = response.read(max_bytes + 1)
            final = response.geturl()
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:  # urllib's redirect loop or redirect without a Location
            raise SourceError(f"{url}: HTTP {exc.code}, redirects that lead nowhere") from None
        raise SourceError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise SourceError(f"{url}: cannot be fetched ({exc.reason})") from None
    except TimeoutError:
        raise SourceError(f"{url}: no answer in {timeout:g} s") from None
    # A reset connection, a malformed URL or answer, a body cut short.
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise SourceError(f"{url}: cannot be fetched ({exc})") from None
    if len(body) > max_bytes:
        raise SourceError(f"{url}: larger than {max_bytes} bytes")
    return Source(body, final, headers.get_content_charset())
