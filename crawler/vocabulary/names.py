"""Request meta keys, stat names and signals of scrapy-maintext, in one place.

Meta keys are what our components put on requests; stat names (and the prefixes of stat
families, completed by a reason or a site) are what ``scrapy crawl`` reports at its end and
the crawl report reads. ``docs/stats.md`` describes each.
"""

from __future__ import annotations

from typing import Final


class Note:
    """What extraction repaired or lost on a page (``Document.notes``), counted as
    ``Stat.EXTRACT_REPAIRED + note`` and shown in the crawl report (``repaired``)."""

    #: A page of more than ``neural.segment.MAX_BLOCKS`` blocks (or ``MAX_ELEMENTS``
    #: elements): the neural engine read it, and gives its text, only to that limit.
    BLOCKS_CUT: Final = "blocks-cut"


#: ``Response.flags`` of a robots.txt answer the robots middleware made from its copy (kept,
#: another worker's, or read already), not received as such: the WARC archive skips it.
ROBOTS_COPY_FLAG: Final = "robots.txt copy"


class Meta:
    """Request meta keys."""

    #: Base URL of the spider's site a request belongs to.
    SITE: Final = "site"
    #: A render request's :class:`~scrapy_maintext.render.page.RenderJob` (issue 46).
    RENDER: Final = "maintext_render"
    #: The planned URL of a page request (what the page journal records).
    PAGE_URL: Final = "page_url"
    #: A page request that counts in its site's pages in flight until it reaches the
    #: downloader or ends before (``spiders.sites.PageQueue``); removed then.
    PAGE_HELD: Final = "page_held"
    #: Run id of the discovery spider that made a request (requests of a killed earlier run
    #: that come back from a JOBDIR queue are recognised and dropped).
    RUN: Final = "discovery_run"
    #: Discovery requests (sitemaps, feeds) skip the URL filter: they may live off-site.
    SKIP_URL_FILTER: Final = "skip_url_filter"
    #: A spider's own robots.txt request: the site's robots.txt download when it is the
    #: first to ask for it, else answered from the robots middleware's copy.
    ROBOTS_DISCOVERY: Final = "robots_discovery"
    #: On a spider's robots.txt request that is its site's robots.txt download (and on its
    #: retries and redirects): the site (netloc) whose rules its answer settles.
    ROBOTS_DOWNLOAD: Final = "robots_download"
    #: On a robots.txt answer that was not downloaded: where it came from ("state": kept
    #: between runs; "workers": another worker of a shared crawl read it).
    ROBOTS_COPY: Final = "robots_copy"
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
    # Recurring crawls (CRAWL_STATE).
    #: Conditional headers were added from the crawl state (a 304 is expected, not an error).
    CONDITIONAL: Final = "recrawl_conditional"
    #: A sitemap or feed request ("sitemap" or "feed"): conditional with CRAWL_STATE.
    DISCOVERY_DOCUMENT: Final = "discovery_document"
    #: A child sitemap's ``lastmod`` in the index that listed it (ISO 8601), or None.
    SITEMAP_LASTMOD: Final = "sitemap_lastmod"
    #: A page's sitemap ``changefreq`` in seconds (adaptive revisits: an upper bound).
    CHANGE_PERIOD: Final = "recrawl_change_period"


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
    # Discovery: sitemaps and feeds.
    SITEMAPS: Final = "discovery/sitemaps"
    SITEMAPS_BY_KIND: Final = "discovery/sitemaps/"
    SITEMAPS_NOT_FOUND: Final = "discovery/sitemaps/not_found"
    SITEMAPS_OFFSITE: Final = "discovery/sitemaps/offsite"
    SITEMAPS_OVER_LIMIT: Final = "discovery/sitemaps/over_limit"
    #: The most sites in discovery or with pages not yet requested at once.
    SITES_AT_ONCE_MAX: Final = "discovery/sites_at_once_max"
    SITEMAPS_TOO_DEEP: Final = "discovery/sitemaps/too_deep"
    SITEMAPS_TRUNCATED: Final = "discovery/sitemaps/truncated"
    ROBOTS_SITEMAPS: Final = "discovery/robots_sitemaps"
    FEEDS: Final = "discovery/feeds"
    FEEDS_BY_KIND: Final = "discovery/feeds/"
    FEEDS_ANNOUNCED: Final = "discovery/feeds/announced"
    FEEDS_NOT_FOUND: Final = "discovery/feeds/not_found"
    DISCOVERY_INVALID: Final = "discovery/invalid/"
    STALE_REQUESTS: Final = "discovery/stale_requests"
    # URL filter.
    URLS_NORMALIZED: Final = "urlfilter/normalized"
    URLS_DROPPED: Final = "urlfilter/dropped/"
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
    #: Page requests that waited for extraction to catch up (EXTRACT_MAX_PENDING), and the
    #: most pages downloading or waiting for extraction at once.
    EXTRACT_BACKPRESSURE_WAITS: Final = "extract/backpressure_waits"
    EXTRACT_PENDING_MAX: Final = "extract/pending_max"
    EXTRACT_ERROR: Final = "extract/error"
    #: Pages whose worker died under them (killed, out of memory): given to another worker.
    EXTRACT_WORKER_DIED: Final = "extract/worker_died"
    #: Pages given to a worker again (their worker died, or their pool broke).
    EXTRACT_RETRIED: Final = "extract/retried"
    #: Worker pools that broke and were replaced by new ones.
    EXTRACT_POOL_REPLACED: Final = "extract/pool_replaced"
    #: Pages too big for trafilatura's readability/jusText comparison (issue 23).
    EXTRACT_TRAFILATURA_BOUNDED: Final = "extract/trafilatura_bounded/"
    DOCDIR_WRITTEN: Final = "extract/docdir/written"
    #: Documents per language (``extract/language/de``; ``unknown`` without one).
    EXTRACT_LANGUAGE: Final = "extract/language/"
    # The end-of-crawl report (CRAWL_REPORT): writes that failed (the exit status is 1).
    REPORT_ERRORS: Final = "report/errors"
    # WARC archive (WARC_OUTPUT).
    WARC_RECORDS: Final = "warc/records"
    WARC_BYTES: Final = "warc/bytes"
    WARC_FILES: Final = "warc/files"
    WARC_ERRORS: Final = "warc/errors"
    WARC_DOCUMENTS: Final = "warc/documents"
    # Site memory (extraction stage).
    SITE_MEMORY_PAGES: Final = "extract/site_memory/pages"
    SITE_MEMORY_HELD: Final = "extract/site_memory/held/"
    SITE_MEMORY_BLOCKS_REMOVED: Final = "extract/site_memory/blocks_removed"
    SITE_MEMORY_PAGES_CHANGED: Final = "extract/site_memory/pages_changed"
    SITE_MEMORY_SITES: Final = "extract/site_memory/sites"
    SITE_MEMORY_EVICTED: Final = "extract/site_memory/evicted"
    SITE_MEMORY_MAX_HELD: Final = "extract/site_memory/max_held"
    # Pages that need JavaScript (issue 46).
    #: Pages whose text came from the data they ship (``extract/embedded/next-data``...).
    EXTRACT_EMBEDDED: Final = "extract/embedded/"
    #: Pages that looked written by their scripts and had little text without them.
    EXTRACT_NEEDS_JAVASCRIPT: Final = "extract/needs_javascript"
    #: Pages rendered in the browser, and the seconds their renders took (all together).
    RENDER_PAGES: Final = "render/pages"
    RENDER_SECONDS: Final = "render/seconds"
    #: Rendered pages whose text came from the render (more than without it).
    RENDER_USED: Final = "render/used"
    #: Renders that failed (``timeout``, ``crashed``, ``error``): the page is judged as it was.
    RENDER_FAILED: Final = "render/failed/"
    #: Pages that needed JavaScript and could not be rendered (no extra, no browser, never).
    RENDER_UNAVAILABLE: Final = "render/unavailable"
    #: Browser requests refused, by :class:`~scrapy_maintext.render.policy.Blocked` reason.
    RENDER_BLOCKED: Final = "render/blocked/"
    #: Requests rendered pages made (their main documents, served from the crawl, aside).
    RENDER_REQUESTS: Final = "render/requests"
    #: Renders that ran out of RENDER_TIMEOUT while the page was still changing.
    RENDER_UNSETTLED: Final = "render/unsettled"
    #: Browsers closed and started again (a page that would not close, a crash).
    RENDER_BROWSER_RESTARTS: Final = "render/browser_restarts"
    #: Of those, browsers restarted because they held more than RENDER_BROWSER_MEMORY_MB.
    RENDER_BROWSER_OVER_MEMORY: Final = "render/browser_over_memory"
    #: The most memory (MB, PSS) the browser held after a render.
    RENDER_BROWSER_PEAK_MB: Final = "render/browser_peak_mb"
    # Politeness.
    ROBOTS_TRUNCATED: Final = "politeness/robots_truncated"
    ROBOTS_UNREACHABLE: Final = "politeness/robots_unreachable"
    #: robots.txt taken from the crawl state unasked (kept for less than ROBOTSTXT_KEEP_FOR).
    ROBOTS_KEPT: Final = "politeness/robots_kept"
    #: robots.txt asked conditionally that answered 304: the kept copy was used.
    ROBOTS_NOT_MODIFIED: Final = "politeness/robots_not_modified"
    #: robots.txt read by another worker of a shared crawl, taken from Redis unasked.
    ROBOTS_SHARED: Final = "politeness/robots_shared"
    SITE_FAILED: Final = "politeness/site_failed/"
    CRAWL_DELAY: Final = "politeness/crawl_delay/"
    RETRY_AFTER: Final = "politeness/retry_after"
    RETRY_AFTER_GAVE_UP: Final = "politeness/retry_after/gave_up"
    STALLED: Final = "politeness/stalled"
    STALLED_SITES: Final = "politeness/stalled_sites"
    SHARED_WAITS: Final = "politeness/shared/waits"
    SHARED_PAUSED_WAITS: Final = "politeness/shared/paused_waits"
    SHARED_LATE_WAITS: Final = "politeness/shared/late_waits"
    SHARED_RETRY_AFTER_PAUSES: Final = "politeness/shared/retry_after_pauses"
    #: Requests sent on the turn taken with their batch from the shared queue.
    SHARED_READY_TURNS: Final = "politeness/shared/ready_turns"
    #: Turns taken with a batch and given back: the request came too late to use it.
    SHARED_READY_STALE: Final = "politeness/shared/ready_stale"
    #: The most files (sockets included) the crawl process held at once (Linux).
    FILES_OPEN_MAX: Final = "files/open_max"
    # Shutdown and scheduling.
    QUICK_STOP_DROPPED: Final = "shutdown/dropped_queued"
    SCHEDULER_ENQUEUED_LOCAL: Final = "scheduler/enqueued/local"
    SCHEDULER_ENQUEUED_REDIS: Final = "scheduler/enqueued/redis"
    SCHEDULER_DEQUEUED_LOCAL: Final = "scheduler/dequeued/local"
    SCHEDULER_DEQUEUED_REDIS: Final = "scheduler/dequeued/redis"
    SCHEDULER_UNSERIALIZABLE: Final = "scheduler/unserializable"
    # Distributed crawls.
    DISTRIBUTED_ACKED: Final = "distributed/acked"
    DISTRIBUTED_DISCOVERY_CLAIMED: Final = "distributed/discovery_claimed"
    DISTRIBUTED_REAPED: Final = "distributed/reaped"
    DISTRIBUTED_REQUEUED_AT_CLOSE: Final = "distributed/requeued_at_close"
    #: 1 when the crawl's Redis stopped answering (the crawl stopped, its run unfinished).
    DISTRIBUTED_REDIS_LOST: Final = "distributed/redis_lost"
    #: 1 when this worker started the next run of a finished recurring crawl.
    DISTRIBUTED_NEW_RUN: Final = "distributed/new_run"
    #: Shared near-duplicate band keys or members that held no fingerprint: dropped.
    DISTRIBUTED_FINGERPRINTS_SKIPPED: Final = "distributed/fingerprints_skipped"
    #: The shared run under this worker's prefix is another crawl state's (exit status 2).
    DISTRIBUTED_REFUSED: Final = "distributed/refused"
    # Recurring crawls (CRAWL_STATE): one stat per page outcome (``RECRAWL + outcome``), and
    # the crawl report (issue 24) shows ``recrawl/<outcome>`` when present.
    RECRAWL: Final = "recrawl/"
    RECRAWL_NEW: Final = "recrawl/new"
    RECRAWL_CHANGED: Final = "recrawl/changed"
    RECRAWL_UNCHANGED: Final = "recrawl/unchanged"
    RECRAWL_NOT_MODIFIED: Final = "recrawl/not_modified"
    RECRAWL_GONE: Final = "recrawl/gone"
    RECRAWL_SKIPPED_BY_DATE: Final = "recrawl/skipped_by_date"
    RECRAWL_CONDITIONAL: Final = "recrawl/conditional_requests"
    RECRAWL_UNLISTED_CHECKED: Final = "recrawl/unlisted_checked"
    RECRAWL_SITEMAPS_NOT_MODIFIED: Final = "recrawl/sitemaps_not_modified"
    RECRAWL_SITEMAPS_SKIPPED_BY_DATE: Final = "recrawl/sitemaps_skipped_by_date"
    RECRAWL_FEEDS_NOT_MODIFIED: Final = "recrawl/feeds_not_modified"
    RECRAWL_NOT_DUE: Final = "recrawl/not_due"
    #: Pages behind a sitemap or feed that is as it was (not requested).
    RECRAWL_BEHIND_UNCHANGED: Final = "recrawl/behind_unchanged"
    #: Known pages this run decided nothing of (not listed, gone earlier, failed, a site
    #: not crawled): the known total less every outcome above, set at the end.
    RECRAWL_NOT_REACHED: Final = "recrawl/not_reached"
    #: Sitemaps and feeds not requested: not due yet (RECRAWL_SCHEDULE=adaptive).
    RECRAWL_SITEMAPS_NOT_DUE: Final = "recrawl/sitemaps_not_due"
    RECRAWL_FEEDS_NOT_DUE: Final = "recrawl/feeds_not_due"
    RECRAWL_KNOWN: Final = "recrawl/known"
    #: State writes (pages exported or decided) that the state file did not take: those
    #: pages are fetched and exported again by the next run.
    RECRAWL_STATE_WRITES_LOST: Final = "recrawl/state_writes_lost"
    #: Rows of a crawl state in Redis that were no rows (damaged): skipped, their URLs new.
    RECRAWL_STATE_ROWS_SKIPPED: Final = "recrawl/state_rows_skipped"
    #: Keys of a Redis state beside its rows (a sitemap's listing) that held something else:
    #: skipped, written again.
    RECRAWL_STATE_KEYS_SKIPPED: Final = "recrawl/state_keys_skipped"
    # What the outputs accepted (issue 29): a document is exported once every output took it.
    #: Outputs (feeds, DOCDIR_PATH, the page journal) whose writes failed.
    EXPORT_OUTPUTS_FAILED: Final = "export/outputs_failed"
    #: Documents not exported because an output failed (written by none, or not by all).
    EXPORT_NOT_EXPORTED: Final = "export/not_exported"


class Signal:
    """Signals sent by our components (``crawler.signals.connect(handler, signal=...)``)."""

    #: Pages of a site that will not become items: ``site``, ``reason`` (a
    #: :class:`~scrapy_maintext.vocabulary.reasons.SkipReason` value), ``count``, ``planned``.
    PAGE_SKIPPED: Final = object()
    #: A page's outcome in a recurring crawl (``CRAWL_STATE``): ``site``, ``outcome`` (a
    #: :class:`~scrapy_maintext.vocabulary.reasons.RecrawlOutcome`), ``count``.
    RECRAWL_OUTCOME: Final = object()
    #: An item every output accepted (``item``, ``response``, ``spider``): sent after
    #: ``item_scraped`` by the feed exporter; what the crawl state and the page journal
    #: record as exported (:func:`scrapy_maintext.exporters.feeds.exported_signal`).
    ITEM_EXPORTED: Final = object()
    #: The crawl started to stop (Ctrl-C, SIGTERM, ``crawler.stop()``), sent once; handlers
    #: may return a Deferred.
    CRAWL_STOPPING: Final = object()
