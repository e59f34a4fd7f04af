"""robots.txt: obey it (Scrapy's middleware), apply its Crawl-delay, and share it with spiders.

A site's robots.txt is one request cycle: the spider's own robots.txt request (a discovery
spider's first request of a site, ``Meta.ROBOTS_DISCOVERY``) is the site's download when it
is the first to ask, and its answer settles the site's rules (Scrapy's middleware would
download robots.txt again, and the spider's request be answered with a copy of that). It
follows redirects and is retried as Scrapy's download would be, is asked conditionally
when the crawl state keeps an older copy, and is archived like it. A spider's request
that comes later (or finds a kept copy, or another worker's) is answered with a copy; a
site whose first request is a page has Scrapy's download, as before.
"""

from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request, Response, TextResponse
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy_maintext.politeness.robots_kept import ROBOTS_FROM_WORKERS, KeptRobots
from scrapy_maintext.politeness.site_failure import (
    ROBOTSTXT_LOGGER,
    SiteFailure,
    describe_failure,
    install_fold_filter,
    robots_refusal,
)
from scrapy_maintext.politeness.throttle import FLOOR_KEY
from scrapy_maintext.scrapy_internals import RobotsTxtHooks, live_slot, slot_key, slot_settings
from scrapy_maintext.vocabulary.names import ROBOTS_COPY_FLAG, Meta, Stat
from scrapy_maintext.vocabulary.reasons import RobotsForbidden, SiteUnreachable
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy_maintext.politeness.shared import SharedPolitenessMiddleware

logger = logging.getLogger(__name__)
#: Scrapy's robots middleware's logger: a failed download is said there, as Scrapy says it.
scrapy_robots_logger = logging.getLogger(ROBOTSTXT_LOGGER)

DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"
#: robots.txt bytes read, as Google does (RFC 9309 asks for at least 500 KiB): a 5 MB file
#: took ~400 MB of memory to parse. What follows is ignored.
MAX_ROBOTS_BYTES = 500 * 1024
#: Statuses a spider's robots.txt request that downloads takes as its answer: all but the
#: redirects, which it follows (as Scrapy's download does; ``handle_httpstatus_all`` would
#: stop RedirectMiddleware).
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
ANSWERED_STATUSES = tuple(status for status in range(100, 600) if status not in _REDIRECTS)
#: Meta key keeping a spider's ``handle_httpstatus_all`` while its request downloads.
_SPIDER_ALL = "robots_spider_handle_all"


@dataclass(frozen=True)
class RobotsPolitenessSettings:
    """``ROBOTSTXT_CRAWL_DELAY_*`` settings."""

    #: Apply robots.txt ``Crawl-delay`` as the per-domain download delay.
    obey_crawl_delay: bool
    #: Upper bound on an honoured Crawl-delay (seconds); a larger value is capped with a warning.
    max_crawl_delay: float
    #: A robots.txt answering 5xx or not at all forbids the whole site (RFC 9309).
    unreachable_disallows: bool
    #: Sites above which a site's failure is an INFO line (the crawl report counts them).
    broad_sites: int

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RobotsPolitenessSettings:
        return cls(
            obey_crawl_delay=setting(settings, "ROBOTSTXT_CRAWL_DELAY_ENABLED"),
            max_crawl_delay=setting(settings, "ROBOTSTXT_CRAWL_DELAY_MAX"),
            unreachable_disallows=setting(settings, "ROBOTSTXT_UNREACHABLE_DISALLOW"),
            broad_sites=setting(settings, "CRAWL_REPORT_BROAD_SITES"),
        )


def _first_url(request: Request) -> str:
    """The URL a request asked for before any redirect."""
    redirected = request.meta.get("redirect_urls")
    return str(redirected[0]) if redirected else request.url


#: A robots.txt body over this size is kept compressed for the spider's later copies: every
#: site's body stays for the whole crawl, and real ones run to tens of KB (issue 47).
COMPRESS_KEPT_OVER = 1024


def keep_body(body: bytes) -> tuple[bytes, bool]:
    """``body`` as kept for later copies, and whether it is compressed."""
    if len(body) <= COMPRESS_KEPT_OVER:
        return body, False
    return zlib.compress(body, 1), True


def kept_body(kept: tuple[bytes, bool]) -> bytes:
    body, compressed = kept
    return zlib.decompress(body) if compressed else body


def truncate_robots(body: bytes) -> bytes:
    """The first MAX_ROBOTS_BYTES of ``body``, cut after the last whole line."""
    head = body[:MAX_ROBOTS_BYTES]
    cut = head.rfind(b"\n")
    return head[: cut + 1] if cut >= 0 else head


class RobotsPolitenessMiddleware(RobotsTxtHooks):
    """Scrapy's RobotsTxtMiddleware plus Crawl-delay and a shared robots.txt body."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.config = RobotsPolitenessSettings.from_settings(crawler.settings)
        self._min_delay = crawler.settings.getfloat("DOWNLOAD_DELAY")
        # Public settings, not the parent's private copies of them.
        self.parser_cls = load_object(crawler.settings["ROBOTSTXT_PARSER"])
        self.robots_agent = crawler.settings.get("ROBOTSTXT_USER_AGENT") or crawler.settings.get(
            "USER_AGENT"
        )
        assert crawler.stats is not None
        self.stats = crawler.stats
        #: Each site's robots.txt as read, for the spider's copies (:func:`keep_body`).
        self._bodies: dict[str, tuple[int, tuple[bytes, bool]]] = {}
        self._delays: dict[str, float] = {}
        #: Sites that cannot be crawled (robots.txt unreachable or 5xx), by netloc.
        self.failures: dict[str, SiteFailure] = {}
        #: Scheme each netloc was first asked with (for messages and hints).
        self._schemes: dict[str, str] = {}
        if self.config.unreachable_disallows:
            install_fold_filter()
        self.kept = KeptRobots(crawler)
        #: A shared crawl (``REDIS_URL``): one worker reads each site's robots.txt.
        self._distributed = bool(setting(crawler.settings, "REDIS_URL"))
        #: Sites (netlocs) whose robots.txt a spider's request is downloading.
        self._downloading: set[str] = set()

    async def process_request(self, request: Request) -> Response | None:  # type: ignore[override]
        parts = urlparse_cached(request)
        self._schemes.setdefault(parts.netloc, parts.scheme)
        downloads = request.meta.get(Meta.ROBOTS_DOWNLOAD) in self._downloading
        if not downloads and request.meta.get(Meta.ROBOTS_DISCOVERY):
            answer = await self._spider_robots(request)
            if answer is not None:
                return answer
            downloads = True
        if (downloads or request.meta.get("dont_obey_robotstxt")) and parts.path == "/robots.txt":
            self.kept.ask_conditionally(request)
        self._refuse_failed_site(request)
        if downloads:
            # A robots.txt download (or a hop of one) is not checked against robots.txt.
            self._apply_crawl_delay(request)
            return None
        try:
            await super().process_request(request)
        except IgnoreRequest as exc:
            # The robots.txt fetch this request waited for may have found the site
            # unreachable: say so, not "Forbidden by robots.txt".
            self._refuse_failed_site(request)
            raise RobotsForbidden(str(exc)) from None
        self._apply_crawl_delay(request)
        return None

    async def _spider_robots(self, request: Request) -> Response | None:
        """A spider's robots.txt request: the copy of the site's robots.txt (kept, another
        worker's, or read already), or None when this request is to download it."""
        netloc = urlparse_cached(request).netloc
        # The site's other requests wait for this one's answer, as for Scrapy's download.
        first = self.wait_for_robots(netloc) is not None
        if first and not await self.settle_from_kept(request, netloc):
            self._download_with(request, netloc)
            return None
        await self.robot_parser(request)
        return self._copy(request, netloc, request.url)

    def _download_with(self, request: Request, netloc: str) -> None:
        """Make the spider's ``request`` the robots.txt download of ``netloc``: the request
        Scrapy's middleware would send (redirects followed, no ``Referer``)."""
        self._downloading.add(netloc)
        meta = request.meta
        meta[Meta.ROBOTS_DOWNLOAD] = netloc
        meta[_SPIDER_ALL] = meta.pop("handle_httpstatus_all", False)
        meta["handle_httpstatus_list"] = ANSWERED_STATUSES
        # A request yielded from another site's page carries that page as its Referer.
        request.headers.pop(b"Referer", None)

    def _downloaded(self, request: Request) -> str | None:
        """The site whose robots.txt ``request`` was downloading (no longer), else None."""
        netloc = request.meta.get(Meta.ROBOTS_DOWNLOAD)
        if netloc not in self._downloading:
            return None
        self._downloading.discard(netloc)
        meta = request.meta
        meta.pop("handle_httpstatus_list", None)
        if meta.pop(_SPIDER_ALL, False):
            meta["handle_httpstatus_all"] = True
        self.stats.inc_value("robotstxt/request_count")
        return str(netloc)

    async def process_response(self, request: Request, response: Response) -> Response:
        """The answer to a spider's robots.txt download (redirects and retries done):
        parsed for the site, and the spider given its copy, as any other would be."""
        if request.meta.get(Meta.ROBOTS_DOWNLOAD) not in self._downloading:
            return response  # every page's answer: one lookup, no call
        netloc = self._downloaded(request)
        assert netloc is not None
        if response.request is None:
            response.request = request  # the engine sets it only after the middlewares
        try:
            await self._parse_robots(response, netloc, request)
        except Exception as exc:
            self._download_failed(request, netloc, exc)
        return self._copy(request, netloc, _first_url(request))

    def process_exception(self, request: Request, exception: Exception) -> Response | None:
        """A spider's robots.txt download failed (retries done): the site's rules as
        Scrapy's middleware would set them, and the spider's answer."""
        return self.download_failed(request, exception)

    def download_failed(self, request: Request, exception: BaseException) -> Response | None:
        """A spider's robots.txt request that was downloading failed: the site's rules
        are settled and the spider's answer returned (or SiteUnreachable raised); None
        when it was not downloading. The spider's errback asks too: an error a later
        middleware raised (too many redirects, a stalled site) passes this one by."""
        netloc = self._downloaded(request)
        if netloc is None:
            return None
        self._download_failed(request, netloc, exception)
        return self._copy(request, netloc, _first_url(request))

    def _download_failed(self, request: Request, netloc: str, exc: BaseException) -> None:
        if not isinstance(exc, IgnoreRequest):
            scrapy_robots_logger.error(
                "Error downloading %(request)s: %(f_exception)s",
                {"request": request, "f_exception": exc},
                exc_info=exc,
                extra={"spider": self.crawler.spider},
            )
        self._robots_error(exc if isinstance(exc, Exception) else RuntimeError(exc), netloc)

    def _copy(self, request: Request, netloc: str, url: str) -> Response:
        """The spider's answer: ``netloc``'s robots.txt as read (404 when it could not be
        read), or SiteUnreachable."""
        failure = self.failures.get(netloc)
        if failure is not None:
            raise SiteUnreachable(failure.message)
        status, kept = self._bodies.get(netloc, (404, (b"", False)))
        return TextResponse(
            url=url,
            status=status,
            body=kept_body(kept),
            encoding="utf-8",
            request=request,
            flags=[ROBOTS_COPY_FLAG],
        )

    async def robots_kept(self, request: Request) -> Response | None:
        """The copy kept in the crawl state (fresh enough to use unasked), else in a shared
        crawl the one another worker read (or this worker's turn to fetch it)."""
        kept = self.kept.fresh_copy(request)
        if kept is not None:
            return kept
        shared = self._shared()
        return None if shared is None else await shared.robots_of_others(request)

    def _shared(self) -> SharedPolitenessMiddleware | None:
        if not self._distributed:
            return None
        from scrapy_maintext.politeness.shared import SharedPolitenessMiddleware

        return self.crawler.get_downloader_middleware(SharedPolitenessMiddleware)

    def robots_received(self, response: Response, netloc: str) -> Response:
        if len(response.body) > MAX_ROBOTS_BYTES:
            response = response.replace(body=truncate_robots(response.body))
            self.stats.inc_value(Stat.ROBOTS_TRUNCATED)
            logger.log(
                self._site_level(logging.WARNING),
                "robots.txt of %s is over %d bytes: the rest is ignored",
                netloc,
                MAX_ROBOTS_BYTES,
            )
        origin = response.meta.get(Meta.ROBOTS_COPY) if response.request is not None else None
        if origin != ROBOTS_FROM_WORKERS:
            if origin is None:
                response = self.kept.answered(response)
            shared = self._shared()
            if shared is not None:
                shared.robots_read(response)
        self._bodies[netloc] = (response.status, keep_body(response.body))
        if response.status >= 500 and self.config.unreachable_disallows:
            self._unreachable(netloc, robots_refusal(response.status, netloc))
            response = response.replace(body=DISALLOW_ALL)
        elif response.status < 400 and self.config.obey_crawl_delay:
            # Recorded before the parent hands the parser to the requests waiting for it.
            parser = build_from_crawler(self.parser_cls, self.crawler, response.body)
            delay = parser.crawl_delay(self.robots_agent)
            if delay:
                self._record_delay(netloc, float(delay))
        return response

    def robots_failed(self, exc: Exception, netloc: str) -> bool:
        if isinstance(exc, IgnoreRequest) or not self.config.unreachable_disallows:
            return False
        self.stats.inc_value(f"robotstxt/exception_count/{type(exc)}")
        self._unreachable(netloc, describe_failure(exc, self._base_url(netloc)))
        self.settle_robots(netloc, build_from_crawler(self.parser_cls, self.crawler, DISALLOW_ALL))
        return True

    def _unreachable(self, netloc: str, failure: SiteFailure) -> None:
        # RFC 9309, 2.3.1.4: when robots.txt is unreachable, assume complete disallow.
        self.stats.inc_value(Stat.ROBOTS_UNREACHABLE)
        self.stats.inc_value(Stat.SITE_FAILED + failure.reason)
        self.failures[netloc] = failure
        logger.log(self._site_level(logging.ERROR), "%s", failure.line(self._base_url(netloc)))

    def _site_level(self, level: int) -> int:
        """``level`` for a line about one site, INFO in a broad crawl (more sites than
        CRAWL_REPORT_BROAD_SITES), whose report counts such sites instead."""
        sites = getattr(self.crawler.spider, "sites", None)
        broad = isinstance(sites, dict) and len(sites) > self.config.broad_sites
        return logging.INFO if broad else level

    def _base_url(self, netloc: str) -> str:
        return f"{self._schemes.get(netloc, 'https')}://{netloc}"

    def _refuse_failed_site(self, request: Request) -> None:
        failure = self.failures.get(urlparse_cached(request).netloc)
        if failure is not None:
            raise SiteUnreachable(failure.message)

    def _record_delay(self, netloc: str, delay: float) -> None:
        if delay > self.config.max_crawl_delay:
            logger.log(
                self._site_level(logging.WARNING),
                "robots.txt of %s asks for Crawl-delay %.1fs; capped at %.1fs",
                netloc,
                delay,
                self.config.max_crawl_delay,
            )
            delay = self.config.max_crawl_delay
        logger.info("Crawl-delay of %.2fs applied to %s", delay, netloc)
        self.stats.set_value(Stat.CRAWL_DELAY + netloc, delay)
        self._delays[netloc] = delay

    def _apply_crawl_delay(self, request: Request) -> None:
        crawl_delay = self._delays.get(urlparse_cached(request).netloc)
        if crawl_delay is None:
            return
        # The site said how often it wants to be asked: that is the domain's delay, never
        # lowered (PoliteAutoThrottle reads the floor from the slot's settings), and
        # without random jitter, which could shorten a gap below it.
        delay = max(self._min_delay, crawl_delay)
        key = slot_key(self.crawler, request)
        # Read by the downloader when it creates (or re-creates) the slot for this key.
        slot_settings(self.crawler, key).update({"delay": delay, "jitter": 0, FLOOR_KEY: delay})
        slot = live_slot(self.crawler, key)
        if slot is not None:
            slot.delay = max(slot.delay, delay)
            slot.jitter = 0.0


def robots_download_failed(
    crawler: Crawler, request: Request, exception: BaseException
) -> Response | None:
    """:meth:`RobotsPolitenessMiddleware.download_failed` of ``crawler``'s robots
    middleware, or None without one."""
    middleware = crawler.get_downloader_middleware(RobotsPolitenessMiddleware)
    if middleware is None:
        return None
    return middleware.download_failed(request, exception)
