"""One page's render: its requests routed through the policy, its waits (Scrapy-free; the
``page`` and ``route`` objects are Playwright's).

:class:`RenderJob` travels in the render request's meta. scrapy-playwright creates the page
and calls :meth:`RenderJob.init_page`, which routes every request of the page through
:meth:`RenderJob.route` (registered last, so it runs before scrapy-playwright's own): the
main document is answered with the body the crawl fetched already, the others are checked
(:mod:`.policy`, then robots.txt) and fetched one at a time, spaced by the site's delay,
with the crawl's User-Agent; redirects are followed only within the site. Then
:meth:`RenderJob.settle` (called by the handler in place of scrapy-playwright's page
methods) waits until the page is done writing, within the deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from scrapy_maintext.render.marks import THIN_TEXT
from scrapy_maintext.render.policy import MAX_REDIRECTS, Blocked, PagePolicy

logger = logging.getLogger(__name__)

#: How often a settling page's text is measured (seconds).
POLL = 0.1
#: Longest timer (ms) a page still without text is waited for: a script that writes its text
#: "a moment after load" sets one; a longer one is a page's business, not its text.
SHORT_TIMER_MS = 5000
#: Before the page's scripts: ``window.open`` gives nothing (no window, no request), and the
#: short timers still pending are counted (``settle`` waits for them while the page is thin).
INIT_SCRIPT = f"""
window.open = function () {{ return null; }};
(() => {{
  const set = window.setTimeout, clear = window.clearTimeout, pending = new Set();
  window.setTimeout = function (handler, ms, ...rest) {{
    if (typeof handler !== "function" || (ms || 0) > {SHORT_TIMER_MS}) {{
      return set.call(window, handler, ms, ...rest);
    }}
    const id = set.call(window, function () {{
      pending.delete(id);
      return handler.apply(this, rest);
    }}, ms);
    pending.add(id);
    return id;
  }};
  window.clearTimeout = function (id) {{ pending.delete(id); return clear.call(window, id); }};
  Object.defineProperty(window, "__maintextTimers", {{ value: () => pending.size }});
}})();
"""
#: The page's visible text length, and its short timers still pending (a page not loaded
#: yet counts one: its load handlers may set some).
MEASURE = (
    "() => [document.body ? document.body.innerText.length : 0,"
    " (window.__maintextTimers ? window.__maintextTimers() : 0)"
    " + (document.readyState === 'complete' ? 0 : 1)]"
)


@dataclass(eq=False)
class RenderJob:
    """A page to render, what it may do and what it did."""

    url: str
    body: bytes
    encoding: str
    user_agent: str
    policy: PagePolicy
    #: Whether robots.txt lets the crawl fetch a URL (the crawl's robots middleware).
    robots_allow: Callable[[str], Awaitable[bool]]
    timeout: float
    settle_seconds: float
    thin_wait: float
    #: Seconds between two of the page's requests (the site's download delay).
    pace: float = 0.0
    #: The WARC record of the fetched page (``WARC_OUTPUT``): the rendered page's refers to it.
    refers_to: str | None = None
    deadline: float = 0.0
    page: Any = None
    main_served: bool = False
    in_flight: int = 0
    last_activity: float = 0.0
    popups: int = 0
    #: Whether settle() ran out of time (the page was taken as it stood).
    unsettled: bool = False
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: When the page's last request was answered (``time.monotonic()``; 0: none yet).
    _last_answer: float = 0.0
    #: Told when each of the page's requests was answered (``time.monotonic()``): the site's
    #: download slot counts it, so its next request waits the delay from the last one.
    on_sent: Callable[[float], None] | None = None
    #: Windows being closed (kept referenced until they are).
    _closing: set[asyncio.Future[None]] = field(default_factory=set)

    def start(self) -> None:
        self.deadline = time.monotonic() + self.timeout
        self.last_activity = time.monotonic()

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    async def init_page(self, page: Any, request: Any = None) -> None:
        """scrapy-playwright's page init callback: routes, no windows, no websockets."""
        self.page = page
        await page.add_init_script(INIT_SCRIPT)
        page.on("popup", self._popup)
        await page.route("**/*", self.route)
        await page.route_web_socket("**/*", _refuse_websocket)
        context = page.context
        if not getattr(context, "_maintext_routed", False):
            # Pages this job does not route (a window opened anyway): nothing goes out.
            context._maintext_routed = True
            await context.route("**/*", _refuse)

    def _popup(self, popup: Any) -> None:
        self.popups += 1
        self.policy.refuse(Blocked.POPUP)
        self._closing.add(asyncio.ensure_future(_close_quietly(popup)))

    async def route(self, route: Any, request: Any) -> None:
        """Every request of the page: served, refused or fetched within the policy."""
        try:
            await self._route(route, request)
        except Exception as exc:  # a closed page, a cancelled render: never raised into Playwright
            logger.debug("Render request %s ended: %r", request.url, exc)
            with contextlib.suppress(Exception):
                await route.abort("failed")

    async def _route(self, route: Any, request: Any) -> None:
        main_frame = request.frame.parent_frame is None
        navigation = request.is_navigation_request()
        if navigation and main_frame and not self.main_served and _same(request.url, self.url):
            self.main_served = True
            content_type = f"text/html; charset={self.encoding}"
            await route.fulfill(status=200, headers={"content-type": content_type}, body=self.body)
            return
        why = self.policy.check(request.url, request.resource_type, navigation, main_frame)
        if why is None and not await self.robots_allow(request.url):
            why = Blocked.ROBOTS
        if why is not None:
            self.policy.refuse(why)
            # A navigation cancelled as "aborted" leaves the page as it is; any other error
            # would put Chromium's error page in its place.
            await route.abort("aborted" if navigation and main_frame else "blockedbyclient")
            return
        self.in_flight += 1
        try:
            await self._fetch(route, request)
        finally:
            self.in_flight -= 1
            self.last_activity = time.monotonic()

    async def _fetch(self, route: Any, request: Any) -> None:
        """One at a time, each the site's delay after the last was answered, redirects
        checked (and spaced) hop by hop."""
        async with self._lock:
            headers = {**request.headers, "user-agent": self.user_agent}
            url = request.url
            for _ in range(MAX_REDIRECTS + 1):
                if not await self._turn():
                    self.policy.refuse(Blocked.DEADLINE)
                    await route.abort("timedout")
                    return
                # Playwright reads a timeout of 0 as none: at least a millisecond.
                timeout = max(self.remaining() * 1000, 1.0)
                try:
                    response = await route.fetch(
                        url=url, headers=headers, max_redirects=0, timeout=timeout
                    )
                    body = await response.body()
                finally:
                    self._answered()
                self.policy.spent(len(body))
                if not 300 <= response.status < 400:
                    await route.fulfill(response=response, body=body)
                    return
                url = urljoin(url, response.headers.get("location", ""))
                if not self.policy.redirect_allowed(url) or not await self.robots_allow(url):
                    break
            self.policy.refuse(Blocked.REDIRECT)
            await route.abort("blockedbyclient")

    async def _turn(self) -> bool:
        """Wait out the site's delay since the last answer; False when the deadline comes
        first."""
        wait = self._last_answer + self.pace - time.monotonic() if self._last_answer else 0.0
        if wait >= self.remaining():
            return False
        if wait > 0:
            await asyncio.sleep(wait)
        return True

    def _answered(self) -> None:
        self._last_answer = time.monotonic()
        if self.on_sent is not None:
            self.on_sent(self._last_answer)

    async def settle(self, page: Any) -> None:
        """Wait until the page is done: no request on its way and its text unchanged for
        ``settle_seconds``; while it has next to no text, ``thin_wait`` and until it has
        loaded and its short timers have run (a script may still write it); at most until
        the deadline."""
        last, changed, timers = -1, time.monotonic(), 0
        while self.remaining() > POLL:
            try:
                length, timers = await page.evaluate(MEASURE)
            except Exception as exc:  # a document being replaced has no context for a moment
                if page.is_closed():
                    raise
                logger.debug("Render of %s: text not measured (%s)", self.url, exc)
                length = last
            now = time.monotonic()
            if length != last:
                last, changed = length, now
            thin = length < THIN_TEXT
            quiet = self.thin_wait if thin else self.settle_seconds
            idle = now - max(changed, self.last_activity)
            if self.in_flight == 0 and idle >= quiet and not (thin and timers):
                return
            await asyncio.sleep(POLL)
        self.unsettled = True

    async def close(self) -> bool:
        """Close the page (a script that never ends); False when it would not close."""
        if self.page is None:
            return True
        try:
            await asyncio.wait_for(self.page.close(run_before_unload=False), 3.0)
        except Exception:
            return False
        return True


def _same(url: str, other: str) -> bool:
    return url.split("#")[0].rstrip("/") == other.split("#")[0].rstrip("/")


async def _refuse(route: Any, request: Any = None) -> None:
    with contextlib.suppress(Exception):
        await route.abort("blockedbyclient")


def _refuse_websocket(websocket: Any) -> None:
    """A WebSocket without a server: never connected."""
    with contextlib.suppress(Exception):
        websocket.close()


async def _close_quietly(page: Any) -> None:
    with contextlib.suppress(Exception):
        await page.close(run_before_unload=False)
