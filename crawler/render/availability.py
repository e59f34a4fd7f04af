"""Whether this crawl can render, and what the crawl and ``maintext extract`` say when it
cannot (Scrapy-free)."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

#: ``Document.reason`` of a page with no main text that needs JavaScript.
NEEDS_JAVASCRIPT = "needs-javascript"
INSTALL = "pip install 'scrapy-maintext[render]'"
#: What ``maintext extract`` adds to its count of such pages.
RENDER_HINT = (
    "pages need JavaScript (maintext extract runs no scripts; a crawl renders them: "
    f"{INSTALL} and Chromium, RENDER_JS=auto)"
)


@dataclass(frozen=True)
class Availability:
    """Whether pages can be rendered, and if not, why (one phrase)."""

    ok: bool
    why: str = ""


def availability(browser_path: str, forced_unavailable: bool = False) -> Availability:
    """Rendering needs scrapy-playwright (the ``render`` extra) and a Chromium to run."""
    if forced_unavailable:
        return Availability(False, "RENDER_AVAILABLE=unavailable")
    if not _installed("scrapy_playwright") or not _installed("playwright"):
        return Availability(False, f"the render extra is not installed ({INSTALL})")
    if not (os.path.isfile(browser_path) and os.access(browser_path, os.X_OK)):
        return Availability(
            False,
            f"no browser at RENDER_BROWSER_PATH={browser_path} (apt install chromium, or "
            "name another Chromium)",
        )
    return Availability(True)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or blocked installation
        return False


def unrendered_line(count: int, mode: str, why: str) -> str:
    """The crawl's last words on pages that needed JavaScript and were not rendered."""
    pages = "page needs" if count == 1 else "pages need"
    if mode == "never":
        how = "RENDER_JS=never: -s RENDER_JS=auto renders them"
    else:
        how = f"not rendered: {why}"
    return f"{count} {pages} JavaScript ({how}); counted as dropped needs_javascript"
