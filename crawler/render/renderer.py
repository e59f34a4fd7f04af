"""The extraction pipeline's side of rendering: which pages, the render request through the
crawl's downloader, what it cost.

A render is a request for the page's own URL through the crawl's downloader, so it waits
for the site's politeness slot (its delay, one request at a time) and holds that slot while
the browser runs the page; robots.txt, the User-Agent and the stall budget apply as to any
request. The browser gets the body the crawl fetched, not the URL again (:mod:`.page`).
At most ``RENDER_MAX_PAGES`` pages are rendered at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy_maintext import scrapy_internals
from scrapy_maintext.document import Document
from scrapy_maintext.politeness.slots import site_slot
from scrapy_maintext.render.availability import Availability, availability, unrendered_line
from scrapy_maintext.render.config import CONTEXT, RenderConfig
from scrapy_maintext.render.page import RenderJob
from scrapy_maintext.render.policy import PagePolicy
from scrapy_maintext.vocabulary.names import Meta, Stat

logger = logging.getLogger(__name__)

#: Renders of one page: a second one when the browser crashed or was killed under it.
ATTEMPTS = 2
#: ``Document.render_failure`` of a page whose render ran and wrote no more text.
RENDERED_NO_TEXT = "no-text"


@dataclass(frozen=True)
class Rendered:
    """The page's HTML after its scripts ran (None: the render failed, ``why``)."""

    html: bytes | None
    seconds: float
    why: str = ""
    #: The encoding of ``html`` (the page's own, which the browser kept).
    encoding: str = "utf-8"


class Renderer:
    """Renders the pages the extraction found to need JavaScript (``RENDER_JS``)."""

    def __init__(self, crawler: Crawler, config: RenderConfig) -> None:
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        self.availability = _availability(crawler, config)
        self.user_agent = str(crawler.settings.get("USER_AGENT") or "")
        self._slots = asyncio.Semaphore(config.max_pages)
        self.unrendered = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Renderer:
        return cls(crawler, RenderConfig.from_settings(crawler.settings))

    @property
    def can_render(self) -> bool:
        return self.config.mode != "never" and self.availability.ok

    def wants(self, doc: Document) -> bool:
        """Whether ``doc``'s page is to be rendered (always: every page with a body)."""
        if doc.text_source != "html" or doc.reason in ("too-large", "binary", "empty-page"):
            return False
        return self.config.mode == "always" or doc.needs_javascript

    def count_unrendered(self) -> None:
        """A page that needed JavaScript and was not rendered (said at the crawl's end)."""
        self.unrendered += 1
        self._inc(Stat.RENDER_UNAVAILABLE)

    def last_words(self) -> str | None:
        if not self.unrendered or self.can_render:
            return None
        return unrendered_line(self.unrendered, self.config.mode, self.availability.why)

    async def render(
        self,
        url: str,
        body: bytes,
        encoding: str | None,
        site: str | None,
        refers_to: str | None = None,
    ) -> Rendered:
        """The page rendered from ``body`` (a crashed browser gets a second try)."""
        why = "error"
        async with self._slots:
            for _ in range(ATTEMPTS):
                started = time.monotonic()
                try:
                    html, used = await self._render_once(
                        url, body, encoding or "utf-8", site, refers_to
                    )
                except Exception as exc:
                    why = _failure(exc)
                    logger.info("Render of %s failed (%s): %s", url, why, exc)
                    self._inc(Stat.RENDER_FAILED + why)
                    if why != "crashed":
                        break
                    continue
                seconds = time.monotonic() - started
                self._inc(Stat.RENDER_PAGES)
                self._add_seconds(seconds)
                return Rendered(html, seconds, encoding=used)
        return Rendered(None, 0.0, why)

    async def _render_once(
        self, url: str, body: bytes, encoding: str, site: str | None, refers_to: str | None
    ) -> tuple[bytes, str]:
        assert self.crawler.engine is not None
        job = RenderJob(
            url=url,
            body=body,
            encoding=encoding,
            user_agent=self.user_agent,
            policy=PagePolicy(url, self.config.max_requests, self.config.max_bytes),
            robots_allow=self._robots_allow,
            timeout=self.config.timeout,
            settle_seconds=self.config.settle,
            thin_wait=self.config.thin_wait,
            pace=self._pace(url),
            refers_to=refers_to,
            unresponsive=self.config.unresponsive,
        )
        request = Request(url, dont_filter=True, meta=self._meta(job, site))
        # The site's next request waits its delay from the page's last one, not the render's
        # start: the slot counts each of the page's requests as it goes out.
        job.on_sent = partial(self._sent, request)
        try:
            response = await self.crawler.engine.download_async(request)
        finally:
            self._count(job)
        return bytes(response.body), str(getattr(response, "encoding", None) or encoding)

    def _meta(self, job: RenderJob, site: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "playwright": True,
            "playwright_context": CONTEXT,
            "playwright_context_kwargs": {
                "user_agent": self.user_agent,
                "service_workers": "block",
                "accept_downloads": False,
            },
            "playwright_page_init_callback": job.init_page,
            "playwright_page_goto_kwargs": {
                # The body is ours: the page is measured from its first moment on (a
                # script that never ends would hold back domcontentloaded to the deadline).
                "wait_until": "commit",
                "timeout": self.config.timeout * 1000,
            },
            "dont_retry": True,
            "dont_redirect": True,
            "handle_httpstatus_all": True,
            Meta.RENDER: job,
        }
        if site:
            meta[Meta.SITE] = site
        return meta

    def _pace(self, url: str) -> float:
        """The site's delay between two requests, which the page's requests keep too."""
        probe = Request(url)
        key = site_slot(probe)
        if key is not None:  # as SiteSlotMiddleware will key the render request
            probe.meta[Meta.DOWNLOAD_SLOT] = key
        slot = scrapy_internals.live_slot(
            self.crawler, scrapy_internals.slot_key(self.crawler, probe)
        )
        if slot is not None:
            return float(slot.delay)
        return self.crawler.settings.getfloat("DOWNLOAD_DELAY")

    async def _robots_allow(self, url: str) -> bool:
        middleware = scrapy_internals.robots_middleware(self.crawler)
        if middleware is None:
            return True
        parser = await middleware.robot_parser(Request(url))
        agent = getattr(middleware, "robots_agent", None) or self.user_agent
        return parser is None or bool(parser.allowed(url, agent))

    def _sent(self, request: Request, when: float) -> None:
        # The slot's key now: SiteSlotMiddleware has given the request its ``download_slot``.
        key = scrapy_internals.slot_key(self.crawler, request)
        if scrapy_internals.live_slot(self.crawler, key) is None:
            logger.debug("No download slot %s for the render of %s", key, request.url)
        scrapy_internals.slot_sent_at(self.crawler, key, when)

    def _count(self, job: RenderJob) -> None:
        self._inc(Stat.RENDER_REQUESTS, job.policy.requests)
        for why, count in job.policy.blocked.items():
            self._inc(Stat.RENDER_BLOCKED + why, count)
        if job.unsettled:
            self._inc(Stat.RENDER_UNSETTLED)

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None and count:
            self.stats.inc_value(key, count)

    def _add_seconds(self, seconds: float) -> None:
        if self.stats is not None:
            total = self.stats.get_value(Stat.RENDER_SECONDS, 0.0)
            self.stats.set_value(Stat.RENDER_SECONDS, round(total + seconds, 3))


def _failure(exc: BaseException) -> str:
    name = type(exc).__name__
    message = str(exc).lower()
    if name in ("RenderTimeout", "TimeoutError"):
        return "timeout"
    if name == "PageUnresponsive":  # render.page: a script that never ends
        return "unresponsive"
    if name == "PageCrashed":  # render.page: the page's renderer died (memory)
        return "page_crashed"
    if name == "BrowserCrashed":  # render.browser: the browser went away under the page
        return "crashed"
    if "page crashed" in message:
        return "page_crashed"  # the page's own doing (memory): not tried again
    if "crash" in message or "closed" in message or "disconnected" in message:
        return "crashed"
    return "error"


def _availability(crawler: Crawler, config: RenderConfig) -> Availability:
    found = availability(config.browser_path, config.forced_unavailable)
    if not found.ok:
        return found
    handlers = crawler.settings.getdict("DOWNLOAD_HANDLERS")
    if not any(
        str(handlers.get(s, "")).endswith("RenderDownloadHandler") for s in ("http", "https")
    ):
        return Availability(False, "the project's DOWNLOAD_HANDLERS leave no room for the browser")
    return found
