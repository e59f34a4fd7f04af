"""URL hygiene with courlan: normalisation, tracking-parameter stripping and site scoping."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from urllib.parse import urljoin, urlsplit

from courlan import clean_url, is_not_crawlable, is_valid_url
from courlan.filters import extension_filter, type_filter
from courlan.urlutils import extract_domain


def normalize_url(url: str) -> str | None:
    """Canonical form of ``url``: tracking parameters stripped, fragments dropped, sorted query."""
    try:
        cleaned = clean_url(url)
    except (ValueError, TypeError):
        return None
    if not cleaned or not is_valid_url(cleaned):
        return None
    # Fragments never change what the server sends.
    return cleaned.split("#", 1)[0]


#: What decoding and careless templates leave around a URL: white space and C0 controls
#: (which the WHATWG URL parser strips too), a stray BOM, and U+FFFD for undecodable bytes.
_EDGE_JUNK = "".join(map(chr, range(0x21))) + "\x7f\ufeff\ufffd"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def absolute_http_url(url: object, base_url: str | None) -> str | None:
    """``url`` cleaned and resolved against ``base_url``; None unless it is an http(s) URL.

    Cleaning strips :data:`_EDGE_JUNK` from both ends (bad bytes before ``http://`` in a
    feed decode to U+FFFD). A URL that still holds U+FFFD (bytes lost inside it), or whose
    ``://`` follows something that is no scheme (``"\ufffdhttp://..."`` uncleaned,
    ``"ht tp://..."``), is None: an absolute URL with a broken prefix is never resolved as a
    relative path into a wrong URL on the base's site."""
    if not url or not isinstance(url, str):
        return None
    url = url.strip(_EDGE_JUNK)
    if not url or "\ufffd" in url or _broken_scheme(url):
        return None
    try:
        url = urljoin(base_url, url) if base_url else url
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError on a malformed port
    except ValueError:  # e.g. "http://[bad": an unbalanced IPv6 bracket
        return None
    return url if parts.scheme.lower() in ("http", "https") and parts.hostname else None


def _broken_scheme(url: str) -> bool:
    """Whether ``url`` has a ``://`` that no path, query or fragment precedes (it is meant
    to be absolute) after something that is no URL scheme."""
    prefix, sep, _ = url.partition("://")
    if not sep or any(c in prefix for c in "/?#"):
        return False
    return _SCHEME.fullmatch(prefix) is None


def registrable_domain(url: str) -> str | None:
    """``https://feeds.example.co.uk/rss`` → ``example.co.uk`` (None for IPs, localhost)."""
    try:
        return extract_domain(url) or None
    except (ValueError, TypeError):
        return None


def host_of(url: str) -> str:
    """Lower-case host name without port ("" when there is none or the URL is broken)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _parent_names(host: str) -> Iterator[str]:
    """``a.b.example.org`` → ``b.example.org``, ``example.org``, ``org``."""
    dot = host.find(".")
    while dot != -1:
        yield host[dot + 1 :]
        dot = host.find(".", dot + 1)


@dataclass(frozen=True)
class UrlPolicy:
    """Which URLs a crawl of one site may fetch as pages."""

    #: The site's host names (several when a feed crawl spans sites).
    hosts: frozenset[str]
    allow_subdomains: bool = False
    #: Registrable domains every host of which is on the site (a feed given directly:
    #: ``feeds.example.org`` lists pages of ``www.example.org``).
    domains: frozenset[str] = frozenset()

    @classmethod
    def for_urls(cls, urls: list[str], allow_subdomains: bool = False) -> UrlPolicy:
        return cls(frozenset(host_of(u) for u in urls if host_of(u)), allow_subdomains)

    def widened(self, hosts: set[str], domains: set[str]) -> UrlPolicy:
        """This policy with more hosts and registrable domains on the site."""
        return replace(self, hosts=self.hosts | hosts, domains=self.domains | domains)

    #: :attr:`hosts` without "www." (the same set when none has it): the site's hosts are
    #: set lookups, so that one policy for a crawl of thousands of sites costs the same per
    #: URL as one for a single site.
    _bases: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        bases = self.hosts
        if any(site.startswith("www.") for site in bases):
            bases = frozenset(site.removeprefix("www.") for site in bases)
        object.__setattr__(self, "_bases", bases)

    def on_site(self, url: str) -> bool:
        host = host_of(url)
        # A site's host itself, without "www." or with it: the same site.
        if host in self.hosts or host in self._bases or host in self.domains:
            return True
        if host.startswith("www.") and host[4:] in self._bases:
            return True
        # Other subdomains only on request, or under a registrable domain of the site.
        return any(
            suffix in self.domains or (self.allow_subdomains and suffix in self._bases)
            for suffix in _parent_names(host)
        )

    def reject_reason(self, url: str) -> str | None:
        """None when the URL may be fetched as a page, else a short reason."""
        if not self.on_site(url):
            return "offsite"
        # extension_filter drops documents that are not HTML (PDF, images, archives, ...);
        # type_filter drops feeds and site-structure pages (login, cart, ...).
        path = urlsplit(url).path  # parses: on_site() got a host out of it
        if not extension_filter(path) or not type_filter(url, strict=True, with_nav=True):
            return "non_html"
        if is_not_crawlable(url):
            return "not_crawlable"
        return None
