"""Request meta keys, stat names and signals of scrapy-maintext, in one place.

Meta keys are what our components put on requests; stat names (and the prefixes of stat
families, completed by a reason or a site) are what ``scrapy crawl`` reports at its end and
the crawl report reads. ``docs/stats.md`` describes each.
"""

from __future__ import annotations

from typing import Final


class Meta:
    """Request meta keys."""

    #: Base URL of the spider's site a request belongs to.
    SITE: Final = "site"
    #: The planned URL of a page request (what the page journal records).
    PAGE_URL: Final = "page_url"
    #: Run id of the discovery spider that made a request (requests of a killed earlier run
    #: that come back from a JOBDIR queue are recognised and dropped).
    RUN: Final = "discovery_run"
    #: Discovery requests (sitemaps, feeds) skip the URL filter: they may live off-site.
    SKIP_URL_FILTER: Final = "skip_url_filter"
    #: A spider's own robots.txt request, answered from the robots middleware's cache.
    ROBOTS_DISCOVERY: Final = "robots_discovery"
    #: How the page was found (``sitemap``, ``feed``, ``link``...), and from where.
    DISCOVERED_VIA: Final = "discovered_via"
    SOURCE_URL: Final = "source_url"
    SOURCE_DATE: Final = "source_date"
    SOURCE_TITLE: Final = "source_title"
    #: Nesting depth of a sitemap (index of indexes...), link depth in explore mode.
    SITEMAP_DEPTH: Final = "sitemap_depth"
    LINK_DEPTH: Final = "link_depth"
    #: A feed URL given on the command line (not guessed).
    DIRECT_FEED: Final = "direct_feed"
    #: Scrapy's download slot key (set to ``host:port`` for URLs with a port).
    DOWNLOAD_SLOT: Final = "download_slot"
    #: Retry-After: retries so far, and the pause asked for.
    RETRY_AFTER_TIMES: Final = "retry_after_times"
    RETRY_AFTER_PAUSE: Final = "retry_after_pause"
    #: Stall budget spent: the request's shortened last chance.
    STALL_LAST_CHANCE: Final = "stall_last_chance"
    #: Distributed crawl: the Redis lease of a request, and requests kept on this worker.
    DISTRIBUTED_LEASE: Final = "distributed_lease"
    DISTRIBUTED_LOCAL: Final = "distributed_local"


class Stat:
    """Stat names (full names) and prefixes of stat families (``PREFIX + reason``)."""

    # Discovery (spiders).
    PAGES_VIA: Final = "discovery/pages/"
    PAGE_ERRORS: Final = "discovery/page_errors/"
    DISCOVERY_ERRORS: Final = "discovery/errors/"
    REJECTED: Final = "discovery/rejected/"
    SKIPPED: Final = "discovery/skipped/"
    LEFT_FOR_RESUME: Final = "discovery/pages/left_for_resume"
    CHARSET_REPAIRED: Final = "discovery/charset_repaired"
    # Extraction pipeline.
    EXTRACT_ITEMS: Final = "extract/items"
    EXTRACT_BY: Final = "extract/"
    EXTRACT_FALLBACK: Final = "extract/fallback"
    EXTRACT_ESCALATED: Final = "extract/neural_escalated"
    EXTRACT_NEURAL_ERROR: Final = "extract/neural_error"
    EXTRACT_REPAIRED: Final = "extract/repaired/"
    EXTRACT_REASON: Final = "extract/reason/"
    EXTRACT_DROPPED: Final = "extract/dropped/"
    EXTRACT_TIMEOUT: Final = "extract/timeout"
    EXTRACT_ERROR: Final = "extract/error"
    # Politeness.
    ROBOTS_TRUNCATED: Final = "politeness/robots_truncated"
    ROBOTS_UNREACHABLE: Final = "politeness/robots_unreachable"
    SITE_FAILED: Final = "politeness/site_failed/"
    CRAWL_DELAY: Final = "politeness/crawl_delay/"


class Signal:
    """Signals sent by our components (``crawler.signals.connect(handler, signal=...)``)."""

    #: Pages of a site that will not become items: ``site``, ``reason`` (a
    #: :class:`~scrapy_maintext.vocabulary.reasons.SkipReason` value), ``count``, ``planned``.
    PAGE_SKIPPED: Final = object()
