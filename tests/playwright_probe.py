"""scrapy-playwright's private hooks behind ``scrapy_maintext.scrapy_internals.playwright``,
driven with the real Chromium in a fresh process with its own asyncio reactor; prints what
it saw as JSON (``tests/test_scrapy_internals.py`` reads it)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PAGE = b"<html><body><p>Written by the server.</p></body></html>"


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: Any) -> None:
        return


async def probe(url: str) -> dict[str, Any]:
    import psutil
    from scrapy import Request, signals
    from scrapy.settings import Settings
    from scrapy.utils.test import get_crawler
    from scrapy_maintext.render.config import RenderConfig
    from scrapy_maintext.scrapy_internals.playwright import PlaywrightHooks

    calls: list[str] = []

    class Probe(PlaywrightHooks):
        async def render(self, request: Request, download: Any) -> Any:
            calls.append("render")
            return await download()

        async def page_ready(self, page: Any, request: Request) -> bool:
            calls.append("page_ready:" + await page.evaluate("document.body.innerText"))
            return True

        async def browser_lost(self) -> None:
            calls.append("browser_lost")

    settings = RenderConfig.from_settings(Settings()).playwright_settings()
    crawler = get_crawler(settings_dict=settings)
    handler = Probe(crawler)
    seen: dict[str, Any] = {"retries": handler.config.target_closed_max_retries}
    await crawler.signals.send_catch_log_async(signals.engine_started)
    seen["started_by_engine"] = hasattr(handler, "browser_provider")
    await handler.start()
    seen["driver_started"] = hasattr(handler, "browser_provider")
    seen["browser_before_page"] = handler.current_browser is not None
    response = await handler.download_request(Request(url, meta={"playwright": True}))
    seen["text"] = "Written by the server." in response.text
    seen["browser_after_page"] = handler.current_browser is not None
    for child in psutil.Process().children(recursive=True):
        try:
            if "chrom" in child.name() and not any(
                a.startswith("--type=") for a in child.cmdline()
            ):
                child.kill()  # the browser itself, not its helpers
        except psutil.Error:
            continue  # a helper that has exited already
    deadline = time.monotonic() + 20
    while "browser_lost" not in calls and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    handler.forget_browser()
    seen["forgotten"] = handler.current_browser is None and not handler.context_wrappers
    seen["calls"] = calls
    await handler.close()
    return seen


def main() -> None:
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from scrapy.utils.defer import deferred_from_coro
    from twisted.internet import reactor

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    out: dict[str, Any] = {}

    def done(result: Any) -> None:
        out.update(result if isinstance(result, dict) else {"error": repr(result)})
        reactor.stop()  # type: ignore[attr-defined]

    deferred_from_coro(probe(url)).addBoth(done)
    reactor.run()  # type: ignore[attr-defined]
    server.shutdown()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
