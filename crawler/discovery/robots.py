"""robots.txt: the Sitemap lines (obeying it is Scrapy's RobotsTxtMiddleware's job)."""

from __future__ import annotations

from protego import Protego
from scrapy_maintext.discovery.urls import absolute_http_url

#: robots.txt bodies beyond this are truncated before parsing (Google reads 500 KiB).
MAX_ROBOTS_BYTES = 500 * 1024


def sitemaps_from_robots(body: bytes, robots_url: str | None = None) -> list[str]:
    """Sitemap URLs from ``Sitemap:`` lines (relative ones resolved against ``robots_url``),
    in order, without duplicates."""
    text = body[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace")
    parser = Protego.parse(text)
    seen: dict[str, None] = {}
    for line in parser.sitemaps:
        url = absolute_http_url(line, robots_url)
        if url:
            seen.setdefault(url, None)
    return list(seen)
