"""The loopback universe of ``benchmarks.recrawl_scale``: many sites of many small articles.

Site ``i`` answers on its own loopback address (127.0.x.y, a download slot each), served with
every other site by one asyncio loop in a thread, HTTP/1.1 with connections kept open. Each
site has a robots.txt naming its sitemaps (one per 100 pages), the sitemaps (every entry with
its ``lastmod``) and the articles, each with text of its own. Every answer carries an ``ETag``
(a hash of the body) and a ``Last-Modified``, and a request whose ``If-None-Match`` or
``If-Modified-Since`` matches gets ``304 Not Modified``. :meth:`Universe.change` edits pages:
their revision and ``lastmod`` move, and with them their sitemap's. The server counts every
request by kind and status.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import formatdate, parsedate_to_datetime

from tests.many_sites import ManySites, page_body

#: Pages per sitemap.
SITEMAP_PAGES = 100
#: The first run's simulated time (epoch s); a page's first lastmod is an hour per page before.
T0 = int(datetime(2026, 11, 2, tzinfo=UTC).timestamp())


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


def _etag(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=8).hexdigest() + '"'


@dataclass
class Universe(ManySites):
    """``with Universe(sites, pages) as u: u.write_domains(path)``: the many sites' server and
    addresses (:class:`~tests.many_sites.ManySites`), answering as described above."""

    #: (site, page) -> (revision, modified) of every edited page; the others are revision 1.
    edits: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    #: Requests since the last :meth:`reset`, by "kind status" ("page 200", "sitemap 304").
    hits: Counter[str] = field(default_factory=Counter)

    @property
    def sites(self) -> int:
        return self.count

    @property
    def urls(self) -> int:
        return self.count * self.pages

    def reset(self) -> None:
        self.hits = Counter()

    def change(self, share: float, when: int, seed: int = 7) -> int:
        """Edit ``share`` of all pages at ``when`` (spread over the sites); how many."""
        rng = random.Random(seed)
        chosen = rng.sample(range(self.urls), round(share * self.urls))
        for n in chosen:
            key = (n % self.sites, n // self.sites)
            revision = self.edits.get(key, (1, 0))[0] + 1
            self.edits[key] = (revision, when)
        return len(chosen)

    # What a site serves.

    def revision(self, site: int, page: int) -> tuple[int, int]:
        return self.edits.get((site, page), (1, T0 - 3600 * (page + 1)))

    def page_body(self, site: int, page: int) -> bytes:
        """The many sites' page (a text of its own), with its revision in its article."""
        revision = f"<p>Revision {self.revision(site, page)[0]} of this story.</p></article>"
        return page_body(site, page).replace(b"</article>", revision.encode(), 1)

    def sitemap(self, site: int, chunk: int) -> tuple[bytes, int]:
        base = self.bases[site]
        pages = range(chunk * SITEMAP_PAGES, min(self.pages, (chunk + 1) * SITEMAP_PAGES))
        modified = [self.revision(site, p)[1] for p in pages]
        rows = "".join(
            f"<url><loc>{base}/story-{p}.html</loc><lastmod>{_iso(m)}</lastmod></url>"
            for p, m in zip(pages, modified, strict=True)
        )
        body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</urlset>'
        return body.encode(), max(modified)

    def robots(self, site: int) -> bytes:
        chunks = -(-self.pages // SITEMAP_PAGES)
        lines = "".join(f"Sitemap: {self.bases[site]}/sitemap-{c}.xml\n" for c in range(chunks))
        return f"User-agent: *\nAllow: /\n{lines}".encode()

    def document(self, site: int, path: str) -> tuple[str, bytes, str, int] | None:
        """(kind, body, content type, Last-Modified) of ``path``, or None (404)."""
        if path == "/robots.txt":
            return "robots", self.robots(site), "text/plain", T0 - 30 * 86_400
        if path.startswith("/sitemap-") and path.endswith(".xml"):
            number = path[len("/sitemap-") : -len(".xml")]
            if number.isdigit() and int(number) * SITEMAP_PAGES < self.pages:
                body, modified = self.sitemap(site, int(number))
                return "sitemap", body, "application/xml", modified
        if path.startswith("/story-") and path.endswith(".html"):
            number = path[len("/story-") : -len(".html")]
            if number.isdigit() and int(number) < self.pages:
                page = int(number)
                body = self.page_body(site, page)
                return "page", body, "text/html; charset=utf-8", self.revision(site, page)[1]
        return None

    # The server.

    def _respond(self, site: int, head: bytes) -> bytes:
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ", 2)[1]
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        found = self.document(site, path)
        if found is None:
            self.hits["other 404"] += 1
            body = b"<h1>Not found</h1>"
            return (
                f"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
        kind, body, content_type, modified = found
        tag = _etag(body)
        validators = f"ETag: {tag}\r\nLast-Modified: {formatdate(modified, usegmt=True)}\r\n"
        if _not_modified(headers, tag, modified):
            self.hits[f"{kind} 304"] += 1
            return f"HTTP/1.1 304 Not Modified\r\n{validators}\r\n".encode()
        self.hits[f"{kind} 200"] += 1
        return (
            f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n{validators}"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    async def _serve(
        self, index: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                writer.write(self._respond(index, head))
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()


def _not_modified(headers: dict[str, str], tag: str, modified: int) -> bool:
    """RFC 9110: If-None-Match decides when sent; else If-Modified-Since."""
    if "if-none-match" in headers:
        return tag in [t.strip() for t in headers["if-none-match"].split(",")]
    since = headers.get("if-modified-since")
    if since:
        try:
            return modified <= int(parsedate_to_datetime(since).timestamp())
        except (TypeError, ValueError):
            return False
    return False
