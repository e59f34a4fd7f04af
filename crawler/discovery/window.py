"""Which sites of a broad crawl are under way: at most a window of them in discovery or
with planned pages not yet handed to the downloader, the others waiting their turn."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

#: Sites under way per request the crawl may have in flight (``CONCURRENT_REQUESTS``), when
#: ``DISCOVERY_SITES_AT_ONCE`` is 0: a site sends one request at a time, and waits its delay.
SITES_PER_REQUEST = 4


def sites_at_once(value: int, concurrent_requests: int) -> int:
    """The window's size for the setting ``value``: 0 (the default) gives
    :data:`SITES_PER_REQUEST` sites per request in flight, a negative value every site
    (returned as 0), a positive value itself."""
    if value < 0:
        return 0
    return value or SITES_PER_REQUEST * max(concurrent_requests, 1)


@dataclass(slots=True)
class SiteWindow:
    """Sites started in order, at most ``limit`` of them under way at a time (``limit``
    of 0: every site at once). A site is under way from its first discovery request until
    the spider says it is done (its discovery answered and each planned page handed to
    the downloader); the next waiting site then starts. A crawl of ten thousand sites
    thus holds the sitemap parses, plans, download slots and connections of a window of
    them, not of all of them (issue 47)."""

    limit: int
    waiting: deque[str] = field(default_factory=deque)
    under_way: set[str] = field(default_factory=set)
    #: The most sites under way at once so far.
    most: int = 0

    @classmethod
    def of(cls, sites: Iterable[str], limit: int) -> SiteWindow:
        return cls(max(limit, 0), deque(sites))

    def admit(self, room: int | None = None) -> list[str]:
        """The waiting sites to start now: as many as the window has room for, or
        ``room`` more whatever the window holds."""
        if room is None:
            room = len(self.waiting) if self.limit == 0 else self.limit - len(self.under_way)
        started: list[str] = []
        while self.waiting and len(started) < room:
            site = self.waiting.popleft()
            self.under_way.add(site)
            started.append(site)
        self.most = max(self.most, len(self.under_way))
        return started

    def done(self, site: str) -> list[str]:
        """``site`` is done: the waiting sites to start in its place."""
        if site not in self.under_way:
            return []
        self.under_way.discard(site)
        return self.admit()

    def when_idle(self, is_done: Callable[[str], bool]) -> list[str]:
        """The crawl went idle: the sites under way that ``is_done`` says are done leave,
        and at least one waiting site starts (an idle crawl never ends with sites left)."""
        self.under_way = {site for site in self.under_way if not is_done(site)}
        started = self.admit()
        return started or self.admit(1)
