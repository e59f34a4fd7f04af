"""Why a site cannot be crawled, said once, in one line, with a hint where one helps."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from scrapy_maintext.vocabulary.reasons import SkipReason, download_error

_TLS_MARKERS = ("SSL routines", "OpenSSL", "TLS", "wrong version number", "handshake")


@dataclass(frozen=True)
class SiteFailure:
    """A site that could not be reached (or forbids itself): a stat key and a sentence."""

    #: Stat and item-report key: ``dns_error``, ``connection_refused``, ``tls_error``, ...
    reason: str
    #: What happened, for people ("connection refused by 127.0.0.1:8080").
    message: str
    #: What to try, or "".
    hint: str = ""

    def line(self, base_url: str) -> str:
        hint = f"; {self.hint}" if self.hint else ""
        return f"Cannot crawl {base_url}: {self.message}{hint}"


def describe_failure(exc: BaseException, url: str) -> SiteFailure:
    """A download error of a site's first request (robots.txt) as a :class:`SiteFailure`."""
    parts = urlsplit(url)
    netloc = parts.netloc
    name = type(exc).__name__
    text = str(exc)
    reason = download_error(exc)
    if reason == SkipReason.DNS_ERROR:
        return SiteFailure("dns_error", f"host {parts.hostname} not found (DNS lookup failed)")
    if reason == SkipReason.CONNECTION_REFUSED:
        return SiteFailure("connection_refused", f"connection refused by {netloc}")
    if reason == SkipReason.TIMEOUT:
        return SiteFailure("timeout", f"no answer from {netloc} ({text or 'timed out'})")
    if any(marker in text for marker in _TLS_MARKERS):
        hint = ""
        if parts.scheme == "https":
            hint = f"did you mean http://{netloc}? (the server may not speak TLS)"
        return SiteFailure("tls_error", f"TLS handshake with {netloc} failed", hint)
    return SiteFailure("download_error", f"download from {netloc} failed ({name}: {text[:200]})")


def robots_refusal(status: int, netloc: str) -> SiteFailure:
    """robots.txt answering 5xx: the whole site is off limits (RFC 9309, 2.3.1.4)."""
    message = f"robots.txt of {netloc} answered HTTP {status}, so the whole site is off limits"
    return SiteFailure("robots_unavailable", message, "RFC 9309; try again later")


class FoldRobotsErrors(logging.Filter):
    """Turns Scrapy's own ERROR lines about a failed robots.txt download into DEBUG lines.

    The robots middleware says the same once per site, in one line with a hint; Scrapy's
    lines (a traceback and a "Gave up retrying") stay available at DEBUG level.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR and _about_robots_txt(record):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            record.exc_info, record.exc_text = None, None
        return True


def _about_robots_txt(record: logging.LogRecord) -> bool:
    if record.name == ROBOTSTXT_LOGGER:
        return True  # its only ERROR line is a failed robots.txt download
    args = record.args
    request = args.get("request") if isinstance(args, dict) else None
    return urlsplit(str(getattr(request, "url", ""))).path == "/robots.txt"


ROBOTSTXT_LOGGER = "scrapy.downloadermiddlewares.robotstxt"
#: Loggers whose robots.txt download errors :class:`FoldRobotsErrors` folds.
FOLDED_LOGGERS = (ROBOTSTXT_LOGGER, "scrapy.downloadermiddlewares.retry")


def install_fold_filter() -> None:
    for name in FOLDED_LOGGERS:
        target = logging.getLogger(name)
        if not any(isinstance(f, FoldRobotsErrors) for f in target.filters):
            target.addFilter(FoldRobotsErrors())
