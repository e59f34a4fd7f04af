"""scrapy-playwright's private hooks that rendering (issue 46) uses, behind public names.

scrapy-playwright has no public API for what a bounded render needs: starting Playwright
when the first render comes rather than when the engine starts, a download wrapped with a
deadline, a page's own wait in place of its page methods, word that the browser went away,
forgetting a browser that would not close, and no retry of a page that crashed. Imported
only with the first render (the extra is optional); ``tests/test_scrapy_internals.py``
checks each hook by its behaviour on the installed scrapy-playwright.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler


class PlaywrightHooks(ScrapyPlaywrightDownloadHandler):
    """scrapy-playwright's handler; subclasses override the public methods below."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        # A page that crashed (a script that floods memory) is not opened again
        # (scrapy-playwright would retry it three times).
        self.config.target_closed_max_retries = 0

    async def _maybe_launch_in_thread(self) -> None:
        """scrapy-playwright starts Playwright on ``engine_started``: :meth:`start` does."""
        return None

    async def start(self) -> None:
        """Start Playwright's driver (the browser starts with the first page)."""
        await self._launch()

    @property
    def current_browser(self) -> Any:
        """The running browser, or None."""
        return getattr(self, "browser", None)

    def forget_browser(self) -> None:
        """Drop the browser and its contexts: the next page starts a new one."""
        if hasattr(self, "browser"):
            del self.browser
        self.context_wrappers.clear()

    async def render(
        self, request: Request, download: Callable[[], Awaitable[Response]]
    ) -> Response:
        """One playwright request; ``download()`` is scrapy-playwright's."""
        return await download()

    async def page_ready(self, page: Any, request: Request) -> bool:
        """Wait until ``page`` is ready to be read; False: scrapy-playwright's page methods."""
        return False

    async def browser_lost(self) -> None:
        """The browser went away (scrapy-playwright then starts a new one when asked)."""

    async def _download_request(self, request: Request, spider: Any = None) -> Response:
        async def download() -> Response:
            response: Response = await super(PlaywrightHooks, self)._download_request(
                request, spider
            )
            return response

        return await self.render(request, download)

    async def _apply_page_methods(self, page: Any, request: Request, spider: Any) -> None:
        if not await self.page_ready(page, request):
            await super()._apply_page_methods(page, request, spider)

    async def _browser_disconnected_callback(self) -> None:
        await self.browser_lost()
        await super()._browser_disconnected_callback()
