"""A simulated month of hourly recurring crawls: requests and freshness, every-run vs adaptive.

    python -m benchmarks.recrawl_month [--days 30] [--seed 31] [--crawl-hours 0]
        [--keep-states DIR]

The site (``benchmarks/month_site.py``): 2,000 articles, about 50 new a day, 2% of the older
ones edited a day, 10% without ``lastmod``, a feed of the 50 newest. A run every hour for
``--days`` simulated days on a fake clock: each run is a sitemap crawl then a feed crawl of
the site, with one crawl state, at the top of the hour; the site changes between runs.

The month is simulated, not crawled (1,440 crawls would take hours on 2 cores): each run
takes the bundled spiders' steps (robots.txt; the sitemap index and its children, read
conditionally, skipped by their ``lastmod`` in the index or when not due; the pages planned,
skipped by date or when not due, the rest fetched conditionally; then the feed) with the
shipped Scrapy-free code deciding and remembering everything: the crawl state
(:class:`~scrapy_maintext.state.crawl_state.CrawlState`, a real SQLite file), the spiders'
questions to it (:class:`~scrapy_maintext.state.recrawl_discovery.DiscoveryMemory`), the
schedule (:mod:`scrapy_maintext.state.schedule`) and the sitemap and feed parsers; the
server's side is modelled (``304`` for a matching ``ETag``). ``--crawl-hours N`` also runs
the first N hours as real crawls (``maintext``'s spiders on a loopback server, the clock set
by ``RECRAWL_NOW``) and prints their requests beside the simulation's, run by run.

Prints, per schedule: requests in the first run and per later run (mean, 95th percentile,
most), by kind; and freshness: the share of changes exported by the first run after them and
within 24 hours, announced changes (a new article, an edit with its ``lastmod`` bumped) and
silent ones (an edit of an article without ``lastmod``) apart.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections import Counter, defaultdict
from datetime import UTC, datetime
from email.utils import formatdate
from pathlib import Path

from scrapy_maintext.discovery.feeds import parse_feed
from scrapy_maintext.discovery.sitemaps import SitemapParseResult, parse_sitemap
from scrapy_maintext.state.crawl_state import CrawlState
from scrapy_maintext.state.recrawl_discovery import DiscoveryMemory
from scrapy_maintext.state.schedule import (
    ADAPTIVE,
    EVERY_RUN,
    NO_HINTS,
    Clock,
    Schedule,
    SchedulePolicy,
    body_digest,
    feed_hints,
)
from scrapy_maintext.state.validators import Validators, text_hash

from benchmarks.month_site import DAY, HOUR, START, MonthSite, etag

SITE = "month"


class SimulatedCrawler:
    """One crawl state, crawled hour by hour as the sitemap and feed spiders crawl it."""

    def __init__(self, site: MonthSite, state_path: Path, policy: SchedulePolicy) -> None:
        self.site = site
        self.clock = Clock(START)
        self.state = CrawlState(state_path)
        self.schedule = Schedule(self.state, policy, self.clock)
        #: Per article: (run time, version) of every export.
        self.exports: defaultdict[str, list[tuple[int, int]]] = defaultdict(list)
        #: Requests of every run, by kind.
        self.runs: list[Counter[str]] = []

    def run(self, now: int, served: dict[str, tuple[bytes, int]]) -> None:
        """One hourly run: the sitemap crawl, then the feed crawl (``served``: the site's
        documents now)."""
        self.clock.at = now
        self.served = served
        self.requests = Counter[str]()
        self._sitemap_crawl()
        self._feed_crawl()
        self.state.commit()
        self.runs.append(self.requests)

    # The sitemap spider.

    def _sitemap_crawl(self) -> None:
        self.memory = DiscoveryMemory(self.state, self.schedule)
        self.plan: dict[str, tuple[datetime | None, str | None]] = {}
        self.requests["robots"] += 1
        self._sitemap(self.site.index_url, None, None)
        self._pages()

    def _sitemap(self, url: str, lastmod: datetime | None, parent: str | None) -> None:
        memory = self.memory
        iso = lastmod.isoformat() if lastmod else None
        if memory.child_unchanged(url, iso):
            self._remembered(url)
            return
        if lastmod is None and not memory.due(url):
            self.requests["sitemap not due"] += 1
            self._remembered(url)
            return
        body = self._document(url, "sitemap", iso, parent)
        if body is None:
            self._remembered(url)
            return
        result = _parsed(body, url)
        for ref in sorted(result.sitemaps, key=lambda r: r.lastmod or START, reverse=True):
            self._sitemap(ref.url, ref.lastmod, url)
        for entry in result.entries:
            self.plan.setdefault(entry.url, (entry.date, url))

    def _remembered(self, url: str) -> None:
        children, undated = self.memory.remembered_children(url)
        for page in undated:
            self.plan.setdefault(page, (None, url))
        for child in children:
            if self.memory.listed_date(child) is not None:
                self._remembered(child)
            else:
                self._sitemap(child, None, url)

    def _document(
        self, url: str, kind: str, lastmod: str | None, parent: str | None
    ) -> bytes | None:
        """A conditional request for a sitemap or feed: its body, or None for a 304."""
        self.requests[kind] += 1
        body, modified = self.served[url.removeprefix(self.site.base)]
        record = self.state.get(url)
        if record is not None and record.etag == etag(body):
            self.memory.read(SITE, url, None, lastmod, parent)
            return None
        validators = Validators(etag(body), modified)
        hints = feed_hints(parse_feed(body, url)) if kind == "feed" else NO_HINTS
        self.memory.read(SITE, url, validators, lastmod, parent, body_digest(body), hints)
        return body

    # The feed spider.

    def _feed_crawl(self) -> None:
        self.memory = DiscoveryMemory(self.state, self.schedule)
        self.plan = {}
        self.requests["robots"] += 1
        url = self.site.feed_url
        if not self.memory.due(url):
            self.requests["feed not due"] += 1
        else:
            body = self._document(url, "feed", None, None)
            if body is not None:
                for entry in parse_feed(body, url).entries:
                    self.plan.setdefault(entry.url, (entry.date, None))
        self._pages()

    # Pages, as the spiders plan them and the conditional middleware and recrawl stage
    # decide them.

    def _pages(self) -> None:
        dated = {url: date for url, (date, _) in self.plan.items()}
        skipped = self.memory.unchanged(dated)
        undated = {u: d for u, d in dated.items() if d is None and u not in skipped}
        not_due = self.memory.not_due(SITE, undated)
        self.requests["page skipped by date"] += len(skipped)
        self.requests["page not due"] += len(not_due)
        for url, (date, source) in self.plan.items():
            if url not in skipped and url not in not_due:
                self._page(url, date, source)
        self.memory.save(SITE)

    def _page(self, url: str, date: datetime | None, source: str | None) -> None:
        slug = url.rsplit("/", 1)[1].removesuffix(".html")
        article = self.site.articles[slug]
        body = self.site.page(slug)
        listed = int(date.timestamp()) if date else None
        validators = Validators(etag(body), article.modified)
        record = self.state.get(url)
        now = self.clock.now()
        if record is not None and not record.gone and record.etag == validators.etag:
            self.requests["page 304"] += 1
            self.state.record_seen(url, validators, listed, source)
            self.schedule.visited(url, False, modified=article.modified)
            return
        self.requests["page 200"] += 1
        hashed = text_hash(body.decode())
        if record is not None and record.text_hash == hashed and not record.gone:
            self.state.record_seen(url, validators, listed, source)
            self.schedule.visited(url, False, modified=article.modified)
            return
        self.state.record_export(url, hashed, now, validators, listed, source)
        self.schedule.visited(url, True, modified=article.modified)
        self.exports[slug].append((now, article.version))


_PARSED: dict[tuple[str, int], SitemapParseResult] = {}


def _parsed(body: bytes, url: str) -> SitemapParseResult:
    """The shipped parser's result, once per body (both schedules read the same bodies)."""
    key = (url, body_digest(body))
    if key not in _PARSED:
        if len(_PARSED) > 64:
            _PARSED.clear()
        _PARSED[key] = parse_sitemap(body, url)
    return _PARSED[key]


REQUEST_KINDS = ("robots", "sitemap", "feed", "page 200", "page 304")


def simulate(
    days: int, seed: int, tmp: Path, modes: tuple[str, ...] = (EVERY_RUN, ADAPTIVE)
) -> tuple[MonthSite, dict[str, SimulatedCrawler]]:
    """One site, one crawl state per schedule, crawled at the top of every hour."""
    site = MonthSite(seed=seed)
    crawlers = {m: SimulatedCrawler(site, tmp / f"{m}.sqlite", SchedulePolicy(m)) for m in modes}
    for hour in range(days * 24):
        now = START + hour * HOUR
        site.advance(now)
        served = site.documents()
        for crawler in crawlers.values():
            crawler.run(now, served)
    for crawler in crawlers.values():
        crawler.state.close()
    return site, crawlers


def freshness(
    site: MonthSite, crawler: SimulatedCrawler, end: int
) -> dict[str, tuple[int, int, int]]:
    """Per kind of change: (changes, exported by the first run after, within 24 hours);
    changes of the last 24 hours count only for the first."""
    out: dict[str, list[int]] = {"announced": [0, 0, 0, 0], "silent": [0, 0, 0, 0]}
    for change in site.changes:
        if change.when > end:
            continue
        kind = out["announced" if change.announced else "silent"]
        next_run = -(-change.when // HOUR) * HOUR
        exported = [t for t, version in crawler.exports[change.slug] if version >= change.version]
        first = min((t for t in exported if t >= change.when), default=None)
        kind[0] += 1
        kind[1] += first == next_run
        if change.when <= end - DAY:
            kind[2] += 1
            kind[3] += first is not None and first - change.when <= DAY
    return {k: (v[0], v[1], v[2], v[3]) for k, v in out.items()}  # type: ignore[misc]


def _requests(run: Counter[str]) -> int:
    return sum(run[k] for k in REQUEST_KINDS)


def report(
    mode: str, runs: list[Counter[str]], fresh: dict[str, tuple[int, ...]]
) -> dict[str, float]:
    later = [_requests(r) for r in runs[1:]]
    mean = statistics.fmean(later)
    p95 = sorted(later)[int(0.95 * (len(later) - 1))]
    kinds = Counter[str]()
    for run in runs[1:]:
        kinds.update(run)
    by_kind = ", ".join(f"{k} {kinds[k] / len(later):.1f}" for k in sorted(kinds))
    print(
        f"{mode}: run 1 {_requests(runs[0])} requests; runs 2-{len(runs)}: {mean:.1f} per run "
        f"(95th percentile {p95}, most {max(later)}); per run: {by_kind}"
    )
    for kind, (count, first, window, day) in fresh.items():
        print(
            f"{mode}: {kind} changes {count}: {_share(first, count)} exported by the first run "
            f"after them; {_share(day, window)} within 24 hours (of {window})"
        )
    return {"mean": mean}


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--crawl-hours", type=int, default=0, help="also crawl the first N hours")
    parser.add_argument(
        "--keep-states",
        type=Path,
        metavar="DIR",
        help="keep the state files in DIR (every-run.sqlite, adaptive.sqlite: maintext state)",
    )
    args = parser.parse_args()
    if args.keep_states and any(args.keep_states.glob("*.sqlite")):
        parser.error(f"{args.keep_states} already holds state files")
    means = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep_states or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        site, crawlers = simulate(args.days, args.seed, work)
        end = START + (args.days * 24 - 1) * HOUR
        for mode, crawler in crawlers.items():
            means[mode] = report(mode, crawler.runs, freshness(site, crawler, end))["mean"]
            if args.crawl_hours:
                from benchmarks.recrawl_month_crawls import compare

                compare(mode, args.seed, args.crawl_hours, crawler.runs, work)
    print(f"adaptive: {100 * (1 - means[ADAPTIVE] / means[EVERY_RUN]):.1f}% fewer requests per run")
    print(f"(first run at {formatdate(START, usegmt=True)}, {datetime.now(UTC):%Y-%m-%d})")


if __name__ == "__main__":
    main()
