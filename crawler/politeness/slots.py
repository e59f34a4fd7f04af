"""One download slot per site, ports included.

Scrapy keys download slots by host name: two sites on one host with different ports share
a slot, its concurrency and its delay, and the last Crawl-delay applied wins for both (a
site asking for 3 s got 1 s gaps). Requests to a URL with an explicit port get the
``download_slot`` meta key ``host:port``; every slot user (downloader, AutoThrottle, the
robots and Retry-After middlewares) reads it through ``get_slot_key``. URLs without a port
keep Scrapy's slots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.utils.httpobj import urlparse_cached
from scrapy_maintext.scrapy_internals import slot_key
from scrapy_maintext.vocabulary.names import Meta

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler
    from scrapy.http import Request


def site_slot(request: Request) -> str | None:
    """``host:port`` for a URL with an explicit port, else None (Scrapy's own key)."""
    parts = urlparse_cached(request)
    try:
        port = parts.port
    except ValueError:
        return None
    if port is None or not parts.hostname:
        return None
    return f"{parts.hostname}:{port}"


class SiteSlotMiddleware:
    """Downloader middleware: sets ``download_slot`` before the downloader picks a slot
    (and before the robots middleware records a Crawl-delay for it)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        slot = slot_to_set(request)
        if slot is not None:
            request.meta[Meta.DOWNLOAD_SLOT] = slot


def slot_to_set(request: Request) -> str | None:
    """The ``download_slot`` :class:`SiteSlotMiddleware` gives ``request``: ``host:port``
    when it has none yet and its URL names a port, else None."""
    if Meta.DOWNLOAD_SLOT in request.meta:
        return None
    return site_slot(request)


def planned_slot(crawler: Crawler, request: Request) -> str:
    """The downloader slot ``request`` will have, before it passed the downloader
    middlewares (a request just taken from a shared queue)."""
    return slot_to_set(request) or slot_key(crawler, request)
