"""What the sitemap and feed spiders share: arguments, the crawl plan, pages and errors."""

from __future__ import annotations

import functools
import logging
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy import signals
from scrapy.http import Response, TextResponse
from scrapy.settings import BaseSettings
from scrapy_maintext.discovery.dates import to_iso
from scrapy_maintext.discovery.plan import Candidate, CrawlPlan, PlanOptions
from scrapy_maintext.discovery.urls import UrlPolicy
from scrapy_maintext.middlewares.urlfilter import SKIP_META
from scrapy_maintext.politeness.quick_stop import STOPPING_MESSAGE
from scrapy_maintext.politeness.site_failure import UNREACHABLE_MESSAGE
from scrapy_maintext.politeness.stall import STALLED_MESSAGE
from scrapy_maintext.report.extension import page_skipped
from scrapy_maintext.spiders.args import (
    ARGUMENT_FORMS,
    SpiderArgumentError,
    check_names,
    invalid,
    parse_bool,
    parse_lang,
    parse_max_pages,
    parse_since_argument,
    read_list_file,
)
from scrapy_maintext.state.page_journal import PageJournal
from scrapy_maintext.state.resume import RUN_META
from twisted.python.failure import Failure
from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom

logger = logging.getLogger(__name__)

#: Discovery requests (robots.txt, sitemaps, feeds) go before pages, so that the whole
#: plan is known, and sorted newest first, before the first page is fetched.
DISCOVERY_PRIORITY = 1_000_000
#: A discovery callback's work: parse one response of a site, yield further requests.
DiscoveryStep = Callable[["SiteState", Response], Iterator[scrapy.Request]]
SITE_META = "site"
#: CONCURRENT_ITEMS of these spiders (Scrapy's default: 100). Scrapy starts that many tasks
#: for every response, whatever it yields; a page yields one item (plus its links when
#: exploring), so 100 tasks cost the crawl process about 2 ms of CPU per page, a fifth of
#: all it spends on a page (crawl process CPU per page, 2 workers: 9.2 and 10.0 ms with
#: 100, 7.2 and 8.0 with 1; ``python -m benchmarks.crawl_throughput --data ... -s
#: CONCURRENT_ITEMS=100``). A few keep a page's links moving while its item waits.
PAGE_CONCURRENT_ITEMS = 8
#: Meta key: the planned URL of a page request (what the page journal records).
PAGE_META = "page_url"


def base_url_of(domain: str) -> str:
    """``example.com`` → ``https://example.com``; a URL keeps its scheme and port."""
    domain = domain.strip()
    if "://" not in domain:
        domain = f"https://{domain}"
    parts = urlsplit(domain)
    host = parts.hostname
    if parts.scheme not in ("http", "https") or not host or _NOT_IN_HOSTS.search(host):
        raise ValueError(f"domain: not a host or base URL: {domain!r}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        raise ValueError(f"domain: not a host or base URL: {domain!r}") from None
    return f"{parts.scheme}://{parts.netloc}"


#: Characters no host name has (whitespace, URL delimiters); IDN letters are fine.
_NOT_IN_HOSTS = re.compile(r"[\s<>\"{}|\\^`/?#@]")


@dataclass(frozen=True)
class DiscoverySettings:
    """``DISCOVERY_*`` settings shared by the spiders."""

    #: Nesting limit for sitemap indexes (an index of indexes of sitemaps is depth 2).
    sitemap_max_depth: int = 3
    #: Sitemaps fetched from one site at most (guards against index loops and spam).
    max_sitemaps: int = 1000
    #: Link depth limit of ``explore`` mode.
    explore_max_depth: int = 5

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> DiscoverySettings:
        return cls(
            sitemap_max_depth=settings.getint("DISCOVERY_SITEMAP_MAX_DEPTH", 3),
            max_sitemaps=settings.getint("DISCOVERY_MAX_SITEMAPS", 1000),
            explore_max_depth=settings.getint("DISCOVERY_EXPLORE_MAX_DEPTH", 5),
        )


@dataclass
class SiteState:
    """Discovery state of one site of a crawl."""

    base_url: str
    plan: CrawlPlan
    #: Discovery requests of this site not answered yet.
    outstanding: int = 0
    #: "sitemaps", "feeds" or "links" (explore mode moves through them in that order).
    stage: str = "sitemaps"
    #: Page URLs already requested (a site's discovery can finish more than once in
    #: explore mode; nothing is requested twice).
    scheduled: set[str] = field(default_factory=set)
    sitemaps_seen: set[str] = field(default_factory=set)
    links_seen: set[str] = field(default_factory=set)
    #: Discovery is guessing usual locations (so "not a sitemap/feed" is no error).
    guessing: bool = False
    #: Why the site cannot be crawled at all (unreachable, robots.txt 5xx), once known;
    #: the robots middleware has said so in one line, so nothing more is logged for it.
    failure: str | None = None


def split_list(value: str | None) -> list[str]:
    """Comma- or space-separated values of a spider argument."""
    return [v.strip() for v in str(value or "").replace(",", " ").split() if v.strip()]


def _feed_url(value: str) -> str:
    """``value``, checked as a feed URL (http or https, with a host), else ValueError."""
    if not value.lower().startswith(("http://", "https://")):
        raise ValueError(f"not an http(s) URL: {value}")
    base_url_of(value)
    return value


def _parsed(parse: Callable[[str], str], name: str, value: str, forms: Mapping[str, str]) -> str:
    """``parse(value)``, or the error naming ``-a name=value`` and its accepted forms."""
    try:
        return parse(value)
    except ValueError:
        raise invalid(name, value, forms) from None


@dataclass(frozen=True)
class SpiderArguments:
    """The ``-a`` arguments of a discovery spider, parsed and checked."""

    sites: tuple[str, ...]
    feed_urls: tuple[str, ...]
    plan: PlanOptions
    subdomains: bool
    explore: bool


class DiscoverySpider(scrapy.Spider):
    """Base: parses the common ``-a`` arguments and turns finished plans into page requests.

    Every site (``domain``, several comma-separated, or ``domains_file``) gets its own plan,
    pruned and ordered on its own, and is crawled under its own politeness slot.
    """

    custom_settings: dict[str, Any] | None = {  # noqa: RUF012 -- Scrapy reads it as is
        # One queue per download slot, served by how busy each slot is: a big site's pages
        # cannot starve the other sites of a crawl. FIFO inside a slot keeps each site's
        # pages newest first without one priority value per page (with JOBDIR, every
        # priority value is a file kept open).
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        super().update_settings(settings)
        # Below the project's and the command line's: a project's own value wins.
        settings.set("CONCURRENT_ITEMS", PAGE_CONCURRENT_ITEMS, priority="addon")
        # Scrapy's check reads a callback's source again for nearly every response (its
        # cache is keyed by the bound method, new with every request): about 0.3 ms of the
        # crawl process per page, for callbacks that never return a value.
        settings.set("WARN_ON_GENERATOR_RETURN_VALUE", False, priority="addon")

    #: The ``-a`` arguments this spider takes, with their accepted forms.
    argument_forms: Mapping[str, str] = MappingProxyType(ARGUMENT_FORMS)

    def __init__(self, **kwargs: Any) -> None:
        arguments = self.check_arguments(kwargs)
        super().__init__()
        #: Base URLs of the sites named by ``domain``/``domains_file`` (not by feed URLs).
        self.named_sites = list(arguments.sites)
        self.feed_urls = list(arguments.feed_urls)
        feed_sites = [base_url_of(u) for u in self.feed_urls]
        self.plan_options = arguments.plan
        self.sites: dict[str, SiteState] = {}
        for base in dict.fromkeys(self.named_sites + feed_sites):
            policy = UrlPolicy.for_urls([base], allow_subdomains=arguments.subdomains)
            self.sites[base] = SiteState(base, CrawlPlan(policy, self.plan_options))
        self.url_policy = UrlPolicy.for_urls(list(self.sites), arguments.subdomains)
        self.explore = arguments.explore
        # Discovery requests of an interrupted earlier run may come back from a JOBDIR
        # queue; they must not disturb this run's count of outstanding discovery.
        self.run_id = uuid.uuid4().hex
        self.journal = PageJournal(None)

    @classmethod
    def check_arguments(cls, kwargs: Mapping[str, Any]) -> SpiderArguments:
        """The ``-a`` arguments parsed, or :class:`SpiderArgumentError` naming the bad one.

        Run by ``scrapy crawl``/``maintext crawl`` before the crawl starts (so a typo
        costs one line and no output file), and again by ``__init__``.
        """
        forms = cls.argument_forms
        check_names(kwargs, forms, cls.name)
        get = kwargs.get
        listed_sites = read_list_file("domains_file", get("domains_file"), forms, base_url_of)
        listed_feeds = read_list_file("urls_file", get("urls_file"), forms, _feed_url)
        sites = [_parsed(base_url_of, "domain", v, forms) for v in split_list(get("domain"))]
        sites += listed_sites
        feed_urls = [_parsed(_feed_url, "url", v, forms) for v in split_list(get("url"))]
        feed_urls += listed_feeds
        if not sites and not feed_urls:
            needed = " or ".join(f"-a {name}=..." for name in ("domain", "url") if name in forms)
            raise SpiderArgumentError(f"the {cls.name} spider needs {needed}: {forms['domain']}")
        plan = PlanOptions(
            since=parse_since_argument(kwargs.get("since"), forms),
            max_pages=parse_max_pages(kwargs.get("max_pages"), forms),
            lang=parse_lang(kwargs.get("lang"), forms),
        )
        return SpiderArguments(
            sites=tuple(sites),
            feed_urls=tuple(feed_urls),
            plan=plan,
            subdomains=parse_bool("subdomains", kwargs.get("subdomains"), forms),
            explore=parse_bool("explore", kwargs.get("explore"), forms),
        )

    @functools.cached_property
    def discovery(self) -> DiscoverySettings:
        # Read once, on first use in a callback (settings are frozen by then).
        return DiscoverySettings.from_settings(self.settings)

    @functools.cached_property
    def html_as_bytes(self) -> bool:
        """Whether page items may carry ``response.body`` (see ``takes_body_bytes``)."""
        # Imported here: the pipeline module loads the extraction stack, which commands
        # that only list or check spiders do not need.
        from scrapy_maintext.pipelines.extraction import takes_body_bytes

        return takes_body_bytes(self.settings)

    def open_journal(self) -> None:
        """With JOBDIR, skip the pages an earlier run finished; call at the start of start()."""
        self.journal = PageJournal(self.settings.get("JOBDIR"))
        for base, site in self.sites.items():
            site.scheduled |= self.journal.done[base]
        connect = self.crawler.signals.connect
        # Connected now, after the feed exporter: an item is on disk before it is done.
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            connect(self._item_finished, signal=signal)
        connect(self.journal.close, signal=signals.spider_closed)
        connect(self._request_dropped, signal=signals.request_dropped)

    def _request_dropped(self, request: scrapy.Request, **_: Any) -> None:
        """A page redirected to a URL this crawl already requested: the duplicate filter
        drops the redirect, and the page would vanish without a word."""
        chain = request.meta.get("redirect_urls")
        if not chain or PAGE_META not in request.meta:
            return
        reason = "redirect_loop" if request.url in chain else "redirect_to_seen"
        self.inc_stat(f"discovery/page_errors/{reason}")
        logger.info("Page %s not fetched: %s (%s)", chain[0], reason, request.url)
        self.journal.mark(request.meta[SITE_META], request.meta[PAGE_META])

    def _item_finished(self, response: Response | Failure | None = None, **_: Any) -> None:
        meta = getattr(response, "meta", None)
        if isinstance(response, Response) and meta and PAGE_META in meta:
            self.journal.mark(meta[SITE_META], meta[PAGE_META], response.url)

    def site_of(self, response_or_request: Response | scrapy.Request) -> SiteState:
        return self.sites[response_or_request.meta[SITE_META]]

    def inc_stat(self, key: str, count: int = 1) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.inc_value(key, count)

    def discovery_request(
        self,
        site: SiteState,
        url: str,
        callback: Any,
        errback: Any = None,
        **meta: Any,
    ) -> scrapy.Request:
        """A robots.txt/sitemap/feed request: ahead of pages, counted until answered."""
        meta.update({SKIP_META: True, RUN_META: self.run_id, SITE_META: site.base_url})
        request = scrapy.Request(
            url,
            callback=callback,
            errback=errback or self.discovery_error,
            priority=DISCOVERY_PRIORITY,
            dont_filter=True,  # discovery re-runs when a JOBDIR crawl resumes
            meta=meta,
        )
        site.outstanding += 1
        return request

    def discovery_step(self, response: Response, step: DiscoveryStep) -> Iterator[scrapy.Request]:
        """Run one discovery callback's work; whatever happens, count the response as in."""
        if self.is_stale(response):
            return
        site = self.site_of(response)
        try:
            yield from step(site, response)
        except Exception:
            # A parser bug must not leave the site waiting forever for this response.
            self.inc_stat("discovery/errors/parse_exception")
            logger.exception("Discovery failed on %s", response.url)
        yield from self.discovery_done(site)

    def is_stale(self, request_or_response: scrapy.Request | Response) -> bool:
        """True for a discovery request (or its response) of an earlier, interrupted run."""
        return request_or_response.meta.get(RUN_META) != self.run_id

    def discovery_done(self, site: SiteState) -> Iterator[scrapy.Request]:
        """Call at the end of every discovery callback: schedules pages once all are in."""
        site.outstanding -= 1
        if site.outstanding > 0:
            return
        for reason, count in site.plan.rejected.items():
            self.inc_stat(f"discovery/rejected/{reason}", count)
            self.report_skip(site.base_url, reason, count, planned=False)
        site.plan.rejected.clear()
        pages = site.plan.to_fetch(site.scheduled)
        if not pages and not site.scheduled:
            if site.failure is None:
                yield from self.nothing_found(site)
            return
        logger.info("Discovery done: %d pages to fetch from %s", len(pages), site.base_url)
        # Equal priorities in FIFO queues: fetched in this (newest first) order.
        for candidate in pages:
            yield self.page_request(site, candidate)

    def nothing_found(self, site: SiteState) -> Iterator[scrapy.Request]:
        logger.warning("No pages found on %s", site.base_url)
        return iter(())

    def discovery_error(self, failure: Failure) -> Iterator[scrapy.Request]:
        request = failure.request  # type: ignore[attr-defined]
        if self.is_stale(request):
            return
        reason = _failure_reason(failure)
        self.inc_stat(f"discovery/errors/{reason}")
        site = self.site_of(request)
        if reason == SITE_UNREACHABLE:
            site.failure = str(failure.value).removeprefix(f"{UNREACHABLE_MESSAGE}: ")
        elif reason != STOPPING:
            logger.info("Discovery request %s failed: %s", request.url, reason)
        yield from self.discovery_done(site)

    def report_skip(self, site: str, reason: str, count: int = 1, planned: bool = True) -> None:
        """Tell the crawl report that pages of ``site`` will not become items, and why."""
        self.crawler.signals.send_catch_log(
            signal=page_skipped, site=site, reason=reason, count=count, planned=planned
        )

    def all_sites_failed(self) -> bool:
        """No site of the crawl could be crawled (the crawl command then exits 1)."""
        return bool(self.sites) and all(s.failure is not None for s in self.sites.values())

    def page_request(
        self, site: SiteState, candidate: Candidate, priority: int = 0, **meta: Any
    ) -> scrapy.Request:
        site.scheduled.add(candidate.url)
        self.inc_stat(f"discovery/pages/{candidate.discovered_via}")
        meta.update(
            discovered_via=candidate.discovered_via,
            source_url=candidate.source_url,
            source_date=to_iso(candidate.date),
            source_title=candidate.title,
        )
        meta.update({SITE_META: site.base_url, RUN_META: self.run_id, PAGE_META: candidate.url})
        return scrapy.Request(
            candidate.url,
            callback=self.parse_page,
            errback=self.page_error,
            priority=priority,
            meta=meta,
            # A resumed crawl's unfinished pages were all "seen" by the killed run.
            dont_filter=self.journal.resumed,
        )

    def parse_page(self, response: Response) -> Iterator[Any]:
        if not is_html_response(response):
            self.inc_stat("discovery/skipped/non_html")
            self.report_skip(response.meta.get(SITE_META, ""), "non_html")
            logger.info("Skipped non-HTML page %s", response.url)
            self._item_finished(response)
            return
        assert isinstance(response, TextResponse)
        yield self.page_item(response)

    def page_item(self, response: TextResponse) -> dict[str, Any]:
        meta = response.meta
        return {
            # The URL as discovered, before any redirect.
            "url": (meta.get("redirect_urls") or [response.url])[0],
            "final_url": response.url,
            "status": response.status,
            "discovered_via": meta.get("discovered_via"),
            "source_url": meta.get("source_url"),
            "source_date": meta.get("source_date"),
            "source_title": meta.get("source_title"),
            "fetched_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "content_type": (response.headers.get("Content-Type") or b"").decode("latin-1"),
            "encoding": response.encoding,
            "html": self.page_html(response),
        }

    def page_html(self, response: TextResponse) -> str | bytes:
        """The body as fetched when the extraction pipeline takes it and its encoding is
        declared: the worker decodes it as ``response.text`` would, and the crawl process
        neither decodes nor pickles a str. Otherwise ``response.text``: items exported with
        their HTML keep text, and a guessed encoding has decoded the body already (Scrapy
        guesses by decoding, and its last resort, ASCII with U+FFFD, is its own)."""
        if self.html_as_bytes and declares_encoding(response):
            return response.body
        return response.text

    def page_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        if self.is_stale(request):
            return
        reason = _failure_reason(failure)
        if reason == STOPPING:
            # Not done: the journal leaves it for a resumed crawl.
            self.inc_stat("discovery/pages/left_for_resume")
            return
        if PAGE_META in request.meta:
            self.journal.mark(request.meta[SITE_META], request.meta[PAGE_META])
        self.inc_stat(f"discovery/page_errors/{reason}")
        self.report_skip(request.meta.get(SITE_META, ""), reason)
        # Routine, or said once for the whole site (unreachable, stalled).
        quiet = (ROBOTS_FORBIDDEN, SITE_UNREACHABLE, SITE_STALLED)
        log = logger.info if reason in quiet else logger.warning
        log("Page %s not fetched: %s", request.url, reason)


#: Content types a page may have; anything else (images, PDFs, archives) is skipped.
HTML_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/xml", "text/xml")
_SNIFF_BYTES = 1024


def declares_encoding(response: TextResponse) -> bool:
    """Whether the response names its encoding (BOM, Content-Type charset or ``<meta>``):
    what Scrapy reads before guessing, cheaply (the start of the body only)."""
    return declared_encoding(response) is not None


def declared_encoding(response: TextResponse) -> str | None:
    """The encoding the response names, by BOM, Content-Type charset or ``<meta>`` (in
    Scrapy's order), as w3lib resolves the name; None if it names none that Python knows."""
    body = response.body
    bom = read_bom(body)[0]
    if bom:
        return bom
    content_type = (response.headers.get("Content-Type") or b"").decode("latin-1")
    return http_content_type_encoding(content_type) or html_body_declared_encoding(body)


def is_html_response(response: Response) -> bool:
    """A text page worth extracting: declared HTML-ish and not binary in fact."""
    if not isinstance(response, TextResponse):
        return False
    ctype = (response.headers.get("Content-Type") or b"").decode("latin-1").lower()
    if ctype and ctype.split(";")[0].strip() not in HTML_TYPES:
        return False
    # UTF-16/32 text (by its BOM or declared charset) is full of NUL bytes.
    if response.encoding.lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        return True
    # Scrapy trusts a ".html" URL over the body; a NUL byte says it is binary after all.
    return b"\x00" not in response.body[:_SNIFF_BYTES]


_EXCEPTION_REASONS = {
    "DownloadCancelledError": "too_large",  # over DOWNLOAD_MAXSIZE
    "DownloadTimeoutError": "timeout",
    "TimeoutError": "timeout",
    "TCPTimedOutError": "timeout",
    "DNSLookupError": "dns_error",
    "ConnectionRefusedError": "connection_refused",
    "ResponseNeverReceived": "connection_lost",
    "ConnectionLost": "connection_lost",
    "ConnectionDone": "connection_lost",
}
ROBOTS_FORBIDDEN = "robots_forbidden"
#: A site the robots middleware found unreachable (it logged why, once).
SITE_UNREACHABLE = "site_unreachable"
#: A request dropped from a download queue because the crawl is stopping: not done, so a
#: resumed crawl fetches it.
STOPPING = "stopping"
SITE_STALLED = "site_stalled"
_IGNORE_REASONS = {
    "Forbidden by robots.txt": ROBOTS_FORBIDDEN,
    UNREACHABLE_MESSAGE: SITE_UNREACHABLE,
    STOPPING_MESSAGE: STOPPING,
    "max redirections reached": "redirect_loop",
    STALLED_MESSAGE: SITE_STALLED,
}


def _failure_reason(failure: Failure) -> str:
    response = getattr(failure.value, "response", None)
    if response is not None:
        return f"http_{response.status}"
    message = str(failure.value)
    for text, reason in _IGNORE_REASONS.items():
        if text in message:
            return reason
    name = type(failure.value).__name__
    return _EXCEPTION_REASONS.get(name, name)
