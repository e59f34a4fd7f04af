"""Scrapy add-on: ``ADDONS = {"scrapy_maintext.Addon": 500}`` in any Scrapy project.

Enables the extraction pipeline (and the one-file-per-document pipeline, inactive until
``DOCDIR_PATH`` is set), registers the ``tei`` and ``txt`` feed formats and turns on the
politeness middlewares and defaults. Everything is set at "addon" priority and merged
into dict settings, so whatever the project or spider set itself wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object
from scrapy_maintext.distributed.components import apply_distributed
from scrapy_maintext.exporters import FEED_EXPORTERS, FEED_STORAGES
from scrapy_maintext.politeness.defaults import apply_politeness
from scrapy_maintext.vocabulary.settings import setting

PRIORITY = "addon"
ITEM_PIPELINES = {
    "scrapy_maintext.pipelines.extraction.ExtractionPipeline": 400,
    # Recurring crawls (CRAWL_STATE; off without it): unchanged text dropped, revisions.
    "scrapy_maintext.state.recrawl_stage.RecrawlPipeline": 450,
    "scrapy_maintext.exporters.docdir.DocDirPipeline": 800,
}
DOWNLOADER_MIDDLEWARES = {
    "scrapy_maintext.state.resume.ResumeMiddleware": 50,
    # Before the robots middleware (100), which records Crawl-delay per slot.
    "scrapy_maintext.politeness.slots.SiteSlotMiddleware": 60,
    "scrapy_maintext.politeness.retry_after.RetryAfterMiddleware": 560,
    # After RetryMiddleware (550): sees a timeout first and can stop its retries.
    "scrapy_maintext.politeness.stall.StallBudgetMiddleware": 580,
    # After HttpCompressionMiddleware (590) has decompressed the body, before anything that
    # decodes it (meta refresh at 580, the spiders).
    "scrapy_maintext.middlewares.charset.CharsetRepairMiddleware": 585,
    # Recurring crawls (CRAWL_STATE; off without it): conditional requests, 304s, gone
    # pages. Sees a response after decompression, before retries and redirects.
    "scrapy_maintext.state.conditional.ConditionalRequestMiddleware": 570,
    # WARC_OUTPUT: next to the downloader (after DownloaderStats at 850 and the HTTP cache
    # at 900), so every response is archived as received: before HttpCompressionMiddleware
    # (590) decompresses it, RedirectMiddleware (600) follows it or retries replace it.
    "scrapy_maintext.archive.extension.WarcCaptureMiddleware": 950,
    # EXTRACT_MAX_PENDING: page downloads wait while extraction is behind; before a shared
    # crawl's politeness (950) reserves the site's turn.
    "scrapy_maintext.pipelines.backpressure.ExtractionBackpressure": 940,
}
SPIDER_MIDDLEWARES = {
    "scrapy_maintext.middlewares.urlfilter.UrlFilterMiddleware": 600,
    # WARC_OUTPUT: items get the location of their response's WARC record.
    "scrapy_maintext.archive.extension.WarcProvenanceMiddleware": 650,
}
EXTENSIONS = {
    # Progress lines per site and the end-of-crawl report (CRAWL_REPORT_*).
    "scrapy_maintext.report.extension.CrawlReport": 500,
    # One warning when a crawl of a real site names no contact.
    "scrapy_maintext.politeness.contact.ContactCheck": 500,
    # Ctrl-C stops within a second instead of after the pages queued per site.
    "scrapy_maintext.politeness.quick_stop.QuickStop": 500,
    # What an output, the crawl state or the archive failed to write: said, exit status 1.
    "scrapy_maintext.report.losses.LossReport": 500,
    # The open-file limit raised and budgeted; the most files held (files/open_max).
    "scrapy_maintext.open_files.OpenFiles": 500,
    # EXTRACT_GC_FREEZE for every crawl, extraction on or off.
    "scrapy_maintext.heap.HeapFreezeExtension": 500,
}
#: Scrapy's HTTP/1.1 handler whose idle keep-alive connections fit the open-file budget
#: (for the schemes where the project kept Scrapy's own).
HTTP_HANDLER = "scrapy_maintext.scrapy_internals.BoundedHTTP11DownloadHandler"
SCRAPY_HTTP_HANDLER = "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler"
#: Ours with scrapy-playwright's for render requests (issue 46), when the crawl may render.
RENDER_HANDLER = "scrapy_maintext.render.handler.RenderDownloadHandler"


@dataclass(frozen=True)
class Replacement:
    """A Scrapy component and ours doing its job and more: never both enabled."""

    setting: str
    scrapy_cls: str
    ours: str
    #: Our component's order when the project did not enable Scrapy's.
    priority: int


REPLACEMENTS = (
    # robots.txt plus Crawl-delay and a shared robots.txt body.
    Replacement(
        "DOWNLOADER_MIDDLEWARES",
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware",
        "scrapy_maintext.politeness.robots.RobotsPolitenessMiddleware",
        100,
    ),
    # Same redirects; pages that cannot hold a refresh tag are not decoded for it.
    Replacement(
        "DOWNLOADER_MIDDLEWARES",
        "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware",
        "scrapy_maintext.middlewares.metarefresh.HeadMetaRefreshMiddleware",
        580,
    ),
    # Same feeds, but a document is exported only once every feed wrote it; a failed write
    # stops the crawl.
    Replacement(
        "EXTENSIONS",
        "scrapy.extensions.feedexport.FeedExporter",
        "scrapy_maintext.exporters.feeds.CheckedFeedExporter",
        0,
    ),
    # Same AutoThrottle, but never below a site's robots.txt Crawl-delay.
    Replacement(
        "EXTENSIONS",
        "scrapy.extensions.throttle.AutoThrottle",
        "scrapy_maintext.politeness.throttle.PoliteAutoThrottle",
        0,
    ),
)
DUPEFILTER_CLASS = "scrapy_maintext.state.seen_requests.BoundedDupeFilter"


class Addon:
    """Extraction pipeline, ``tei``/``txt`` feeds and polite crawling for any project."""

    def update_settings(self, settings: BaseSettings) -> None:
        merge_components(settings, "ITEM_PIPELINES", ITEM_PIPELINES)
        merge_components(settings, "DOWNLOADER_MIDDLEWARES", DOWNLOADER_MIDDLEWARES)
        merge_components(settings, "SPIDER_MIDDLEWARES", SPIDER_MIDDLEWARES)
        merge_components(settings, "EXTENSIONS", EXTENSIONS)
        for replacement in REPLACEMENTS:
            replace_component(settings, replacement)
        merge_dict(settings, "FEED_EXPORTERS", FEED_EXPORTERS)
        merge_dict(settings, "FEED_STORAGES", FEED_STORAGES)
        apply_download_handlers(settings)
        apply_politeness(settings)
        apply_extraction_buffer(settings)
        # Exact like Scrapy's up to SEENSET_EXACT_MAX requests, then a Bloom filter.
        settings.set("DUPEFILTER_CLASS", DUPEFILTER_CLASS, priority=PRIORITY)
        apply_distributed(settings)


#: Scrapy's SCRAPER_SLOT_MAX_ACTIVE_SIZE (bytes of responses whose items are still in the
#: pipelines, over which it stops downloading); the add-on allows this much per extraction
#: worker. Items are judged in arrival order, so the items behind a slow page wait, all
#: extracted, and their responses count: at 5 MB for 2 workers (about 30 real pages of
#: 166 KB) the items in the pipelines fell to none, with nothing downloading, every few
#: seconds, and the workers idled; at 10 MB they stayed above 15 (scraper slot sampled every
#: 0.1 s in a crawl of ``python -m benchmarks.crawl_throughput --data ...``). One worker,
#: which takes pages in order, keeps Scrapy's 5 MB.
ACTIVE_SIZE_PER_WORKER = 5_000_000


def apply_extraction_buffer(settings: BaseSettings) -> None:
    """SCRAPER_SLOT_MAX_ACTIVE_SIZE scaled by EXTRACT_WORKERS (a project's own value wins)."""
    if not setting(settings, "EXTRACT_ENABLED"):
        return
    # Imported here: the pipeline module loads the worker pool's library.
    from scrapy_maintext.pipelines.config import extract_workers

    size = ACTIVE_SIZE_PER_WORKER * max(extract_workers(settings), 1)
    settings.set("SCRAPER_SLOT_MAX_ACTIVE_SIZE", size, priority=PRIORITY)


def apply_download_handlers(settings: BaseSettings) -> None:
    """Ours for http and https unless the project chose another handler than Scrapy's; the
    one that can also render when this crawl may render (``RENDER_JS``, the render extra
    and a browser)."""
    handlers = settings.getdict("DOWNLOAD_HANDLERS")
    base = settings.getdict("DOWNLOAD_HANDLERS_BASE")
    ours = render_handler(settings) or HTTP_HANDLER
    for scheme in ("http", "https"):
        chosen = handlers.get(scheme, base.get(scheme))
        if chosen is not None and _path(chosen) == SCRAPY_HTTP_HANDLER:
            handlers[scheme] = ours
    priority = settings.getpriority("DOWNLOAD_HANDLERS") or 0
    settings.set("DOWNLOAD_HANDLERS", handlers, priority=priority)


def render_handler(settings: BaseSettings) -> str | None:
    """The rendering download handler, with scrapy-playwright's settings, when this crawl
    may render; None when it may not (it then counts and says what needed JavaScript)."""
    from scrapy_maintext.render.availability import availability
    from scrapy_maintext.render.config import RenderConfig

    config = RenderConfig.from_settings(settings)
    found = availability(config.browser_path, config.forced_unavailable)
    if config.mode == "never" or not found.ok:
        return None
    for name, value in config.playwright_settings().items():
        settings.set(name, value, priority=PRIORITY)
    return RENDER_HANDLER


def merge_components(settings: BaseSettings, name: str, components: dict[str, Any]) -> None:
    """Add components the project did not configure itself (as a path or as a class)."""
    current = settings.getdict(name)
    present = {_path(key) for key in current}
    for path, order in components.items():
        if _path(path) not in present:
            current[path] = order
    settings.set(name, current, priority=settings.getpriority(name) or 0)


def replace_component(settings: BaseSettings, replacement: Replacement) -> None:
    """Ours in place of Scrapy's component, at the order the project gave Scrapy's.

    A project that set our component itself (even to None) keeps its choice; Scrapy's is
    disabled whenever ours is enabled, whether the project listed it or Scrapy's
    ``*_BASE`` setting did.
    """
    name = replacement.setting
    scrapy_cls, ours = load_object(replacement.scrapy_cls), load_object(replacement.ours)
    components = _components(settings, name)
    if ours not in components and scrapy_cls in components and components[scrapy_cls] is None:
        # The project switched Scrapy's off: ours, which does its job, stays off too.
        settings.set_in_component_priority_dict(name, ours, None)
        return
    if ours not in components:
        try:
            settings.replace_in_component_priority_dict(name, scrapy_cls, ours)
        except KeyError:  # not listed by the project, or disabled there
            settings.set_in_component_priority_dict(name, ours, replacement.priority)
    if _components(settings, name).get(ours) is not None:
        settings.set_in_component_priority_dict(name, scrapy_cls, None)


def _components(settings: BaseSettings, name: str) -> dict[Any, Any]:
    """A component priority dict keyed by class (import paths that fail stay strings)."""
    loaded = {}
    for key, value in settings.getdict(name).items():
        try:
            loaded[load_object(key)] = value
        except (ImportError, NameError, ValueError, AttributeError):
            loaded[key] = value
    return loaded


def merge_dict(settings: BaseSettings, name: str, values: dict[str, Any]) -> None:
    """Add keys missing from a plain dict setting, keeping the project's entries."""
    current = settings.getdict(name)
    for key, value in values.items():
        current.setdefault(key, value)
    settings.set(name, current, priority=settings.getpriority(name) or 0)


def _path(key: Any) -> str:
    if isinstance(key, str):
        try:
            key = load_object(key)
        except (ImportError, NameError, ValueError, AttributeError):
            return key
    return f"{key.__module__}.{key.__qualname__}"
