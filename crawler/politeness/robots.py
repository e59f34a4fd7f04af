"""robots.txt: obey it (Scrapy's middleware), apply its Crawl-delay, and share it with spiders."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request, Response, TextResponse
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler, load_object
from scrapy_maintext.politeness.robots_kept import ROBOTS_FROM_WORKERS, KeptRobots
from scrapy_maintext.politeness.site_failure import (
    SiteFailure,
    describe_failure,
    install_fold_filter,
    robots_refusal,
)
from scrapy_maintext.politeness.throttle import FLOOR_KEY
from scrapy_maintext.scrapy_internals import RobotsTxtHooks, live_slot, slot_key, slot_settings
from scrapy_maintext.vocabulary.names import Meta, Stat
from scrapy_maintext.vocabulary.reasons import RobotsForbidden, SiteUnreachable
from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings
    from scrapy_maintext.politeness.shared import SharedPolitenessMiddleware

logger = logging.getLogger(__name__)

DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"
#: robots.txt bytes read, as Google does (RFC 9309 asks for at least 500 KiB): a 5 MB file
#: took ~400 MB of memory to parse. What follows is ignored.
MAX_ROBOTS_BYTES = 500 * 1024


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
        self._bodies: dict[str, tuple[int, bytes]] = {}
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

    async def process_request(self, request: Request) -> Response | None:  # type: ignore[override]
        parts = urlparse_cached(request)
        self._schemes.setdefault(parts.netloc, parts.scheme)
        if request.meta.get(Meta.ROBOTS_DISCOVERY):
            return await self._cached_robots(request)
        if request.meta.get("dont_obey_robotstxt") and parts.path == "/robots.txt":
            self.kept.ask_conditionally(request)
        self._refuse_failed_site(request)
        try:
            await super().process_request(request)
        except IgnoreRequest as exc:
            # The robots.txt fetch this request waited for may have found the site
            # unreachable: say so, not "Forbidden by robots.txt".
            self._refuse_failed_site(request)
            raise RobotsForbidden(str(exc)) from None
        self._apply_crawl_delay(request)
        return None

    async def _cached_robots(self, request: Request) -> Response:
        netloc = urlparse_cached(request).netloc
        await self.robot_parser(request)
        self._refuse_failed_site(request)
        status, body = self._bodies.get(netloc, (404, b""))
        return TextResponse(
            url=request.url, status=status, body=body, encoding="utf-8", request=request
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
        self._bodies[netloc] = (response.status, response.body)
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
