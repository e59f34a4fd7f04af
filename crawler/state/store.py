"""What every crawl state offers (``CRAWL_STATE``): the records, and the one interface.

Scrapy-free. Two backends implement :class:`StateStore`: the SQLite file of one machine
(:class:`~scrapy_maintext.state.crawl_state.CrawlState`, the default) and a named state in
Redis shared by the workers of a distributed crawl
(:class:`~scrapy_maintext.state.redis.state.RedisCrawlState`). The rules of a recurring crawl
(revisions, text hashes, gone pages, listed dates, fingerprints, the adaptive schedule) are
written once against this interface; the backends only store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from scrapy_maintext.state.validators import Validators


class CrawlStateError(Exception):
    """The state cannot be used; the message is one line for the user."""


class StateUnavailable(Exception):
    """A state kept on a server (Redis) did not answer: a commit that raises it wrote
    nothing, and counts as a failed write."""

    def __init__(self, message: str, reason: str = "", what: str = "") -> None:
        super().__init__(message)
        #: The cause alone, for a line that names what failed already.
        self.short_reason = reason or message
        #: What failed when it is not the state itself (``Redis redis://host:port/db``).
        self.what = what


@dataclass(frozen=True)
class UrlRecord:
    """What the state remembers of one URL."""

    url: str
    etag: str | None
    last_modified: int | None
    #: The date (epoch s) the sitemap/feed listed the URL with when it was last decided.
    listed: int | None
    text_hash: int | None
    first_export: int | None
    last_export: int | None
    revision: int
    gone: bool
    #: The sitemap (or page) that listed it last, if any.
    source: str | None
    #: The near-duplicate fingerprint (64 bits, hex) of its last export, if any.
    fingerprint: str | None = None

    @property
    def validators(self) -> Validators:
        return Validators(self.etag, self.last_modified)


@dataclass(frozen=True)
class RobotsCopy:
    """A site's robots.txt as it last answered, kept between runs (RFC 9309 lets a crawler
    use it for up to 24 hours without asking; after that it is asked conditionally)."""

    #: The robots.txt URL (scheme, host and port: one per site).
    url: str
    #: Its status (2xx: rules; 4xx: no rules), and its body (truncated, as obeyed).
    status: int
    body: bytes
    validators: Validators
    #: When it last answered (epoch s, the crawl's clock), and how long after that it is
    #: used without asking (s).
    checked: int
    fresh_for: int

    def fresh(self, now: int) -> bool:
        return now - self.checked < self.fresh_for


@dataclass(frozen=True)
class Visit:
    """When a URL is due again (times in epoch seconds; see ``schedule``)."""

    due: int
    interval: int
    checked: int
    changed: int | None = None
    #: Sitemaps and feeds: a hash of the body last read.
    digest: int | None = None


def url_key(url: str) -> int:
    """The row key of ``url``: 64 bits of its BLAKE2b hash, as a signed integer."""
    digest = hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class StateStore(Protocol):
    """A crawl state, open for this process. Writes gather until :meth:`commit`, which
    applies them all or none (a failed one raises ``sqlite3.Error`` or
    :class:`StateUnavailable`)."""

    @property
    def path(self) -> object:
        """Where the state is, for messages (a path, or the state's name and Redis URL)."""

    def get(self, url: str) -> UrlRecord | None: ...

    def get_many(self, urls: Iterable[str]) -> dict[str, UrlRecord]: ...

    def read_ahead(self, urls: Iterable[str]) -> None:
        """The rows of ``urls`` read now for the :meth:`get` of each that follows (a state
        on a server reads them in one round trip; a file has nothing to gain)."""

    def listed_by(
        self, source_url: str, documents: bool = False, undated: bool = False
    ) -> list[str]: ...

    def pages_listed_by(self, source_url: str) -> tuple[list[str], list[str]]:
        """The pages (not gone) last listed by ``source_url``: (with a date, without)."""

    def fingerprints(self) -> Iterator[str]: ...

    def robots(self, url: str) -> RobotsCopy | None:
        """The kept robots.txt of ``url`` (a robots.txt URL), if any."""

    def keep_robots(self, copy: RobotsCopy) -> None:
        """Keep ``copy`` in place of the one before (written at the next commit)."""

    def known_pages(self) -> int: ...

    def visit(self, url: str) -> Visit | None: ...

    def visits(self, urls: Iterable[str]) -> dict[str, Visit]: ...

    def record_export(
        self,
        url: str,
        hashed: int,
        when: int,
        validators: Validators,
        listed: int | None,
        source: str | None,
        fingerprint: str | None = None,
    ) -> None: ...

    def record_seen(
        self,
        url: str,
        validators: Validators | None,
        listed: int | None,
        source: str | None,
        document: bool = False,
    ) -> None: ...

    def mark_gone(self, url: str) -> None: ...

    def unlist(self, urls: Iterable[str]) -> None: ...

    def record_visit(self, url: str, visit: Visit) -> None: ...

    @property
    def pending(self) -> int: ...

    def commit(self) -> None: ...

    def abandon(self) -> None: ...

    def close(self) -> None: ...
