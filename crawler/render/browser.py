"""scrapy-playwright's download handler as renders use it (:class:`BrowserHandler`), made by
:class:`~.handler.RenderDownloadHandler` with the crawl's first render.

scrapy-playwright starts its Playwright driver when the engine starts; this one is made and
started with the first render, so a crawl that renders nothing imports and starts nothing.
Every render has a deadline (``RENDER_TIMEOUT`` plus :data:`~.config.CLOSE_GRACE`): a page
still busy then (a script that never ends) is closed, and when it will not close, the browser
is closed and the next render starts a new one. So is a browser that holds more than
``RENDER_BROWSER_MEMORY_MB`` once no render is under way (:mod:`.footprint`). A browser
that crashed or was killed fails the renders under way at once (:class:`BrowserCrashed`:
the renderer tries each once more) and is started again by scrapy-playwright
(``PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER``).
scrapy-playwright's private hooks are reached through
:class:`~scrapy_maintext.scrapy_internals.playwright.PlaywrightHooks`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy_maintext.render.config import CLOSE_GRACE, RenderConfig
from scrapy_maintext.render.footprint import browser_memory_mb
from scrapy_maintext.render.page import RenderJob
from scrapy_maintext.scrapy_internals.playwright import PlaywrightHooks
from scrapy_maintext.vocabulary.names import Meta, Stat

logger = logging.getLogger(__name__)


class RenderTimeout(Exception):
    """A render that did not end by its deadline (its page was closed)."""


class BrowserCrashed(Exception):
    """The browser went away (crashed, killed) while it rendered the page."""


class BrowserHandler(PlaywrightHooks):
    """scrapy-playwright's handler, bounded per page."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        #: Browsers lost so far, and the renders under way (failed at once when it goes).
        self._lost = 0
        self._renders: set[asyncio.Task[Any]] = set()
        self._memory_cap = RenderConfig.from_settings(crawler.settings).browser_memory_mb

    async def render(
        self, request: Request, download: Callable[[], Awaitable[Response]]
    ) -> Response:
        job = request.meta.get(Meta.RENDER)
        if not isinstance(job, RenderJob):
            raise ValueError(f"A playwright request without its render job: {request.url}")
        job.start()
        lost, task = self._lost, asyncio.current_task()
        if task is not None:
            self._renders.add(task)
        try:
            return await asyncio.wait_for(download(), job.remaining() + CLOSE_GRACE)
        except (TimeoutError, asyncio.CancelledError, Exception) as exc:
            if self._lost != lost:
                raise BrowserCrashed(f"the browser went away: {request.url}") from None
            if not isinstance(exc, TimeoutError):
                raise
            await self._stop(job)
            raise RenderTimeout(f"render took over {job.timeout:g} s: {request.url}") from None
        finally:
            if task is not None:
                self._renders.discard(task)
            if not self._renders:
                await self._check_memory()

    async def page_ready(self, page: Any, request: Request) -> bool:
        """A render waits with its own settle (never for the ``load`` event, which a page
        whose request was refused may not fire); other requests as scrapy-playwright does."""
        job = request.meta.get(Meta.RENDER)
        if not isinstance(job, RenderJob):
            return False
        await job.settle(page)
        return True

    async def browser_lost(self) -> None:
        """The browser went away: the renders under way fail now (and are tried again),
        not at their deadline; scrapy-playwright starts a new browser for the next."""
        self._lost += 1
        for task in list(self._renders):
            task.cancel()

    async def _check_memory(self) -> None:
        """Between renders: a browser over its memory cap is closed (the next render starts
        a new one), which is how pages that leak or a growing cache are bounded."""
        if not self._memory_cap or self.current_browser is None:
            return
        held = await asyncio.to_thread(browser_memory_mb)
        if held is None:
            return
        self.stats.max_value(Stat.RENDER_BROWSER_PEAK_MB, round(held))
        if held <= self._memory_cap or self._renders:
            return
        logger.info(
            "The browser held %.0f MB (RENDER_BROWSER_MEMORY_MB=%d): it is started again",
            held,
            self._memory_cap,
        )
        self.stats.inc_value(Stat.RENDER_BROWSER_OVER_MEMORY)
        await self._restart()

    async def _stop(self, job: RenderJob) -> None:
        """Close a page that outlived its deadline; the browser with it if it will not."""
        if await job.close():
            return
        logger.warning("A rendered page would not close: the browser is started again")
        await self._restart()

    async def _restart(self) -> None:
        """Close the browser; the next render starts a new one."""
        browser = self.current_browser
        self.stats.inc_value(Stat.RENDER_BROWSER_RESTARTS)
        if browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(browser.close(), CLOSE_GRACE)
        # scrapy-playwright's disconnect callback forgets it; make sure, for one that hung.
        self.forget_browser()
