"""One page rendered without a crawl (``maintext explain --render``): the same
:class:`~.page.RenderJob` (own site only, robots.txt, no pictures, the deadline and the
settle) in a Chromium of its own, driven by Playwright without Scrapy."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from urllib.parse import urljoin

from scrapy_maintext.render.config import CHROMIUM_ARGS, CLOSE_GRACE, RenderConfig
from scrapy_maintext.render.page import RenderJob
from scrapy_maintext.render.policy import PagePolicy


class RenderFailed(Exception):
    """The page could not be rendered; the message says why in one line."""


def render_page(
    body: bytes, url: str, encoding: str | None, user_agent: str, config: RenderConfig
) -> bytes:
    """The page's HTML after its scripts ran (UTF-8)."""
    try:
        return asyncio.run(
            asyncio.wait_for(
                _render(body, url, encoding or "utf-8", user_agent, config),
                config.timeout + 2 * CLOSE_GRACE,
            )
        )
    except TimeoutError:
        raise RenderFailed(f"{url}: the render took over {config.timeout:g} s") from None
    except ImportError:
        raise RenderFailed("rendering needs pip install 'scrapy-maintext[render]'") from None
    except Exception as exc:  # Playwright's errors: a browser that will not start, a crash
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RenderFailed(f"{url}: not rendered ({first})") from None


async def _render(
    body: bytes, url: str, encoding: str, user_agent: str, config: RenderConfig
) -> bytes:
    from playwright.async_api import async_playwright

    robots = _Robots(url, user_agent)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=config.browser_path,
            headless=True,
            args=[*CHROMIUM_ARGS, f"--js-flags=--max-old-space-size={config.memory_mb}"],
        )
        try:
            context = await browser.new_context(
                user_agent=user_agent, service_workers="block", accept_downloads=False
            )
            page = await context.new_page()
            job = RenderJob(
                url=url,
                body=body,
                encoding=encoding,
                user_agent=user_agent,
                policy=PagePolicy(url, config.max_requests, config.max_bytes),
                robots_allow=robots.allows,
                timeout=config.timeout,
                settle_seconds=config.settle,
                thin_wait=config.thin_wait,
                unresponsive=config.unresponsive,
            )
            job.start()
            await job.init_page(page)
            await page.goto(url, wait_until="commit", timeout=config.timeout * 1000)
            await job.settle(page)
            return (await page.content()).encode("utf-8")
        finally:
            await browser.close()


class _Robots:
    """The site's robots.txt, fetched once (off the event loop) when a request needs it."""

    def __init__(self, url: str, user_agent: str) -> None:
        self.url = urljoin(url, "/robots.txt")
        self.user_agent = user_agent
        self._parser: object | None = None

    async def allows(self, url: str) -> bool:
        if self._parser is None:
            self._parser = await asyncio.to_thread(self._load)
        return bool(self._parser.can_fetch(url, self.user_agent))  # type: ignore[attr-defined]

    def _load(self) -> object:
        from protego import Protego

        request = urllib.request.Request(self.url, headers={"User-Agent": self.user_agent})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                text = response.read(500_000).decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            # RFC 9309: a 4xx robots.txt allows everything, a 5xx nothing.
            text = "" if exc.code < 500 else "User-agent: *\nDisallow: /"
        except (urllib.error.URLError, TimeoutError, OSError):
            text = "User-agent: *\nDisallow: /"
        return Protego.parse(text)
