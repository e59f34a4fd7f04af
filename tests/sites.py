"""The demo site as the tests serve it: a request log, slow answers, 429s and hostile pages.

:class:`TestSiteServer` is the demo's :class:`~scrapy_maintext.demo.server.SiteServer` that
also records every request (time, path, User-Agent, requests in flight, status), so that tests
check politeness from the server's side; every answer takes :data:`SERVE_TIME`, and a route
may answer 429/503 with Retry-After once or take seconds to answer (:class:`Route`). Its
:attr:`~TestSiteServer.gate` holds requests until a test opens it. :func:`make_hostile` adds
the broken and hostile corners a real crawl meets (entity bombs, gzip bombs, 429s, redirect
loops, ...) to a served site.
"""

from __future__ import annotations

import contextlib
import gzip
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler
from typing import Any

from scrapy_maintext.demo import site as demo_site
from scrapy_maintext.demo.content import make_articles
from scrapy_maintext.demo.server import SiteServer, send
from scrapy_maintext.demo.site import Site, SiteOptions, page_html

__all__ = [
    "BILLION_LAUGHS",
    "GATE_TIMEOUT",
    "HOSTILE_PAGES",
    "SERVE_TIME",
    "SLOW_PAGE_DELAY",
    "XXE",
    "Hit",
    "Route",
    "Site",
    "SiteOptions",
    "TestSiteServer",
    "make_hostile",
    "page_html",
    "serve_with_page",
]

#: Every answer takes at least this long, so that overlapping requests really overlap and a
#: concurrency violation is visible in the log.
SERVE_TIME = 0.05
#: Longest a request waits at a closed gate (s): a test that forgets to open it fails
#: with timeouts instead of hanging.
GATE_TIMEOUT = 120.0


@dataclass
class Route(demo_site.Route):
    """A demo route that may also answer 429 (or 503) once, or answer late."""

    #: Answer ``retry_status`` with this Retry-After (seconds) the first time, then normally.
    retry_after_once: int | None = None
    retry_status: int = 429
    #: Seconds to wait before answering (a slow or hanging server).
    delay: float = 0.0


@dataclass
class StreamedRoute(Route):
    """``body`` repeated to ``size`` bytes, sent without a Content-Length (the client learns
    the size only as the bytes arrive), the connection closed at the end."""

    size: int = 0


@dataclass(frozen=True)
class Hit:
    time: float
    path: str
    user_agent: str
    in_flight: int
    status: int
    referer: str = ""


@dataclass
class TestSiteServer(SiteServer):
    """The demo server with a request log, :data:`SERVE_TIME` per answer and a gate."""

    __test__ = False  # not a test class, whatever pytest thinks of its name

    hits: list[Hit] = field(default_factory=list)
    #: Bytes each :class:`StreamedRoute` sent before it ended or the client went away.
    streamed: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._answered_429: set[str] = set()
        #: Requests wait here while it is clear: tests hold a site until every crawler
        #: process that should share it is up.
        self.gate = threading.Event()
        self.gate.set()
        super().__post_init__()

    def start(self) -> TestSiteServer:
        super().start()
        return self

    def __enter__(self) -> TestSiteServer:
        return self.start()

    def reset(self, idle_timeout: float = 10.0) -> None:
        """Wait until no request is being answered (a client that timed out leaves its
        handler running), then forget the request log and which pages answered 429."""
        deadline = time.monotonic() + idle_timeout
        while self._in_flight and time.monotonic() < deadline:
            time.sleep(0.05)
        with self._lock:
            self.hits.clear()
            self._answered_429.clear()

    def paths(self) -> list[str]:
        with self._lock:
            return [h.path for h in self.hits]

    def _answer(self, path: str) -> demo_site.Route:
        route = self.route(path)
        retry_after = getattr(route, "retry_after_once", None)
        if retry_after is not None and path not in self._answered_429:
            self._answered_429.add(path)
            return Route(
                b"slow down",
                "text/plain",
                getattr(route, "retry_status", 429),
                {"Retry-After": str(retry_after)},
                delay=getattr(route, "delay", 0.0),
            )
        return route

    def respond(self, request: BaseHTTPRequestHandler) -> None:
        self.gate.wait(GATE_TIMEOUT)
        with self._lock:
            self._in_flight += 1
            in_flight = self._in_flight
            route = conditional(self._answer(request.path), request.headers)
        started = time.monotonic()
        time.sleep(SERVE_TIME + getattr(route, "delay", 0.0))
        try:
            if isinstance(route, StreamedRoute):
                self.streamed[request.path] = stream(request, route)
            else:
                send(request, route)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a download timeout): nothing to answer
        finally:
            with self._lock:
                self._in_flight -= 1
                ua = request.headers.get("User-Agent", "")
                referer = request.headers.get("Referer", "")
                self.hits.append(Hit(started, request.path, ua, in_flight, route.status, referer))


def stream(request: BaseHTTPRequestHandler, route: StreamedRoute) -> int:
    """Send ``route`` until its size or until the client goes away; the bytes sent."""
    request.send_response(route.status)
    request.send_header("Content-Type", route.content_type)
    request.send_header("Connection", "close")
    request.end_headers()
    request.close_connection = True
    sent = 0
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        while sent < route.size:
            request.wfile.write(route.body)
            sent += len(route.body)
    return sent


def conditional(route: demo_site.Route, headers: Any) -> demo_site.Route:
    """``304 Not Modified`` when the request's validators match the route's ``ETag`` or
    ``Last-Modified`` header (RFC 9110: If-None-Match first), else ``route``."""
    etag, modified = route.headers.get("ETag"), route.headers.get("Last-Modified")
    if route.status != 200 or not (etag or modified):
        return route
    kept = {k: v for k, v in route.headers.items() if k in ("ETag", "Last-Modified")}
    not_modified = Route(b"", route.content_type, 304, kept)
    asked_tag = headers.get("If-None-Match")
    if asked_tag is not None:
        return not_modified if etag and asked_tag.strip() == etag else route
    since = headers.get("If-Modified-Since")
    if since and modified:
        try:
            if parsedate_to_datetime(modified) <= parsedate_to_datetime(since):
                return not_modified
        except (TypeError, ValueError):
            return route
    return route


#: Pages of the hostile site that must never become items.
HOSTILE_PAGES = (
    "/busy.html",
    "/loop-a.html",
    "/gone.html",
    "/error.html",
    "/binary.html",
    "/slow.html",
)

#: How long /slow.html takes to answer: longer than the tests' DOWNLOAD_TIMEOUT.
SLOW_PAGE_DELAY = 2.5

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&lol3;</loc></url></urlset>"""

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<rss version="2.0"><channel><item><link>&xxe;</link></item></channel></rss>"""

#: Sitemaps robots.txt names besides the index: all hostile, and one missing.
HOSTILE_SITEMAPS = ("bomb.xml", "huge.xml.gz", "broken.xml", "latin1.xml", "missing.xml")


def _hostile_routes(base: str, site: Site) -> dict[str, Route]:
    bomb = gzip.compress(b"<urlset>" + b" " * (60 * 1024 * 1024) + b"</urlset>")
    busy = page_html(make_articles(1, seed=99)[0], [])
    first = f"{base}/articles/{site.articles[0].slug}.html"
    latin1 = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<!-- caf\xe9 --><urlset '
        b'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        b'xmlns:xhtml="http://www.w3.org/1999/xhtml"><url><loc>'
        + first.encode()
        + b"</loc></url></urlset>"
    )
    return {
        "/sitemaps/bomb.xml": Route(BILLION_LAUGHS, "application/xml"),
        "/sitemaps/huge.xml.gz": Route(bomb, "application/x-gzip"),
        "/sitemaps/broken.xml": Route(b"<urlset><url><loc>", "application/xml"),
        "/sitemaps/latin1.xml": Route(latin1, "application/xml"),
        "/xxe.xml": Route(XXE, "application/rss+xml"),
        "/busy.html": Route(busy.encode(), retry_after_once=1),
        "/loop-a.html": Route(b"", status=302, headers={"Location": "/loop-b.html"}),
        "/loop-b.html": Route(b"", status=302, headers={"Location": "/loop-a.html"}),
        "/gone.html": Route(b"not here", status=404),
        "/error.html": Route(b"boom", status=500),
        "/binary.html": Route(bytes(range(256)) * 64, "image/png"),
        "/slow.html": Route(b"<html><body><p>Finally.</p></body></html>", delay=SLOW_PAGE_DELAY),
    }


def make_hostile(server: SiteServer) -> SiteServer:
    """Add the hostile corners to ``server``'s site (built with sitemaps and feeds): hostile
    sitemaps named by robots.txt, hostile pages listed in the pages sitemap, an XXE feed
    announced on the home page, and the pages behind them."""
    site, base = server.site, server.base_url
    assert site is not None
    routes = site.routes
    robots = routes["/robots.txt"]
    extra = "".join(f"Sitemap: {base}/sitemaps/{name}\n" for name in HOSTILE_SITEMAPS)
    routes["/robots.txt"] = Route(robots.body + extra.encode(), robots.content_type)
    home = routes["/"]
    xxe = b'<link rel="alternate" type="application/rss+xml" href="/xxe.xml"></head>'
    routes["/"] = Route(home.body.replace(b"</head>", xxe, 1), home.content_type)
    pages = routes["/sitemaps/pages.xml.gz"]
    listed = "".join(f"<url><loc>{base}{path}</loc></url>" for path in HOSTILE_PAGES)
    urlset = gzip.decompress(pages.body).replace(b"</urlset>", listed.encode() + b"</urlset>")
    routes["/sitemaps/pages.xml.gz"] = Route(gzip.compress(urlset), pages.content_type)
    routes.update(_hostile_routes(base, site))
    site.expected_pages.add("/busy.html")
    return server


@contextlib.contextmanager
def serve_with_page(path: str, body: bytes) -> Iterator[TestSiteServer]:
    """The demo site (two articles, no feeds, no delay) with the page ``body`` at ``path``
    beside its articles, listed in its sitemap."""
    with TestSiteServer(SiteOptions(articles=2, feeds=False, crawl_delay=None)) as server:
        site = server.site
        assert site is not None
        site.routes[path] = Route(body)
        listed = site.routes["/sitemaps/pages.txt"].body.decode()
        listed += f"{server.base_url}{path}\n"
        site.routes["/sitemaps/pages.txt"] = Route(listed.encode(), "text/plain")
        yield server
