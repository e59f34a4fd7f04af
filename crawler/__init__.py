"""Polite sitemap/feed crawling with neural main-text extraction, as a Scrapy plugin.

``scrapy_maintext.extract`` and ``scrapy_maintext.Document`` are importable without starting Scrapy;
``scrapy_maintext.Addon`` is the Scrapy add-on (``ADDONS = {"scrapy_maintext.Addon": 500}``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy_maintext.document import Block, Document

if TYPE_CHECKING:
    from scrapy_maintext.addon import Addon
    from scrapy_maintext.extraction import ExtractOptions, extract

__all__ = ["Addon", "Block", "Document", "ExtractOptions", "extract"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Lazy so that ``import scrapy_maintext`` stays cheap and Scrapy-free.
    if name in ("extract", "ExtractOptions"):
        from scrapy_maintext import extraction

        return getattr(extraction, name)
    if name == "Addon":
        from scrapy_maintext.addon import Addon

        return Addon
    raise AttributeError(f"module scrapy_maintext has no attribute {name!r}")
