"""The ``RENDER_*`` settings, read once, and the scrapy-playwright settings they imply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scrapy.settings import BaseSettings
from scrapy_maintext.vocabulary.settings import setting

MODES = ("auto", "never", "always")
#: Chromium's switches for a crawl: headless, nothing phoned home (no sync, no component
#: updates, no QUIC to Google), no GPU, no DNS prefetch or WebRTC that would reach hosts
#: past the request router.
CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--dns-prefetch-disable",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-dev-shm-usage",
)
#: The browser context every render uses (its own name among scrapy-playwright's).
CONTEXT = "maintext-render"
#: Seconds past RENDER_TIMEOUT a render's page gets to close before the browser is restarted.
CLOSE_GRACE = 3.0


@dataclass(frozen=True)
class RenderConfig:
    """The ``RENDER_*`` settings (defaults in ``vocabulary.settings``)."""

    mode: str
    browser_path: str
    timeout: float
    settle: float
    thin_wait: float
    unresponsive: float
    max_requests: int
    max_bytes: int
    max_pages: int
    memory_mb: int
    #: 0: no cap on the whole browser's memory.
    browser_memory_mb: int
    #: RENDER_AVAILABLE=unavailable: as if the render extra were not installed.
    forced_unavailable: bool

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RenderConfig:
        mode = str(setting(settings, "RENDER_JS")).strip().lower()
        if mode not in MODES:
            raise ValueError(f"RENDER_JS must be one of {', '.join(MODES)}, not {mode!r}")
        return cls(
            mode=mode,
            browser_path=setting(settings, "RENDER_BROWSER_PATH"),
            timeout=max(setting(settings, "RENDER_TIMEOUT"), 1.0),
            settle=max(setting(settings, "RENDER_SETTLE"), 0.1),
            thin_wait=max(setting(settings, "RENDER_THIN_WAIT"), 0.0),
            unresponsive=max(setting(settings, "RENDER_UNRESPONSIVE"), 0.5),
            max_requests=max(setting(settings, "RENDER_MAX_REQUESTS"), 1),
            max_bytes=max(setting(settings, "RENDER_MAX_BYTES"), 1),
            max_pages=max(setting(settings, "RENDER_MAX_PAGES"), 1),
            memory_mb=max(setting(settings, "RENDER_MEMORY_MB"), 64),
            browser_memory_mb=max(setting(settings, "RENDER_BROWSER_MEMORY_MB"), 0),
            forced_unavailable=setting(settings, "RENDER_AVAILABLE").strip() == "unavailable",
        )

    def playwright_settings(self) -> dict[str, Any]:
        """scrapy-playwright's settings for this crawl's renders."""
        args = [*CHROMIUM_ARGS, f"--js-flags=--max-old-space-size={self.memory_mb}"]
        return {
            "PLAYWRIGHT_BROWSER_TYPE": "chromium",
            "PLAYWRIGHT_LAUNCH_OPTIONS": {
                "executable_path": self.browser_path,
                "headless": True,
                "args": args,
                "timeout": self.timeout * 1000,
            },
            "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": self.max_pages,
            "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": self.timeout * 1000,
            "PLAYWRIGHT_RESTART_DISCONNECTED_BROWSER": True,
        }
