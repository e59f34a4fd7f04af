"""One page's render: its requests routed through the policy, its waits (Scrapy-free; the
``page`` and ``route`` objects are Playwright's).

:class:`RenderJob` travels in the render request's meta. scrapy-playwright creates the page
and calls :meth:`RenderJob.init_page`, which routes every request of the page through
:meth:`RenderJob.route` (registered last, so it runs before scrapy-playwright's own): the
main document is answered with the body the crawl fetched already, the others are checked
(:mod:`.policy`, then robots.txt) and fetched one at a time, spaced by the site's delay,
with the crawl's User-Agent; redirects are followed only within the site. In a crawl they
are fetched by the crawl's own HTTP handler (:attr:`RenderJob.fetcher`), which stops a
response as soon as it would pass the page's byte allowance (its Content-Length first, then
the bytes as they arrive); without one (``maintext explain --render``), by Playwright,
whose body is checked once read. Then :meth:`RenderJob.settle` (called by the handler in
place of scrapy-playwright's page methods) waits until the page is done writing, within the
deadline; a page whose scripts keep it from answering for ``unresponsive`` seconds (a script
that never ends) is closed then, not at the deadline.
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
#: Before the page's scripts: ``window.open`` gives nothing (no window, no request; the
#: tries are counted), and the short timers still pending are counted (``settle`` waits for
#: them while the page is thin).
INIT_SCRIPT = f"""
(() => {{
  let opened = 0;
  window.open = function () {{ opened += 1; return null; }};
  Object.defineProperty(window, "__maintextOpened", {{ value: () => opened }});
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
#: The page's visible text length, its short timers still pending (a page not loaded yet
#: counts one: its load handlers may set some) and the windows it tried to open.
MEASURE = (
    "() => [document.body ? document.body.innerText.length : 0,"
    " (window.__maintextTimers ? window.__maintextTimers() : 0)"
    " + (document.readyState === 'complete' ? 0 : 1),"
    " window.__maintextOpened ? window.__maintextOpened() : 0]"
)
#: Response headers not passed on to the browser with a body fetched whole.
_HOP_HEADERS = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-encoding", "content-length"}
)


class PageUnresponsive(Exception):
    """The page's scripts kept it from answering (a script that never ends)."""


class PageCrashed(Exception):
    """The page's renderer died (a script that floods memory): the page's doing, not tried
    again."""


class TooLarge(Exception):
    """A response that would pass the page's byte allowance (stopped, not passed on)."""


@dataclass(frozen=True)
class Fetched:
    """One of the page's requests, answered."""

    status: int
    headers: dict[str, str]
    body: bytes


#: Fetches ``(url, headers, max_bytes, timeout)``; raises :class:`TooLarge` past max_bytes.
Fetcher = Callable[[str, dict[str, str], int, float], Awaitable[Fetched]]


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
    #: Seconds the page may go without answering before it is taken for hung.
    unresponsive: float = 5.0
    #: The crawl's HTTP handler (set by the download handler); None: Playwright fetches.
    fetcher: Fetcher | None = None
    deadline: float = 0.0
    page: Any = None
    main_served: bool = False
    in_flight: int = 0
    last_activity: float = 0.0
    #: Windows the page tried to open with ``window.open`` (counted as they are measured).
    popups: int = 0
    #: Whether the page's renderer died (Playwright's ``crash`` event).
    crashed: bool = False
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
        page.on("crash", self._crash)
        await page.route("**/*", self.route)
        await page.route_web_socket("**/*", self._websocket)
        context = page.context
        if not getattr(context, "_maintext_routed", False):
            # Pages this job does not route (a window opened anyway): nothing goes out.
            context._maintext_routed = True
            await context.route("**/*", _refuse)

    def _popup(self, popup: Any) -> None:
        # A window opened past the page's ``window.open`` (a link with a target).
        self.policy.refuse(Blocked.POPUP)
        self._closing.add(asyncio.ensure_future(_close_quietly(popup)))

    def _crash(self, page: Any) -> None:
        self.crashed = True

    async def _websocket(self, websocket: Any) -> None:
        """A WebSocket the page opens: never connected to any server, counted."""
        self.policy.refuse(Blocked.WEBSOCKET)
        with contextlib.suppress(Exception):
            await websocket.close()

    def _windows(self, opened: int) -> None:
        """Count the windows the page tried to open since the last measure."""
        while self.popups < opened:
            self.popups += 1
            self.policy.refuse(Blocked.POPUP)

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
        if why is None and not self.policy.take():
            why = Blocked.TOO_MANY_REQUESTS
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
            # Identity: the byte allowance counts what the page gets.
            headers = {
                **request.headers,
                "user-agent": self.user_agent,
                "accept-encoding": "identity",
            }
            url = request.url
            for hop in range(MAX_REDIRECTS + 1):
                why = self._hop_refused(hop) or (None if await self._turn() else Blocked.DEADLINE)
                if why is not None:
                    self.policy.refuse(why)
                    await route.abort("timedout" if why == Blocked.DEADLINE else "blockedbyclient")
                    return
                # Playwright reads a timeout of 0 as none: at least a millisecond.
                timeout = max(self.remaining() * 1000, 1.0)
                try:
                    answer = await self._get(route, url, headers, self.policy.allowance(), timeout)
                except TooLarge as exc:
                    logger.debug("Render of %s: %s", self.url, exc)
                    self.policy.refuse(Blocked.TOO_MANY_BYTES)
                    await route.abort("blockedbyclient")
                    return
                finally:
                    self._answered()
                self.policy.spent(len(answer.body))
                if not 300 <= answer.status < 400:
                    kept = {k: v for k, v in answer.headers.items() if k not in _HOP_HEADERS}
                    await route.fulfill(status=answer.status, headers=kept, body=answer.body)
                    return
                url = urljoin(url, answer.headers.get("location", ""))
                if not self.policy.redirect_allowed(url) or not await self.robots_allow(url):
                    break
            self.policy.refuse(Blocked.REDIRECT)
            await route.abort("blockedbyclient")

    def _hop_refused(self, hop: int) -> str | None:
        """Why this hop may not go out: the page's bytes spent, or (a redirect's next hop,
        a request of its own) its requests."""
        if self.policy.allowance() <= 0:
            return Blocked.TOO_MANY_BYTES
        if hop and not self.policy.take():
            return Blocked.TOO_MANY_REQUESTS
        return None

    async def _get(
        self, route: Any, url: str, headers: dict[str, str], allowed: int, timeout_ms: float
    ) -> Fetched:
        if self.fetcher is not None:
            return await self.fetcher(url, headers, allowed, timeout_ms / 1000)
        response = await route.fetch(url=url, headers=headers, max_redirects=0, timeout=timeout_ms)
        body = await response.body()
        if len(body) > allowed:
            raise TooLarge(f"{url}: {len(body)} bytes, {allowed} allowed")
        return Fetched(response.status, {k.lower(): v for k, v in response.headers.items()}, body)

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
                length, timers, opened = await asyncio.wait_for(
                    page.evaluate(MEASURE), self.unresponsive
                )
                self._windows(opened)
            except TimeoutError:
                await self.close()
                raise PageUnresponsive(
                    f"{self.url}: its scripts kept it busy for {self.unresponsive:g} s"
                ) from None
            except Exception as exc:  # a document being replaced has no context for a moment
                if self.crashed:
                    raise PageCrashed(f"{self.url}: the page crashed") from None
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


async def _close_quietly(page: Any) -> None:
    with contextlib.suppress(Exception):
        await page.close(run_before_unload=False)
