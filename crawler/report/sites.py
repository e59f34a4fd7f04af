"""What a run did to each site, as numbers: the crawl report's data (Scrapy-free).

:class:`SiteReport` counts one site's pages (the funnel planned, fetched, exported with every
skip and drop reason) and what the plots need: text lengths in fixed bins, languages,
publication months, HTTP statuses, requests over time (a :class:`Timeline`) and the gaps
between them. :class:`RunReport` holds the sites and the run's header; its :meth:`to_dict`
is the JSON report, the one source every rendering (text table, HTML) is drawn from.
"""

from __future__ import annotations

import itertools
import re
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any
from urllib.parse import urlsplit

#: Identifies a saved report (``maintext report`` refuses other JSON).
REPORT_FORMAT = "scrapy-maintext crawl report"
#: 2: engines, text length bins, languages, months, statuses, requests over time.
REPORT_VERSION = 2
#: Lower edges of the text length bins (characters); the last bin is open.
TEXT_LENGTH_BINS = (0, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000)
#: The engines a document's text can come from ("fallback": the neural engine was unsure
#: and handed the page to trafilatura).
ENGINES = ("neural", "fallback", "trafilatura")
#: A field a document does not have (no language, no date).
UNKNOWN = "unknown"
#: Requests over time keep at most this many buckets; their width doubles to stay below.
MAX_BUCKETS = 120
#: A site's counters by key, in the JSON report (HTTP statuses are kept apart: keyed by code).
SITE_COUNTERS = (
    "skipped", "extracted", "dropped", "not_planned", "languages", "page_types", "months",
    "recrawl",
)  # fmt: skip

_MONTH = re.compile(r"^(\d{4})-(\d{2})")


def engine_of(extractor: Any, model_version: Any) -> str:
    """``neural``, ``fallback`` (trafilatura after the model was unsure), ``trafilatura``,
    or the extractor's own name for an engine of a project's own."""
    name = str(extractor or "none")
    if name == "trafilatura" and model_version:
        return "fallback"
    return name


def site_of_url(url: str | None, default: str = "-") -> str:
    """Scheme and host of a URL (its site when no spider names one), else ``default``."""
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else default


def month_of(date: Any) -> str:
    """``YYYY-MM`` of an ISO date, else :data:`UNKNOWN`."""
    match = _MONTH.match(date) if isinstance(date, str) else None
    return f"{match[1]}-{match[2]}" if match and 1 <= int(match[2]) <= 12 else UNKNOWN


def length_bin(length: int) -> int:
    """Index of the :data:`TEXT_LENGTH_BINS` bin of a text of ``length`` characters."""
    return max(bisect_right(TEXT_LENGTH_BINS, length) - 1, 0)


def bin_labels(edges: list[int] | tuple[int, ...]) -> list[str]:
    """``0-249``, ..., ``32000+``: the bins' labels."""
    labels = [f"{low}-{high - 1}" for low, high in pairwise(edges)]
    return [*labels, f"{edges[-1]}+"]


def total_of(sites: list[dict[str, Any]], key: str) -> Counter[str]:
    """The sum of the counts ``key`` (``languages``, ``statuses``, ...) of JSON report sites."""
    total: Counter[str] = Counter()
    for site in sites:
        total.update(site.get(key) or {})
    return total


class Timeline:
    """Requests per site in time buckets since the run started, at most :data:`MAX_BUCKETS`:
    the bucket width (shared by every site) starts at one second and doubles when the run
    outgrows it, so memory stays fixed however long the crawl."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.width = 1.0
        self.counts: dict[str, list[int]] = {}

    def add(self, site: str, when: float) -> None:
        offset = max(when - self.start, 0.0)
        while offset >= self.width * MAX_BUCKETS:
            self._widen()
        index = int(offset // self.width)
        counts = self.counts.setdefault(site, [])
        if len(counts) <= index:
            counts.extend([0] * (index + 1 - len(counts)))
        counts[index] += 1

    def _widen(self) -> None:
        self.width *= 2
        for site, counts in self.counts.items():
            pairs = counts + [0] * (len(counts) % 2)
            self.counts[site] = [pairs[i] + pairs[i + 1] for i in range(0, len(pairs), 2)]


@dataclass(slots=True)
class SiteReport:
    """What happened to one site's pages."""

    site: str
    planned: int = 0
    fetched: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    #: Exported documents by engine (:func:`engine_of`).
    extracted: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    #: URLs discovery found but did not plan (off-site, older than ``since``, ...).
    not_planned: Counter[str] = field(default_factory=Counter)
    text_chars: int = 0
    failure: str | None = None
    first_seen: float = field(default_factory=time.monotonic)
    #: Exported documents per :data:`TEXT_LENGTH_BINS` bin.
    text_lengths: list[int] = field(default_factory=lambda: [0] * len(TEXT_LENGTH_BINS))
    languages: Counter[str] = field(default_factory=Counter)
    #: Exported documents by page type (``extraction.page_type``; ``unknown`` when none).
    page_types: Counter[str] = field(default_factory=Counter)
    #: Exported documents by publication month (``YYYY-MM``, or ``unknown``).
    months: Counter[str] = field(default_factory=Counter)
    #: Pages by HTTP status of their response.
    statuses: Counter[str] = field(default_factory=Counter)
    #: Requests sent to the site (pages, robots.txt, sitemaps, feeds, retries).
    requests: int = 0
    #: The site's download delay (seconds) as the crawl last saw it.
    delay: float | None = None
    #: Shortest time between two requests to the site whose send times are known (seconds).
    min_gap: float | None = None
    #: Recurring crawl (``CRAWL_STATE``): pages by outcome (new, changed, unchanged, ...).
    recrawl: Counter[str] = field(default_factory=Counter)
    #: Pages rendered in a browser (issue 46), and the seconds their renders took.
    rendered: int = 0
    render_seconds: float = 0.0
    _last_request: float | None = None

    @property
    def done(self) -> int:
        return (
            sum(self.extracted.values()) + sum(self.dropped.values()) + sum(self.skipped.values())
        )

    def mean_text_length(self) -> int:
        count = sum(self.extracted.values())
        return round(self.text_chars / count) if count else 0

    def eta_seconds(self, now: float) -> float | None:
        remaining = self.planned - self.done
        elapsed = now - self.first_seen
        if remaining <= 0 or self.done == 0 or elapsed <= 0:
            return None
        return remaining * elapsed / self.done

    def add_document(
        self, engine: str, text: Any, language: Any = None, date: Any = None, page_type: Any = None
    ) -> None:
        """One exported document."""
        self.extracted[engine] += 1
        length = len(text) if isinstance(text, str) else 0
        self.text_chars += length
        self.text_lengths[length_bin(length)] += 1
        self.languages[str(language) if language else UNKNOWN] += 1
        self.page_types[str(page_type) if page_type else UNKNOWN] += 1
        self.months[month_of(date)] += 1

    def add_request(self, when: float, exact: bool = True) -> None:
        """One request sent to the site at ``when`` (monotonic seconds); a request whose
        send time is not ``exact`` (a timeout: only its end is known) is left out of the
        gaps."""
        self.requests += 1
        if not exact:
            return
        if self._last_request is not None:
            gap = max(when - self._last_request, 0.0)
            self.min_gap = gap if self.min_gap is None else min(self.min_gap, gap)
        self._last_request = when

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "site": self.site,
            "planned": self.planned,
            "fetched": self.fetched,
            **{name: dict(sorted(getattr(self, name).items())) for name in SITE_COUNTERS},
            "statuses": dict(sorted(self.statuses.items())),
            "mean_text_length": self.mean_text_length(),
            "text_lengths": list(self.text_lengths),
            "requests": self.requests,
            "delay": _round(self.delay),
            "min_gap": _round(self.min_gap),
            "failure": self.failure,
            "rendered": self.rendered,
            "render_seconds": _round(self.render_seconds),
        }
        return data


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass
class RunReport:
    """The sites of one run, its header and its timeline: :meth:`to_dict` is the report."""

    #: Command, versions, model version, settings that matter (see ``header.py``).
    header: dict[str, Any] = field(default_factory=dict)
    sites: dict[str, SiteReport] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    timeline: Timeline = field(default_factory=lambda: Timeline(time.monotonic()))
    #: Recurring crawls: pages by outcome (new, changed, unchanged, gone, ...).
    recrawl: dict[str, int] = field(default_factory=dict)
    #: Pages whose extraction repaired or lost something, by note (``Note``: ``blocks-cut``,
    #: ``nesting-cut``, ...).
    repaired: Counter[str] = field(default_factory=Counter)

    def site(self, key: str) -> SiteReport:
        if key not in self.sites:
            self.sites[key] = SiteReport(key)
        return self.sites[key]

    def add_request(self, key: str, when: float | None = None, exact: bool = True) -> None:
        when = time.monotonic() if when is None else when
        self.site(key).add_request(when, exact)
        self.timeline.add(key, when)

    def to_dict(self, reason: str, finished: float | None = None) -> dict[str, Any]:
        finished = time.time() if finished is None else finished
        sites = []
        for report in self.sites.values():
            data = report.to_dict()
            data["requests_per_bucket"] = self.timeline.counts.get(report.site, [])
            sites.append(data)
        return {
            "format": REPORT_FORMAT,
            "version": REPORT_VERSION,
            "reason": reason,
            "run": {
                **self.header,
                "started": _iso(self.started),
                "finished": _iso(finished),
                "duration_seconds": round(finished - self.started, 1),
            },
            "text_length_bins": list(TEXT_LENGTH_BINS),
            "bucket_seconds": self.timeline.width,
            "recrawl": dict(sorted(self.recrawl.items())),
            "repaired": dict(sorted(self.repaired.items())),
            "sites": sites,
        }


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


@dataclass
class NetlocIndex:
    """The site of a host (``netloc``), for downloads that name no site (Scrapy's own
    robots.txt requests): the first of the report's sites with that host, else the first
    of the spider's. Indexed as sites come, so a lookup costs the same at 10 sites or
    10,000 (a scan of every site per download made a broad crawl's report quadratic)."""

    reported: dict[str, str] = field(default_factory=dict)
    planned: dict[str, str] = field(default_factory=dict)
    _reported_count: int = 0
    _planned_count: int = 0

    def known(
        self, netloc: str, reported: Mapping[str, Any], planned: Mapping[str, Any] | None
    ) -> str | None:
        self._reported_count = _index(self.reported, reported, self._reported_count)
        if netloc in self.reported:
            return self.reported[netloc]
        self._planned_count = _index(self.planned, planned or {}, self._planned_count)
        return self.planned.get(netloc)


def _index(index: dict[str, str], sites: Mapping[str, Any], done: int) -> int:
    """Index the sites past the first ``done`` (dicts keep their order); the new count."""
    if len(sites) > done:
        for site in itertools.islice(sites, done, None):
            index.setdefault(urlsplit(site).netloc, site)
    return len(sites)
