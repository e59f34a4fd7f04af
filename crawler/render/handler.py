"""The download handler of a crawl that may render: ours (Scrapy's HTTP/1.1 handler with a
bounded pool) for every request, the browser's for the render requests of :mod:`.renderer`
(``playwright`` in their meta).

The browser's handler (:class:`~.browser.BrowserHandler`, scrapy-playwright's) is imported,
made and started with the first render: a crawl that renders nothing pays for none of it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy_maintext.scrapy_internals import BoundedHTTP11DownloadHandler


class RenderDownloadHandler(BoundedHTTP11DownloadHandler):
    """Ours, and scrapy-playwright's from the first render on."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.crawler = crawler
        self._browser: Any = None
        self._starting = asyncio.Lock()

    async def download_request(self, request: Request) -> Response:
        if not request.meta.get("playwright"):
            return await super().download_request(request)
        browser = await self._browser_handler()
        response: Response = await browser.download_request(request)
        return response

    async def _browser_handler(self) -> Any:
        async with self._starting:
            if self._browser is None:
                from scrapy_maintext.render.browser import BrowserHandler

                handler = BrowserHandler(self.crawler)
                await handler.start()
                self._browser = handler
        return self._browser

    async def close(self) -> None:
        await super().close()
        if self._browser is not None:
            await self._browser.close()
