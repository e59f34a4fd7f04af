"""Every setting of scrapy-maintext: name, default, type and a one-line doc, in one place.

Components read their settings through :func:`setting`, which takes the default and the type
from here, so a default is written once. ``docs/settings.md`` is generated from this module
(``python -m scrapy_maintext.vocabulary.settings > docs/settings.md``; a test checks it).
:data:`SCRAPY_DEFAULTS` are Scrapy's own settings that the add-on sets at ``addon`` priority:
a project's or the command line's value wins.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


@dataclass(frozen=True)
class Setting:
    """One setting: its default, its type (``bool``, ``int``, ``float``, ``str``, ``list``)
    and what it does."""

    name: str
    default: Any
    type: type
    doc: str
    group: str


def _group(group: str, *rows: tuple[str, Any, type, str]) -> list[Setting]:
    return [Setting(name, default, kind, doc, group) for name, default, kind, doc in rows]


_OURS = [
    *_group(
        "Politeness",
        (
            "CRAWLER_CONTACT",
            "",
            str,
            "URL or mailto: of who runs the crawl; put in the User-Agent.",
        ),
        ("ROBOTSTXT_CRAWL_DELAY_ENABLED", True, bool, "Apply robots.txt Crawl-delay per site."),
        ("ROBOTSTXT_CRAWL_DELAY_MAX", 60.0, float, "Cap (seconds) on a site's Crawl-delay."),
        (
            "ROBOTSTXT_UNREACHABLE_DISALLOW",
            True,
            bool,
            "robots.txt unreachable or 5xx: the site is not crawled (RFC 9309).",
        ),
        (
            "ROBOTSTXT_KEEP_FOR",
            86400,
            int,
            "Seconds a robots.txt kept in CRAWL_STATE is used unasked (RFC 9309: 24 h at most).",
        ),
        ("RETRY_AFTER_ENABLED", True, bool, "Honour Retry-After on 429/503 with a site pause."),
        ("RETRY_AFTER_HTTP_CODES", [429, 503], list, "Statuses whose Retry-After is honoured."),
        ("RETRY_AFTER_MAX_DELAY", 300.0, float, "Longest pause (seconds) a site may ask for."),
        ("RETRY_AFTER_DEFAULT_DELAY", 5.0, float, "Pause when Retry-After is missing or bad."),
        ("RETRY_AFTER_MAX_RETRIES", 3, int, "Retries of one request after a Retry-After."),
        (
            "STALL_BUDGET",
            120.0,
            float,
            "Seconds of timed-out requests after which a site is given up.",
        ),
        ("SHUTDOWN_DROP_QUEUED", True, bool, "Ctrl-C fails requests queued per site at once."),
        (
            "SHUTDOWN_TIMEOUT",
            15.0,
            float,
            "Seconds after Ctrl-C/SIGTERM before the crawl is stopped as a second one does.",
        ),
        (
            "KEEPALIVE_MAX_IDLE",
            1024,
            int,
            "Idle keep-alive connections kept, all sites together (less if ulimit -n is low, "
            "or 2 x DISCOVERY_SITES_AT_ONCE).",
        ),
    ),
    *_group(
        "Discovery",
        ("DISCOVERY_SITEMAP_MAX_DEPTH", 3, int, "Nesting limit of sitemap indexes."),
        ("DISCOVERY_MAX_SITEMAPS", 1000, int, "Sitemaps read from one site at most."),
        ("DISCOVERY_EXPLORE_MAX_DEPTH", 5, int, "Link depth limit of explore mode."),
        (
            "DISCOVERY_SITEMAPS_BEFORE_PAGES",
            25,
            int,
            "Unread sitemaps of a site above which the pages found so far go out between them.",
        ),
        (
            "DISCOVERY_SITES_AT_ONCE",
            0,
            int,
            "Sites in discovery or with pages not yet requested at a time "
            "(0: 4 x CONCURRENT_REQUESTS; negative: every site).",
        ),
        (
            "DISCOVERY_HTML_BYTES",
            True,
            bool,
            "Page items carry the body as bytes when the extraction pipeline takes it.",
        ),
        ("URLFILTER_ENABLED", True, bool, "Normalise URLs (courlan) and keep requests on-site."),
        ("SEENSET_EXACT_MAX", 1_000_000, int, "Requests kept in an exact seen set before Bloom."),
        ("SEENSET_ERROR_RATE", 1e-6, float, "False-positive rate of the Bloom seen set."),
    ),
    *_group(
        "Extraction",
        ("EXTRACT_ENABLED", True, bool, "Run the extraction pipeline."),
        (
            "EXTRACT_ENGINE",
            "auto",
            str,
            "auto (neural, trafilatura when unsure), neural, trafilatura.",
        ),
        (
            "EXTRACT_MODEL",
            None,
            str,
            "Model folder: a path, or a shipped folder's name (v6: the previous default; v4.1: "
            "trained also on research-only and AGPL-3.0 pages); unset: the default model, v7, "
            "trained only on data whose licence allows commercial use.",
        ),
        (
            "EXTRACT_WORKERS",
            None,
            int,
            "Extraction processes; unset: one per core the process may use (affinity, cgroup "
            "CPU quota), 0: threads.",
        ),
        ("EXTRACT_TIMEOUT", 30.0, float, "Per-page limit (seconds); the worker is then killed."),
        (
            "EXTRACT_MAX_PENDING",
            32,
            int,
            "Pages downloading or waiting for extraction at most; more wait (0: no bound).",
        ),
        ("EXTRACT_MAX_BYTES", 10_000_000, int, "Bodies above this are not extracted."),
        (
            "EXTRACT_INCLUDE_COMMENTS",
            False,
            bool,
            "Also extract reader comments, into the comments field.",
        ),
        ("EXTRACT_INCLUDE_TABLES", True, bool, "Keep tables in the text."),
        ("EXTRACT_CAPTIONS", False, bool, "Keep image captions and photo credits in the text."),
        (
            "EXTRACT_PAGE_TYPES",
            True,
            bool,
            "Predict each page's type (page_type); the article rules of the text convention "
            "then apply to article pages only.",
        ),
        (
            "EXTRACT_SECOND_OPINION",
            True,
            bool,
            "Ask trafilatura too when the neural text is empty or a sliver of the page.",
        ),
        (
            "EXTRACT_IMAGES",
            True,
            bool,
            "Find the article's images with their captions and credits (the images field).",
        ),
        ("EXTRACT_FAVOR_PRECISION", False, bool, "Prefer less text, less boilerplate."),
        ("EXTRACT_FAVOR_RECALL", False, bool, "Prefer more text, more boilerplate."),
        ("EXTRACT_URL_FIELD", "url", str, "Item field holding the page URL."),
        ("EXTRACT_HTML_FIELD", "html", str, "Item field holding the page HTML."),
        ("EXTRACT_KEEP_HTML", False, bool, "Keep the HTML field in exported items."),
        ("EXTRACT_MIN_TEXT_LENGTH", 1, int, "Pages with less main text (characters) are dropped."),
        ("EXTRACT_DROP_NO_TEXT", True, bool, "Drop pages without main text."),
        ("EXTRACT_DEDUP", True, bool, "Drop near-duplicate documents (SimHash)."),
        ("EXTRACT_DEDUP_DISTANCE", 3, int, "Bits two fingerprints may differ by to be duplicates."),
        ("EXTRACT_DEDUP_STORE", None, str, "Class keeping fingerprints (set for Redis crawls)."),
        (
            "EXTRACT_DATE_FALLBACK_FIELD",
            "source_date",
            str,
            "Item field whose date is used when the page gives none.",
        ),
        (
            "EXTRACT_TITLE_FALLBACK_FIELD",
            "source_title",
            str,
            "Item field whose title is used when the page gives none.",
        ),
        ("EXTRACT_GC_FREEZE", True, bool, "Keep the crawl's long-lived heap out of GC passes."),
        (
            "EXTRACT_LANGUAGES",
            [],
            list,
            "Keep only documents in these languages (ISO 639-1, e.g. de,fr); empty: all.",
        ),
    ),
    *_group(
        "Site memory",
        ("SITE_MEMORY_ENABLED", False, bool, "Remove blocks repeated across a site's pages."),
        ("SITE_MEMORY_MIN_PAGES", 2, int, "Pages a block must repeat on to be template."),
        ("SITE_MEMORY_MIN_SHARE", 0.7, float, "Share of a site's pages a block must repeat on."),
        ("SITE_MEMORY_MAX_BLOCKS", 1000, int, "Blocks remembered per page at most."),
        ("SITE_MEMORY_WARMUP", 5, int, "Pages held per site before its first decisions."),
        ("SITE_MEMORY_MAX_SITES", 10_000, int, "Sites remembered at once (least recent go)."),
        (
            "SITE_MEMORY_MAX_HELD_BYTES",
            None,
            int,
            "HTML held for warm-up at most; unset: half of SCRAPER_SLOT_MAX_ACTIVE_SIZE.",
        ),
    ),
    *_group(
        "Output and report",
        ("DOCDIR_PATH", "", str, "Folder for one file per document (off when empty)."),
        ("DOCDIR_FORMAT", "tei", str, "tei, txt, json or md: format of DOCDIR_PATH files."),
        ("DOCDIR_NAMING", "url", str, "url (hash of the URL) or fingerprint: file names."),
        ("CRAWL_REPORT_ENABLED", True, bool, "Progress lines and the end-of-crawl report."),
        ("CRAWL_REPORT_INTERVAL", 30.0, float, "Seconds between progress lines."),
        (
            "CRAWL_REPORT_BROAD_SITES",
            20,
            int,
            "Sites above which progress is one line for the crawl and the end table its totals.",
        ),
        (
            "CRAWL_REPORT",
            "",
            str,
            "Path of the end-of-crawl report: JSON, or an HTML page for .html (none when empty).",
        ),
    ),
    *_group(
        "Archive (WARC) and Markdown",
        (
            "WARC_OUTPUT",
            "",
            str,
            "Folder for a WARC/1.1 archive of every response (off when empty).",
        ),
        ("WARC_MAX_SIZE", 1_000_000_000, int, "Bytes after which a new WARC file is started."),
        ("WARC_PREFIX", "maintext", str, "First word of the WARC file names (no '-')."),
        (
            "WARC_COMPRESSION_LEVEL",
            6,
            int,
            "gzip level of the WARC records: 1 fastest, 9 smallest.",
        ),
        (
            "EXTRACT_MARKDOWN",
            False,
            bool,
            "Items also get a `markdown` field (the text as Markdown).",
        ),
    ),
    *_group(
        "Recurring crawls",
        (
            "CRAWL_STATE",
            "",
            str,
            "SQLite file remembering pages between runs (with REDIS_URL: a state's name in Redis).",
        ),
        (
            "CRAWL_STATE_COMMIT_DELAY",
            0.25,
            float,
            "Seconds the crawl state gathers writes into one commit.",
        ),
        (
            "RECRAWL_SCHEDULE",
            "adaptive",
            str,
            "adaptive: a URL without a new sitemap/feed date is requested when due; every-run.",
        ),
        (
            "RECRAWL_MIN_INTERVAL",
            3600,
            int,
            "Shortest revisit interval (seconds) of a URL; about how often the crawl runs.",
        ),
        (
            "RECRAWL_MAX_INTERVAL",
            86400,
            int,
            "Longest revisit interval (seconds) of a URL that never seems to change.",
        ),
        (
            "RECRAWL_NOW",
            "",
            str,
            "Run as if it were this time, all run long (ISO date or epoch s): simulations.",
        ),
    ),
    *_group(
        "Distributed crawl",
        ("REDIS_URL", "", str, "redis://host:port/db: this process joins a shared crawl."),
        (
            "DISTRIBUTED_KEY_PREFIX",
            "maintext:%(spider)s",
            str,
            "Prefix of the crawl's Redis keys; with CRAWL_STATE, :state:NAME follows (a run each).",
        ),
        (
            "DISTRIBUTED_POLITENESS_PREFIX",
            "maintext:politeness",
            str,
            "Prefix of the per-site politeness keys (shared by every crawl on the server).",
        ),
        ("DISTRIBUTED_WORKER_TIMEOUT", 60.0, float, "A worker silent this long is dead."),
        ("DISTRIBUTED_POLL_INTERVAL", 1.0, float, "Heartbeat and queue poll interval (seconds)."),
        ("DISTRIBUTED_SITE_PREFETCH", 2, int, "Requests of one site a worker holds at once."),
        (
            "DISTRIBUTED_REDIS_TIMEOUT",
            5.0,
            float,
            "Seconds (above 0) a Redis call may take, at most SHUTDOWN_TIMEOUT / 3; then it stops.",
        ),
    ),
    *_group(
        "Pages that need JavaScript",
        (
            "RENDER_JS",
            "auto",
            str,
            "auto: render only pages that need JavaScript (when the render extra and a browser "
            "are there); never; always: every page.",
        ),
        ("RENDER_BROWSER_PATH", "/usr/bin/chromium", str, "The Chromium a render runs."),
        ("RENDER_TIMEOUT", 15.0, float, "Seconds a page's render may take, all waits included."),
        (
            "RENDER_SETTLE",
            0.5,
            float,
            "Seconds without a change or a request after which a rendered page is done.",
        ),
        (
            "RENDER_THIN_WAIT",
            2.5,
            float,
            "Seconds without a change a page still without text waits (its timers too).",
        ),
        (
            "RENDER_UNRESPONSIVE",
            5.0,
            float,
            "Seconds a rendered page's scripts may keep it from answering (then it is closed).",
        ),
        ("RENDER_MAX_REQUESTS", 100, int, "Requests a rendered page may make; the rest fail."),
        (
            "RENDER_MAX_BYTES",
            10 * 1024 * 1024,
            int,
            "Bytes a rendered page may load; a response that would pass them is stopped.",
        ),
        ("RENDER_MAX_PAGES", 1, int, "Pages rendered at once, all sites together."),
        ("RENDER_MEMORY_MB", 512, int, "Largest JavaScript heap of a rendered page (MB)."),
        (
            "RENDER_BROWSER_MEMORY_MB",
            2048,
            int,
            "The browser's memory (MB, PSS) past which it restarts between renders; 0: no cap.",
        ),
        (
            "RENDER_AVAILABLE",
            "",
            str,
            "'unavailable' acts as if the render extra were missing (tests, benchmarks).",
        ),
    ),
]

#: Our settings by name.
SETTINGS: dict[str, Setting] = {s.name: s for s in _OURS}

#: Scrapy settings the add-on sets (at ``addon`` priority) for a polite crawl.
SCRAPY_DEFAULTS: dict[str, Setting] = {
    s.name: s
    for s in _group(
        "Scrapy settings the add-on changes",
        ("ROBOTSTXT_OBEY", True, bool, "Obey robots.txt."),
        ("CONCURRENT_REQUESTS_PER_DOMAIN", 1, int, "One request at a time per site."),
        ("DOWNLOAD_DELAY", 1.0, float, "At least this long between requests to a site."),
        ("DOWNLOAD_DELAY_JITTER", 0.0, float, "No random jitter below the delay."),
        ("AUTOTHROTTLE_ENABLED", True, bool, "Back off slow sites (never below Crawl-delay)."),
        ("AUTOTHROTTLE_TARGET_CONCURRENCY", 1.0, float, "AutoThrottle's target per site."),
        ("AUTOTHROTTLE_MAX_DELAY", 60.0, float, "AutoThrottle's largest delay."),
        ("REDIRECT_MAX_TIMES", 5, int, "Redirects followed per request."),
        ("DOWNLOAD_TIMEOUT", 30, int, "Seconds before a request times out."),
        ("DOWNLOAD_MAXSIZE", 50 * 1024 * 1024, int, "Responses above this are cancelled."),
        ("DOWNLOAD_WARNSIZE", 10 * 1024 * 1024, int, "Responses above this are logged."),
    )
}


def setting(settings: BaseSettings, name: str) -> Any:
    """The value of our setting ``name`` in ``settings``, of its type, else its default."""
    spec = SETTINGS[name]
    value = settings.get(name)
    if value is None or (value == "" and spec.type is not str):
        return spec.default
    if spec.type is bool:
        return settings.getbool(name)
    if spec.type is int:
        return settings.getint(name)
    if spec.type is float:
        return settings.getfloat(name)
    if spec.type is list:
        return settings.getlist(name)
    return str(value)


def default_of(name: str) -> Any:
    """The default of our setting ``name`` (for Scrapy-free code that has no settings)."""
    return SETTINGS[name].default


def cpu_count() -> int:
    """Cores this process may use: its affinity and cgroup CPU quota, not the host's
    (the default of ``EXTRACT_WORKERS``)."""
    from scrapy_maintext.cpu import usable_cores

    return usable_cores()


def markdown() -> str:
    """``docs/settings.md``: every setting, by group."""
    lines = [
        "# Settings",
        "",
        "Generated from `crawler/vocabulary/settings.py` by",
        "`python -m scrapy_maintext.vocabulary.settings > docs/settings.md`; do not edit.",
        "Set them like any Scrapy setting: in `settings.py`, a spider's `custom_settings`,",
        "or `-s NAME=VALUE` on the command line.",
    ]
    groups: dict[str, list[Setting]] = {}
    for spec in [*SETTINGS.values(), *SCRAPY_DEFAULTS.values()]:
        groups.setdefault(spec.group, []).append(spec)
    for group, specs in groups.items():
        lines += ["", f"## {group}", "", "| setting | default | type | what it does |"]
        lines.append("|---|---|---|---|")
        for spec in specs:
            default = "unset" if spec.default is None else f"`{spec.default!r}`"
            lines.append(f"| `{spec.name}` | {default} | {spec.type.__name__} | {spec.doc} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
