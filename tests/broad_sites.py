"""Many tiny sites on loopback addresses (127.0.x.y), one small server thread per address.

Each site has a robots.txt naming its sitemap, a sitemap of ``pages`` articles and the
articles, each with its own text (no two sites alike, so no page is a near-duplicate of
another site's). A site may answer its pages with 404 (``missing``), and addresses listed in
``dead`` have no server at all (connection refused). ``crawl_delay`` puts a Crawl-delay line
in every robots.txt; ``hits`` collects (site, path) of every request.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_SYLLABLES = ["ha", "bor", "li", "bra", "coun", "cil", "ri", "ver", "mar", "ket", "scho"]
_SYLLABLES += ["ol", "bri", "dge", "gar", "den", "rail", "way", "mu", "se", "um", "the"]


def address(index: int) -> str:
    """The loopback address of site ``index``: 127.0.1.1, 127.0.1.2, ... 127.0.2.1, ..."""
    return f"127.0.{1 + index // 250}.{1 + index % 250}"


def article(site: int, page: int) -> bytes:
    """A page of its own: words drawn from syllables, seeded by site and page."""
    rng = random.Random(site * 1000 + page)

    def sentence() -> str:
        words = ("".join(rng.choices(_SYLLABLES, k=rng.randint(1, 3))) for _ in range(14))
        return " ".join(words).capitalize() + "."

    paragraphs = "".join(f"<p>{' '.join(sentence() for _ in range(4))}</p>" for _ in range(6))
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Story {page} of site {site}</title></head><body><nav>Home | News</nav>"
        f"<article><h1>Story {page} of site {site}</h1>{paragraphs}</article>"
        f"<footer>Contact us</footer></body></html>"
    ).encode()


class _Handler(BaseHTTPRequestHandler):
    site = 0
    pages = 5
    missing = False
    crawl_delay: float | None = None
    #: (site, path) of every request, when the caller asks for them.
    hits: list[tuple[int, str]] | None = None

    def do_GET(self) -> None:
        if self.hits is not None:
            self.hits.append((self.site, self.path))  # list.append: one step, thread-safe
        host = self.headers.get("Host", "")
        base = f"http://{host}"
        if self.path == "/robots.txt":
            delay = f"Crawl-delay: {self.crawl_delay:g}\n" if self.crawl_delay else ""
            robots = f"User-agent: *\n{delay}Sitemap: {base}/sitemap.xml\n"
            self._send(robots.encode(), "text/plain")
        elif self.path == "/sitemap.xml":
            urls = "".join(
                f"<url><loc>{base}/story-{page}.html</loc><lastmod>2026-05-{1 + page:02d}</lastmod>"
                "</url>"
                for page in range(self.pages)
            )
            body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
            self._send(body.encode(), "application/xml")
        elif self.path.startswith("/story-") and not self.missing:
            page = int(self.path.removeprefix("/story-").removesuffix(".html"))
            self._send(article(self.site, page), "text/html; charset=utf-8")
        else:
            self._send(b"not found", "text/plain", 404)

    def _send(self, body: bytes, content_type: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def broad_sites(
    count: int,
    pages: int = 5,
    dead: frozenset[int] = frozenset(),
    missing: frozenset[int] = frozenset(),
    crawl_delay: float | None = None,
    hits: list[tuple[int, str]] | None = None,
) -> Iterator[list[str]]:
    """Base URLs of ``count`` sites (those of ``dead`` with no server behind them)."""
    servers: list[ThreadingHTTPServer] = []
    urls = []
    try:
        for index in range(count):
            if index in dead:
                urls.append(f"http://{address(index)}:9")
                continue
            attributes = {
                "site": index,
                "pages": pages,
                "missing": index in missing,
                "crawl_delay": crawl_delay,
                "hits": hits,
            }
            handler = type("Site", (_Handler,), attributes)
            server = ThreadingHTTPServer((address(index), 0), handler)
            server.daemon_threads = True
            servers.append(server)
            threading.Thread(target=server.serve_forever, args=(0.5,), daemon=True).start()
            urls.append(f"http://{address(index)}:{server.server_address[1]}")
        yield urls
    finally:
        # In parallel: each shutdown waits for its server's next poll.
        with ThreadPoolExecutor(max_workers=64) as pool:
            list(pool.map(lambda server: server.shutdown(), servers))
        for server in servers:
            server.server_close()
