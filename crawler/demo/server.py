"""A threaded HTTP server on 127.0.0.1 serving a :class:`~crawler.demo.site.Site` from memory.

It records every request (time, path, User-Agent, requests in flight) so that tests can check
politeness from the server's side.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from scrapy_maintext.demo.site import Route, Site, SiteOptions, build_site

#: Every answer takes at least this long, so that overlapping requests really overlap and a
#: concurrency violation is visible in the log.
SERVE_TIME = 0.05
#: Longest a request waits at a closed gate (s): a test that forgets to open it fails
#: with timeouts instead of hanging.
GATE_TIMEOUT = 120.0


@dataclass(frozen=True)
class Hit:
    time: float
    path: str
    user_agent: str
    in_flight: int
    status: int


@dataclass
class SiteServer:
    """Serve a site on 127.0.0.1 in a background thread: ``with SiteServer() as srv: ...``."""

    options: SiteOptions = field(default_factory=SiteOptions)
    port: int = 0
    #: A loopback address: 127.0.0.2 and up give sites on other hosts (other download slots).
    host: str = "127.0.0.1"
    hits: list[Hit] = field(default_factory=list)
    site: Site | None = None
    #: Answer in HTTP/1.1 and keep connections open, as real servers do. Off by default: the
    #: tests count connections and kill clients; benchmarks turn it on so that a new TCP
    #: connection per page does not cost the crawl CPU that a real site would not.
    keep_alive: bool = False

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._answered_429: set[str] = set()
        #: Requests wait here while it is clear: tests hold a site until every crawler
        #: process that should share it is up.
        self.gate = threading.Event()
        self.gate.set()
        self._httpd = ThreadingHTTPServer((self.host, self.port), self._handler())
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.site = build_site(self.base_url, self.options)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> SiteServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> SiteServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

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

    def _answer(self, path: str) -> Route:
        assert self.site is not None
        route = self.site.routes.get(path) or Route(b"<h1>Not found</h1>", status=404)
        if route.retry_after_once is not None and path not in self._answered_429:
            self._answered_429.add(path)
            return Route(
                b"slow down",
                "text/plain",
                route.retry_status,
                {"Retry-After": str(route.retry_after_once)},
                delay=route.delay,
            )
        return route

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if server.keep_alive else "HTTP/1.0"

            def do_GET(self) -> None:
                server.gate.wait(GATE_TIMEOUT)
                with server._lock:
                    server._in_flight += 1
                    in_flight = server._in_flight
                    route = server._answer(self.path)
                started = time.monotonic()
                time.sleep(SERVE_TIME + route.delay)
                try:
                    self._send(route)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a download timeout): nothing to answer
                finally:
                    with server._lock:
                        server._in_flight -= 1
                        ua = self.headers.get("User-Agent", "")
                        server.hits.append(Hit(started, self.path, ua, in_flight, route.status))

            def _send(self, route: Route) -> None:
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.body)))
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(route.body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler
