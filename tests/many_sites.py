"""Many small sites on loopback addresses, for broad crawls: one address per site
(127.0.1.1, 127.0.1.2, ...: a download slot each), served by one asyncio loop in a thread.

Each site has a robots.txt with a ``Crawl-delay`` and its sitemap, a sitemap of
``pages`` pages, and the pages, each with text of its own (no near-duplicates across sites).
The server answers HTTP/1.1 and keeps connections open, as real servers do: a crawler that
keeps every site's connection open runs out of file descriptors on a broad crawl.
"""

from __future__ import annotations

import asyncio
import random
import resource
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The words of the pages' text.
TEXT = """river valley council harbour library market bridge school winter summer railway
museum garden festival station orchard mill tower village forest meadow road storm harvest
ferry chapel quarry lantern workshop parish"""
WORDS = TEXT.split()


def page_body(site: int, page: int) -> bytes:
    """An article page whose text no other page of any site has."""
    rng = random.Random(site * 1000 + page)
    paragraphs = "".join(
        "<p>" + " ".join(rng.choice(WORDS) for _ in range(40)).capitalize() + ".</p>"
        for _ in range(6)
    )
    title = f"Site {site}, story {page}: the {rng.choice(WORDS)} and the {rng.choice(WORDS)}"
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"</head><body><nav><a href='/'>Home</a></nav><article><h1>{title}</h1>{paragraphs}"
        "</article><footer>Footer of the site</footer></body></html>"
    ).encode()


def address(index: int) -> str:
    """The loopback address of site ``index`` (0-based): 127.0.1.1 and up."""
    return f"127.0.{1 + index // 250}.{1 + index % 250}"


@dataclass
class ManySites:
    """``with ManySites(300) as sites: sites.write_domains(path)``."""

    count: int
    pages: int = 2
    crawl_delay: float = 0.5
    #: Base URL of each site, once serving.
    bases: list[str] = field(default_factory=list)
    requests: int = 0
    #: Connections open now, and the most open at once (the crawler's side of each is a
    #: file descriptor of the crawl process).
    connections: int = 0
    most_connections: int = 0
    #: Every request as it arrived: (time.monotonic(), site index, path).
    log: list[tuple[float, int, str]] = field(default_factory=list)
    #: Requests wait while it is clear (tests hold the sites until every worker is up).
    gate: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.gate.set()
        self._loop = asyncio.new_event_loop()
        self._servers: list[asyncio.Server] = []
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> ManySites:
        # This process holds a listening socket per site and the server side of every
        # connection the crawl keeps open.
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < 3 * self.count + 100:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(60)
        return self

    def __exit__(self, *exc: Any) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def write_domains(self, path: Path) -> Path:
        path.write_text("".join(f"{base}\n" for base in self.bases), encoding="utf-8")
        return path

    @property
    def expected(self) -> int:
        return self.count * self.pages

    async def _start(self) -> None:
        for index in range(self.count):
            server = await asyncio.start_server(
                lambda r, w, i=index: self._serve(i, r, w), address(index), 0
            )
            port = server.sockets[0].getsockname()[1]
            self._servers.append(server)
            self.bases.append(f"http://{address(index)}:{port}")

    async def _stop(self) -> None:
        for server in self._servers:
            server.close()
        for server in self._servers:
            await server.wait_closed()

    def routes(self, index: int) -> Iterator[tuple[str, bytes, str]]:
        base = self.bases[index]
        robots = f"User-agent: *\nCrawl-delay: {self.crawl_delay}\nSitemap: {base}/sitemap.xml\n"
        yield "/robots.txt", robots.encode(), "text/plain"
        urls = "".join(f"<url><loc>{base}/story-{p}.html</loc></url>" for p in range(self.pages))
        sitemap = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        yield "/sitemap.xml", sitemap.encode(), "application/xml"

    def answer(self, index: int, path: str) -> tuple[int, bytes, str]:
        for route, body, kind in self.routes(index):
            if path == route:
                return 200, body, kind
        if path.startswith("/story-") and path.endswith(".html"):
            number = path.removeprefix("/story-").removesuffix(".html")
            if number.isdigit() and int(number) < self.pages:
                return 200, page_body(index, int(number)), "text/html; charset=utf-8"
        return 404, b"<h1>Not found</h1>", "text/html"

    async def _serve(
        self, index: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """HTTP/1.1 GETs on one connection, kept open until the client closes it."""
        self.connections += 1
        self.most_connections = max(self.most_connections, self.connections)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                arrived = time.monotonic()
                while not self.gate.is_set():
                    await asyncio.sleep(0.05)
                    arrived = time.monotonic()
                path = head.split(b" ", 2)[1].decode("latin-1")
                self.log.append((arrived, index, path))
                self.requests += 1
                status, body, kind = self.answer(index, path)
                writer.write(
                    f"HTTP/1.1 {status} {'OK' if status == 200 else 'Not Found'}\r\n"
                    f"Content-Type: {kind}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, IndexError):
            pass
        finally:
            self.connections -= 1
            writer.close()
