"""robots.txt kept between runs in the crawl state (``CRAWL_STATE``), and asked conditionally.

RFC 9309 (2.4) lets a crawler use a cached robots.txt for up to 24 hours. A recurring crawl
keeps each site's robots.txt with its validators: a run within ``ROBOTSTXT_KEEP_FOR``
seconds of the last answer (shorter when the answer's ``Cache-Control`` says so) does not
ask for it at all; a later run asks with ``If-None-Match`` / ``If-Modified-Since``, and a
``304`` reuses the kept body. An hourly run of an unchanged site thus asks robots.txt once a
day. Only answers that carry rules or say there are none (2xx, 4xx) are kept: a 5xx or an
unreachable site is asked again next run. Without ``CRAWL_STATE`` nothing is kept.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from scrapy.http import Request, Response, TextResponse
from scrapy_maintext.state.schedule import response_freshness
from scrapy_maintext.state.store import RobotsCopy
from scrapy_maintext.state.validators import Validators
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy_maintext.state.recrawl import Recrawl

logger = logging.getLogger(__name__)

#: ``Meta.ROBOTS_COPY`` of a robots.txt taken from the crawl state, or from Redis (another
#: worker of a shared crawl read it).
ROBOTS_FROM_STATE = "state"
ROBOTS_FROM_WORKERS = "workers"
#: ``Cache-Control`` that forbids using the answer unasked.
_NOT_TO_KEEP = re.compile(rb"no-cache|no-store|(?:^|[,\s])max-age\s*=\s*\"?0+\b", re.IGNORECASE)
#: A request that carries these was given them by :meth:`KeptRobots.ask_conditionally`.
_CONDITIONAL = (b"If-None-Match", b"If-Modified-Since")


@dataclass(frozen=True)
class KeptRobotsSettings:
    #: ``ROBOTSTXT_KEEP_FOR``: seconds a kept robots.txt is used without asking.
    keep_for: int

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> KeptRobotsSettings:
        return cls(keep_for=setting(crawler.settings, "ROBOTSTXT_KEEP_FOR"))


class KeptRobots:
    """The robots middleware's side of the crawl state: one lookup per site and run."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = KeptRobotsSettings.from_crawler(crawler)
        #: Kept copies too old to use unasked, by robots.txt URL, until their site answers.
        self._stale: dict[str, RobotsCopy] = {}
        self._recrawl: Recrawl | None = None
        self._opened = False

    def _state(self) -> Recrawl | None:
        if not self._opened:
            self._opened = True
            from scrapy_maintext.state.recrawl import crawl_state_of

            with contextlib.suppress(Exception):  # the crawl command said why, in one line
                self._recrawl = crawl_state_of(self.crawler)
        recrawl = self._recrawl
        return None if recrawl is None or recrawl.broken else recrawl

    def fresh_copy(self, request: Request) -> Response | None:
        """The kept robots.txt of the site of ``request`` as a response, if it may be used
        without asking; an older one is remembered for the conditional request."""
        recrawl = self._state()
        if recrawl is None:
            return None
        url = robots_url(request)
        try:
            copy = recrawl.state.robots(url)
        except Exception:
            logger.warning("robots.txt of %s: the kept copy could not be read", url, exc_info=True)
            return None
        if copy is None:
            return None
        if not copy.fresh(recrawl.clock.now()):
            self._stale[url] = copy
            return None
        self._inc(Stat.ROBOTS_KEPT)
        return _response(copy, copy_request(request, ROBOTS_FROM_STATE))

    def ask_conditionally(self, request: Request) -> None:
        """Scrapy's robots.txt request of a site whose kept copy is too old to use unasked:
        ``If-None-Match`` / ``If-Modified-Since`` of that copy."""
        copy = self._stale.get(request.url)
        if copy is None:
            return
        if copy.validators.etag:
            request.headers.setdefault(b"If-None-Match", copy.validators.etag)
        since = copy.validators.if_modified_since()
        if since:
            request.headers.setdefault(b"If-Modified-Since", since)

    def answered(self, response: Response) -> Response:
        """A robots.txt answer, before it is parsed: a 304 to a conditional request is the
        kept copy (kept again, from now); a 2xx or 4xx is kept for the next runs."""
        recrawl = self._state()
        if recrawl is None:
            return response
        url = asked_url(response)
        stale = self._stale.pop(url, None)
        now = recrawl.clock.now()
        fresh_for = self._fresh_for(response, now)
        if response.status == 304 and stale is not None and _was_conditional(response):
            self._inc(Stat.ROBOTS_NOT_MODIFIED)
            kept = replace(stale, checked=now, fresh_for=fresh_for)
            recrawl.write(recrawl.state.keep_robots, kept)
            return _response(kept, response.request or Request(url))
        if response.status < 500 and response.status != 304:
            body = response.body if response.status < 300 else b""
            validators = Validators.from_headers(
                response.headers.get("ETag"), response.headers.get("Last-Modified")
            )
            copy = RobotsCopy(url, response.status, body, validators, now, fresh_for)
            recrawl.write(recrawl.state.keep_robots, copy)
        return response

    def _fresh_for(self, response: Response, now: int) -> int:
        """``ROBOTSTXT_KEEP_FOR``, or less when the answer's ``Cache-Control`` / ``Expires``
        says so (``no-cache``: asked every run)."""
        headers = response.headers
        if _NOT_TO_KEEP.search(headers.get("Cache-Control") or b""):
            return 0
        said = response_freshness(headers, now)
        return self.config.keep_for if said is None else min(said, self.config.keep_for)

    def _inc(self, name: str) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(name)


def robots_url(request: Request) -> str:
    """The robots.txt URL of the site of ``request``."""
    from scrapy.utils.httpobj import urlparse_cached

    parts = urlparse_cached(request)
    return f"{parts.scheme}://{parts.netloc}/robots.txt"


def copy_request(request: Request, origin: str) -> Request:
    """The robots.txt request a copy answers, in the download slot of the site's
    ``request`` (a shared crawl keys the site's pace by it)."""
    meta: dict[str, object] = {Meta.ROBOTS_COPY: origin}
    if Meta.DOWNLOAD_SLOT in request.meta:
        meta[Meta.DOWNLOAD_SLOT] = request.meta[Meta.DOWNLOAD_SLOT]
    return Request(robots_url(request), meta=meta)


def asked_url(response: Response) -> str:
    """The robots.txt URL that was asked (before any redirect): the site's key."""
    request = response.request
    if request is None:
        return response.url
    redirected = request.meta.get("redirect_urls")
    return str(redirected[0]) if redirected else request.url


def _was_conditional(response: Response) -> bool:
    request = response.request
    return request is not None and any(name in request.headers for name in _CONDITIONAL)


def _response(copy: RobotsCopy, request: Request) -> Response:
    return TextResponse(
        url=copy.url, status=copy.status, body=copy.body, encoding="utf-8", request=request
    )
