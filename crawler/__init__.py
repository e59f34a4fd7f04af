"""Polite sitemap/feed crawling with neural main-text extraction, as a Scrapy plugin.

``crawler.extract`` and ``crawler.Document`` are importable without starting Scrapy;
``crawler.Addon`` is the Scrapy add-on (``ADDONS = {"crawler.Addon": 500}``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.document import Block, Document

if TYPE_CHECKING:
    from crawler.addon import Addon
    from crawler.extraction import ExtractOptions, extract

__all__ = ["Addon", "Block", "Document", "ExtractOptions", "extract"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Lazy so that ``import crawler`` stays cheap and Scrapy-free.
    if name in ("extract", "ExtractOptions"):
        from crawler import extraction

        return getattr(extraction, name)
    if name == "Addon":
        from crawler.addon import Addon

        return Addon
    raise AttributeError(f"module 'crawler' has no attribute {name!r}")
