"""Which of a rendered page's requests may go out (Scrapy-free).

A page's script reaches only the page's own site (scheme, host and port): every other host
is refused, and with it every private, loopback, link-local or cloud metadata address a
page could point the browser at (the page's own host is the one address it may use, as the
crawl did). Pictures, media, fonts, stylesheets and the like are never downloaded: the text
does not need them. The main document is the body already fetched; the page may not
navigate away, and its requests and bytes are capped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import urlsplit


class Blocked(StrEnum):
    """Why a browser request was refused (``render/blocked/<why>``)."""

    OTHER_HOST = "other_host"
    SCHEME = "scheme"
    ROBOTS = "robots"
    RESOURCE_TYPE = "resource_type"
    NAVIGATION = "navigation"
    TOO_MANY_REQUESTS = "too_many_requests"
    TOO_MANY_BYTES = "too_many_bytes"
    REDIRECT = "redirect"
    DEADLINE = "deadline"
    POPUP = "popup"
    WEBSOCKET = "websocket"


#: Playwright resource types a render fetches: documents (same-site frames), scripts and
#: the data they ask for. Everything else (image, media, font, stylesheet, texttrack,
#: websocket, eventsource, manifest, other) is refused.
FETCHED_TYPES = frozenset({"document", "script", "xhr", "fetch"})
#: Redirects a subrequest may take, each checked like a request of its own.
MAX_REDIRECTS = 3


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


@dataclass
class PagePolicy:
    """One rendered page's allowance: its site, and what it has spent."""

    page_url: str
    max_requests: int
    max_bytes: int
    requests: int = 0
    bytes: int = 0
    blocked: dict[str, int] = field(default_factory=dict)

    def check(self, url: str, resource_type: str, navigation: bool, main_frame: bool) -> str | None:
        """Why the request may not go out, or None (robots.txt is asked apart)."""
        if not url.startswith(("http://", "https://")):
            return Blocked.SCHEME
        if origin(url) != origin(self.page_url):
            return Blocked.OTHER_HOST
        if navigation and main_frame:
            return Blocked.NAVIGATION  # the page itself was served already: no leaving it
        if resource_type not in FETCHED_TYPES:
            return Blocked.RESOURCE_TYPE
        if self.requests >= self.max_requests:
            return Blocked.TOO_MANY_REQUESTS
        if self.bytes >= self.max_bytes:
            return Blocked.TOO_MANY_BYTES
        return None

    def redirect_allowed(self, url: str) -> bool:
        """A subrequest's redirect target: the page's own site only."""
        return url.startswith(("http://", "https://")) and origin(url) == origin(self.page_url)

    def take(self) -> bool:
        """Count a request about to go out; False when the page has made its last one (a
        request is counted when admitted, so a burst of them cannot pass the cap)."""
        if self.requests >= self.max_requests:
            return False
        self.requests += 1
        return True

    def allowance(self) -> int:
        """Bytes the page may still load."""
        return self.max_bytes - self.bytes

    def spent(self, size: int) -> None:
        self.bytes += size

    def refuse(self, why: str) -> None:
        self.blocked[why] = self.blocked.get(why, 0) + 1
