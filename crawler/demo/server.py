"""A threaded HTTP server on 127.0.0.1 serving a :class:`~crawler.demo.site.Site` from memory.

The test suite extends it (``tests/sites.py``) with a request log, slow answers and a gate;
:meth:`SiteServer.respond` is the hook it wraps.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from scrapy_maintext.demo.site import Route, Site, SiteOptions, build_site

NOT_FOUND = Route(b"<h1>Not found</h1>", status=404)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    #: Connections the kernel holds until they are accepted (socketserver's default is 5):
    #: a busy accept loop then delays a connection instead of refusing it.
    request_queue_size = 128


@dataclass
class SiteServer:
    """Serve a site on 127.0.0.1 in a background thread: ``with SiteServer() as srv: ...``."""

    options: SiteOptions = field(default_factory=SiteOptions)
    port: int = 0
    #: A loopback address: 127.0.0.2 and up give sites on other hosts (other download slots).
    host: str = "127.0.0.1"
    site: Site | None = None
    #: Answer in HTTP/1.1 and keep connections open, as real servers do. Off by default (one
    #: connection per request); benchmarks turn it on so that a new TCP connection per page
    #: does not cost the crawl CPU that a real site would not.
    keep_alive: bool = False

    def __post_init__(self) -> None:
        self._httpd = _HTTPServer((self.host, self.port), self._handler())
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

    def route(self, path: str) -> Route:
        """What ``path`` (with its query) answers: its route, else a 404 page."""
        assert self.site is not None
        return self.site.routes.get(path) or NOT_FOUND

    def respond(self, request: BaseHTTPRequestHandler) -> None:
        """Answer one GET; runs in the request's handler thread."""
        # A client that gave up (a download timeout) gets no answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            send(request, self.route(request.path))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if server.keep_alive else "HTTP/1.0"

            def do_GET(self) -> None:
                server.respond(self)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


def send(request: BaseHTTPRequestHandler, route: Route) -> None:
    """Write ``route`` as the answer to ``request``."""
    request.send_response(route.status)
    request.send_header("Content-Type", route.content_type)
    request.send_header("Content-Length", str(len(route.body)))
    for name, value in route.headers.items():
        request.send_header(name, value)
    request.end_headers()
    request.wfile.write(route.body)
