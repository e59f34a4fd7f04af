"""Conditional requests from the crawl state: 304 and 404/410 of known URLs (Scrapy glue).

A request for a URL the state knows gets ``If-None-Match`` / ``If-Modified-Since`` with the
validators the server gave last time. A ``304`` of a page is its outcome (nothing to
export; the state remembers it was seen) and fails the request as
:class:`~scrapy_maintext.vocabulary.reasons.NotModified`, which the spiders count apart from
errors; a ``304`` of a sitemap or feed goes to the spider the same way. A page the state
knows that now answers ``404``/``410`` is marked gone
(:class:`~scrapy_maintext.vocabulary.reasons.PageGone`).
"""

from __future__ import annotations

import contextlib
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy_maintext.discovery.urls import normalize_url
from scrapy_maintext.report.extension import site_of_request
from scrapy_maintext.state.recrawl import Recrawl, crawl_state_of
from scrapy_maintext.state.store import StateUnavailable
from scrapy_maintext.state.validators import Validators, iso_to_epoch
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import NotModified, PageGone, RecrawlOutcome, switched_off

#: Requests that are not pages nor discovery documents of ours: robots.txt.
_NOT_CONDITIONAL = (Meta.ROBOTS_DISCOVERY, "dont_obey_robotstxt")
GONE_STATUSES = (404, 410)
#: How a page was found when the state keeps what listed it (a feed or sitemap that
#: answers 304 next time stands for it).
LISTINGS = ("sitemap", "feed")


def state_url(request: Request) -> str:
    """The URL a request's row is kept under: the page as the spiders planned it (canonical
    already), else the request's URL made canonical."""
    planned = request.meta.get(Meta.PAGE_URL)
    if planned:
        return str(planned)
    return normalize_url(request.url) or request.url


def is_discovery(request: Request) -> bool:
    return bool(request.meta.get(Meta.SKIP_URL_FILTER))


def asks_state(request: Request) -> bool:
    """Whether the request is sent with the validators its URL's row holds."""
    meta = request.meta
    if any(meta.get(key) for key in _NOT_CONDITIONAL):
        return False
    if meta.get("redirect_urls"):
        return False  # the validators belong to the URL first asked for
    # Not a home page read for its feed links, nor a spider's robots.txt.
    return not is_discovery(request) or bool(meta.get(Meta.DISCOVERY_DOCUMENT))


def read_ahead(crawler: Crawler, requests: list[Request]) -> None:
    """The rows of the URLs ``requests`` will ask for, read at once (a Redis state: one
    round trip for a batch of requests taken from the shared queue, not one per request)."""
    recrawl = crawl_state_of(crawler)
    if recrawl is None or recrawl.broken:
        return
    with contextlib.suppress(StateUnavailable):  # each request's own read says so
        recrawl.state.read_ahead(state_url(r) for r in requests if asks_state(r))


class ConditionalRequestMiddleware:
    """Downloader middleware: validators out, 304 and gone pages back (``CRAWL_STATE``)."""

    def __init__(self, crawler: Crawler) -> None:
        recrawl = crawl_state_of(crawler)
        if recrawl is None:
            raise switched_off("ConditionalRequestMiddleware", "CRAWL_STATE is not set")
        self.recrawl: Recrawl = recrawl

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ConditionalRequestMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        if not asks_state(request):
            return
        url = state_url(request)
        record = self.recrawl.state.get(url)
        if not is_discovery(request):
            # The pipeline stage asks again once the page is extracted: answered from here.
            self.recrawl.looked_up[url] = record
        if record is None or record.gone:
            return
        validators = record.validators
        if validators.etag:
            request.headers[b"If-None-Match"] = validators.etag
        since = validators.if_modified_since()
        if since:
            request.headers[b"If-Modified-Since"] = since
        if validators.etag or since:
            request.meta[Meta.CONDITIONAL] = True
            self.recrawl.inc_stat(Stat.RECRAWL_CONDITIONAL)

    def process_response(self, request: Request, response: Response) -> Response:
        if response.status != 200:
            self.recrawl.looked_up.pop(state_url(request), None)
        if response.status == 304 and request.meta.get(Meta.CONDITIONAL):
            if not is_discovery(request):
                self._not_modified(request, response)
            raise NotModified(f"not modified: {request.url}")
        if response.status in GONE_STATUSES and not is_discovery(request):
            self._maybe_gone(request)
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        self.recrawl.looked_up.pop(state_url(request), None)

    def _not_modified(self, request: Request, response: Response) -> None:
        url = state_url(request)
        headers = response.headers
        validators = Validators.from_headers(headers.get("ETag"), headers.get("Last-Modified"))
        listed = iso_to_epoch(request.meta.get(Meta.SOURCE_DATE))
        meta = request.meta
        source = meta.get(Meta.SOURCE_URL) if meta.get(Meta.DISCOVERED_VIA) in LISTINGS else None
        self.recrawl.write(self.recrawl.state.record_seen, url, validators, listed, source)
        self.recrawl.write(self.recrawl.visited, url, response, False)
        self.recrawl.outcome(site_of_request(request), RecrawlOutcome.NOT_MODIFIED)

    def _maybe_gone(self, request: Request) -> Any:
        url = state_url(request)
        record = self.recrawl.state.get(url)
        if record is None or record.gone:
            return
        self.recrawl.write(self.recrawl.state.mark_gone, url)
        self.recrawl.write(self.recrawl.visited, url, None, False)
        self.recrawl.outcome(site_of_request(request), RecrawlOutcome.GONE)
        raise PageGone(f"gone: {request.url}")
