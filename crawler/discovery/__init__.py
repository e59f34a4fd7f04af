"""Scrapy-free discovery core: robots.txt, sitemaps, feeds and URL hygiene, all from bytes."""

from __future__ import annotations

from scrapy_maintext.discovery.feeds import FeedEntry, FeedParseResult, find_feed_links, parse_feed
from scrapy_maintext.discovery.sitemaps import SitemapEntry, SitemapParseResult, parse_sitemap
from scrapy_maintext.discovery.urls import UrlPolicy, normalize_url

__all__ = [
    "FeedEntry",
    "FeedParseResult",
    "SitemapEntry",
    "SitemapParseResult",
    "UrlPolicy",
    "find_feed_links",
    "normalize_url",
    "parse_feed",
    "parse_sitemap",
]
