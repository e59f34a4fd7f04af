"""Sites behind endless sitemap index trees, as broken CMSs and traps serve them.

:class:`FanOutServer`: every index lists 20 child indexes (old ``lastmod``) without end; the
root also lists, last, the sitemap of the site's articles with the newest ``lastmod``.

:class:`IndexTreeServer` (issue 35): every index lists 20 child indexes and, last, the one
ordinary sitemap of the site's articles, all undated. The articles' sitemap is on the first
index read; a depth-first walk reads indexes until the site's sitemap budget is spent.

Both serve the demo site's articles; robots.txt names the root index and, when
``crawl_delay`` is set, asks for it as ``Crawl-delay``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.sites import Route, TestSiteServer

FAN_OUT = 20
#: Articles listed by the one good sitemap.
GOOD_PAGES = 5

_INDEX = '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
_URLSET = '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'


@dataclass
class _TreeServer(TestSiteServer):
    """Robots.txt naming ``/tree/root.xml``, and the sitemap of the first articles."""

    __test__ = False
    #: Seconds robots.txt asks for between requests (None: no Crawl-delay line).
    crawl_delay: float | None = None

    def route(self, path: str) -> Route:
        base = self.base_url
        if path == "/robots.txt":
            delay = "" if self.crawl_delay is None else f"Crawl-delay: {self.crawl_delay:g}\n"
            robots = f"User-agent: *\n{delay}Sitemap: {base}/tree/root.xml\n"
            return Route(robots.encode(), "text/plain")
        if path.startswith("/tree/") and path.endswith(".xml"):
            name = path.removeprefix("/tree/").removesuffix(".xml")
            return Route(
                (_INDEX + self.children(name) + "</sitemapindex>").encode(), "application/xml"
            )
        if path == "/posts.xml":
            assert self.site is not None
            urls = "".join(
                f"<url><loc>{base}/articles/{a.slug}.html</loc></url>"
                for a in self.site.articles[:GOOD_PAGES]
            )
            return Route(f"{_URLSET}{urls}</urlset>".encode(), "application/xml")
        return super().route(path)

    def children(self, name: str) -> str:
        """The ``<sitemap>`` elements of the index ``/tree/{name}.xml``."""
        raise NotImplementedError


@dataclass
class FanOutServer(_TreeServer):
    """20 old child indexes per index; the root lists the articles' sitemap last, newest."""

    __test__ = False

    def children(self, name: str) -> str:
        children = "".join(
            f"<sitemap><loc>{self.base_url}/tree/{name}-{k}.xml</loc>"
            f"<lastmod>2020-01-{1 + k:02d}</lastmod></sitemap>"
            for k in range(FAN_OUT)
        )
        if name == "root":
            children += (
                f"<sitemap><loc>{self.base_url}/posts.xml</loc>"
                "<lastmod>2026-05-01</lastmod></sitemap>"
            )
        return children


@dataclass
class IndexTreeServer(_TreeServer):
    """20 undated child indexes per index, and last the same articles' sitemap."""

    __test__ = False

    def children(self, name: str) -> str:
        base = self.base_url
        indexes = "".join(
            f"<sitemap><loc>{base}/tree/{name}-{k}.xml</loc></sitemap>" for k in range(FAN_OUT)
        )
        return indexes + f"<sitemap><loc>{base}/posts.xml</loc></sitemap>"
