"""robots.txt: the Sitemap lines (obeying it is Scrapy's RobotsTxtMiddleware's job)."""

from __future__ import annotations

from protego import Protego

#: robots.txt bodies beyond this are truncated before parsing (Google reads 500 KiB).
MAX_ROBOTS_BYTES = 500 * 1024


def sitemaps_from_robots(body: bytes) -> list[str]:
    """Absolute sitemap URLs from ``Sitemap:`` lines, in order, without duplicates."""
    text = body[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace")
    parser = Protego.parse(text)
    seen: dict[str, None] = {}
    for url in parser.sitemaps:
        url = url.strip()
        if url.startswith(("http://", "https://")):
            seen.setdefault(url, None)
    return list(seen)
