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
from scrapy.exceptions import DownloadCancelledError
from scrapy.http import Response
from scrapy_maintext.render.page import Fetched, RenderJob, TooLarge
from scrapy_maintext.scrapy_internals import BoundedHTTP11DownloadHandler
from scrapy_maintext.vocabulary.names import Meta


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
        job = request.meta.get(Meta.RENDER)
        if isinstance(job, RenderJob):
            job.fetcher = self.fetch_for_page
        browser = await self._browser_handler()
        response: Response = await browser.download_request(request)
        return response

    async def fetch_for_page(
        self, url: str, headers: dict[str, str], max_bytes: int, timeout: float
    ) -> Fetched:
        """One of a rendered page's requests, by Scrapy's HTTP handler (no middleware: the
        page's policy and robots.txt were asked already): stopped as soon as its
        Content-Length or the bytes received pass ``max_bytes``."""
        meta = {
            "download_maxsize": max_bytes,
            "download_warnsize": 0,
            "download_timeout": max(timeout, 0.001),
        }
        try:
            response = await super().download_request(Request(url, headers=headers, meta=meta))
        except DownloadCancelledError as exc:
            raise TooLarge(str(exc)) from None
        answer = {str(k).lower(): str(v) for k, v in response.headers.to_unicode_dict().items()}
        return Fetched(response.status, answer, bytes(response.body))

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
