"""Why a page was not fetched, not extracted or dropped: types, never matched messages.

A request our components refuse raises a :class:`PageIgnored` subclass and an item the
extraction pipeline drops raises a :class:`PageDropped` subclass; each carries its reason,
which is what stats, logs and the crawl report show.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import ClassVar

from scrapy.exceptions import DropItem, IgnoreRequest, NotConfigured

logger = logging.getLogger(__name__)


class SkipReason(StrEnum):
    """A planned page that was not fetched or not extracted."""

    ROBOTS_FORBIDDEN = "robots_forbidden"
    #: The robots middleware found the site unreachable (it said why, once).
    SITE_UNREACHABLE = "site_unreachable"
    #: The site spent its stall budget (``STALL_BUDGET``).
    SITE_STALLED = "site_stalled"
    #: Dropped from a download queue because the crawl is stopping: a resumed crawl fetches it.
    STOPPING = "stopping"
    #: A request of an interrupted earlier run that came back from a JOBDIR queue.
    EARLIER_RUN = "earlier_run"
    #: A redirect chain that comes back to a URL it passed through.
    REDIRECT_LOOP = "redirect_loop"
    #: A redirect chain longer than ``REDIRECT_MAX_TIMES``.
    TOO_MANY_REDIRECTS = "too_many_redirects"
    #: A redirect to a URL this crawl requested already (the duplicate filter drops it).
    REDIRECT_TO_SEEN = "redirect_to_seen"
    TOO_LARGE = "too_large"
    TIMEOUT = "timeout"
    DNS_ERROR = "dns_error"
    CONNECTION_REFUSED = "connection_refused"
    CONNECTION_LOST = "connection_lost"
    NON_HTML = "non_html"
    # Recurring crawls (CRAWL_STATE): nothing new, not a failure.
    #: A conditional request answered 304 Not Modified.
    NOT_MODIFIED = "not_modified"
    #: A page exported by an earlier run now answers 404 or 410.
    GONE = "gone"
    #: Not requested: its sitemap lastmod or feed date is not newer than when last decided.
    UNCHANGED_BY_DATE = "unchanged_by_date"
    #: Not requested: no newer sitemap or feed date, and not due yet (adaptive revisits).
    NOT_DUE = "not_due"


class DropReason(StrEnum):
    """A fetched page whose item the extraction pipeline dropped."""

    NO_TEXT = "no_text"
    DUPLICATE = "duplicate"
    TIMEOUT = "timeout"
    ERROR = "error"
    #: A document in a language ``EXTRACT_LANGUAGES`` does not keep.
    LANGUAGE = "language"
    #: A DropItem raised by a pipeline of the project's own.
    OTHER = "other"
    #: Recurring crawl: the same text as the page's last export (not a failure).
    UNCHANGED = "unchanged"
    #: An output (a feed, ``DOCDIR_PATH``) could not write the document: the crawl stops.
    OUTPUT_FAILED = "output_failed"
    #: Not extracted because the crawl stopped: a resumed crawl fetches it again.
    STOPPING = "stopping"
    #: No main text without JavaScript, and the page was not rendered (``RENDER_JS`` is
    #: ``never``, the render extra or the browser is missing, or the render failed).
    NEEDS_JAVASCRIPT = "needs_javascript"
    #: A page that needed JavaScript, rendered, and still without main text (its scripts
    #: ran and wrote none).
    NO_TEXT_RENDERED = "no_text_rendered"


class RecrawlOutcome(StrEnum):
    """What a recurring crawl (``CRAWL_STATE``) made of a page; the ``recrawl/`` stats."""

    NEW = "new"
    CHANGED = "changed"
    #: Fetched (200) with the same text as its last export.
    UNCHANGED = "unchanged"
    NOT_MODIFIED = "not_modified"
    GONE = "gone"
    SKIPPED_BY_DATE = "skipped_by_date"
    #: Not requested: not due yet (``RECRAWL_SCHEDULE=adaptive``).
    NOT_DUE = "not_due"
    #: Not requested: listed with a date by a sitemap (or listed by a feed) that is as it
    #: was (it answered 304, its index gave the same lastmod, or it was not due).
    BEHIND_UNCHANGED = "behind_unchanged"


#: Reasons that are routine or said once for the whole site: logged at INFO, not WARNING.
QUIET_SKIPS = frozenset(
    {SkipReason.ROBOTS_FORBIDDEN, SkipReason.SITE_UNREACHABLE, SkipReason.SITE_STALLED}
)
#: Drops that decide a page for good (a recurring crawl remembers them); a timeout or an
#: error may go otherwise next time.
FINAL_DROPS = frozenset({DropReason.UNCHANGED, DropReason.NO_TEXT, DropReason.DUPLICATE})
#: Outcomes of a recurring crawl that are no failure: counted apart from page errors.
RECRAWL_SKIPS = frozenset({SkipReason.NOT_MODIFIED, SkipReason.GONE})


class PageIgnored(IgnoreRequest):
    """A request refused by one of our components, for :attr:`reason`."""

    reason: ClassVar[SkipReason]


class RobotsForbidden(PageIgnored):
    reason = SkipReason.ROBOTS_FORBIDDEN


class SiteUnreachable(PageIgnored):
    reason = SkipReason.SITE_UNREACHABLE


class SiteStalled(PageIgnored):
    reason = SkipReason.SITE_STALLED


class Stopping(PageIgnored):
    reason = SkipReason.STOPPING


class EarlierRun(PageIgnored):
    reason = SkipReason.EARLIER_RUN


class NotModified(PageIgnored):
    reason = SkipReason.NOT_MODIFIED


class PageGone(PageIgnored):
    reason = SkipReason.GONE


class PageDropped(DropItem):
    """An item the extraction pipeline dropped, for :attr:`reason`."""

    reason: ClassVar[DropReason]


class NoMainText(PageDropped):
    reason = DropReason.NO_TEXT


class NeedsJavaScript(PageDropped):
    """A page its scripts write, with no main text without them, not rendered."""

    reason = DropReason.NEEDS_JAVASCRIPT


class NoTextRendered(NoMainText):
    """A page rendered in the browser that has no main text even so."""

    reason = DropReason.NO_TEXT_RENDERED


class NearDuplicate(PageDropped):
    reason = DropReason.DUPLICATE


class OtherLanguage(PageDropped):
    """A document in a language ``EXTRACT_LANGUAGES`` does not keep."""

    reason = DropReason.LANGUAGE


class ExtractionTimeout(PageDropped):
    reason = DropReason.TIMEOUT


class ExtractionFailed(PageDropped):
    reason = DropReason.ERROR


class ExtractionInterrupted(PageDropped):
    """The crawl stopped before the page was extracted: not done, a resumed crawl fetches
    it again."""

    reason = DropReason.STOPPING


class Unchanged(PageDropped):
    reason = DropReason.UNCHANGED


class OutputFailed(PageDropped):
    """The document could not be written by an output: not exported, not done."""

    reason = DropReason.OUTPUT_FAILED


#: Drops that leave the page not done: a resumed crawl (or another worker of a distributed
#: crawl) fetches it again.
NOT_DONE_DROPS = frozenset({DropReason.OUTPUT_FAILED, DropReason.STOPPING})


def left_undone(exception: BaseException | None) -> bool:
    """Whether an item dropped with ``exception`` leaves its page to be done again."""
    return isinstance(exception, PageDropped) and exception.reason in NOT_DONE_DROPS


def drop_reason(exception: BaseException) -> DropReason:
    """The reason of a dropped item (``other`` for a project's own DropItem)."""
    return exception.reason if isinstance(exception, PageDropped) else DropReason.OTHER


#: Download errors by exception class name (Twisted's and Scrapy's, matched by name so that
#: none has to be imported, and whichever of them a Scrapy version raises).
DOWNLOAD_ERRORS: dict[str, SkipReason] = {
    "DownloadCancelledError": SkipReason.TOO_LARGE,  # over DOWNLOAD_MAXSIZE
    "DownloadTimeoutError": SkipReason.TIMEOUT,
    "TimeoutError": SkipReason.TIMEOUT,
    "TCPTimedOutError": SkipReason.TIMEOUT,
    "CannotResolveHostError": SkipReason.DNS_ERROR,
    "DNSLookupError": SkipReason.DNS_ERROR,
    "DownloadConnectionRefusedError": SkipReason.CONNECTION_REFUSED,
    "ConnectionRefusedError": SkipReason.CONNECTION_REFUSED,
    "ResponseNeverReceived": SkipReason.CONNECTION_LOST,
    "ConnectionLost": SkipReason.CONNECTION_LOST,
    "ConnectionDone": SkipReason.CONNECTION_LOST,
}


def download_error(exception: BaseException) -> SkipReason | None:
    """The reason of a download error, or None for an exception that is none of them."""
    return DOWNLOAD_ERRORS.get(type(exception).__name__)


def switched_off(component: str, why: str) -> NotConfigured:
    """The NotConfigured of a component that is simply off: without a message, since Scrapy
    warns ``Disabled COMPONENT: MESSAGE`` for one with a message, every crawl; ``why`` goes
    to the DEBUG log."""
    logger.debug("%s is off: %s", component, why)
    return NotConfigured()
