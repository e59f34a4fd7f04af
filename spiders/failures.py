"""Why a request failed, as a reason for stats, logs and the crawl report."""

from __future__ import annotations

from scrapy.exceptions import IgnoreRequest
from scrapy_maintext.vocabulary.reasons import PageIgnored, SkipReason, download_error
from twisted.python.failure import Failure


def failure_reason(failure: Failure) -> str:
    """``http_<status>``, a :class:`SkipReason`, else the exception's class name."""
    value = failure.value
    assert value is not None
    response = getattr(value, "response", None)
    if response is not None:
        return f"http_{response.status}"
    if isinstance(value, PageIgnored):
        return value.reason
    request = getattr(failure, "request", None)
    if type(value) is IgnoreRequest and request is not None and _redirected(request.meta):
        # Scrapy's RedirectMiddleware gives up on a chain past REDIRECT_MAX_TIMES.
        return redirect_reason(request.meta.get("redirect_urls") or [], request.url)
    return download_error(value) or type(value).__name__


def _redirected(meta: dict) -> bool:
    return bool(meta.get("redirect_urls")) and "redirect_times" in meta


def redirect_reason(chain: list[str], url: str) -> SkipReason:
    """A chain that passes a URL twice is a loop; a long one without repeats is not."""
    urls = [*chain, url]
    return SkipReason.REDIRECT_LOOP if len(set(urls)) < len(urls) else SkipReason.TOO_MANY_REDIRECTS
