"""What the discovery spiders ask the crawl state before they request anything.

* A planned page whose sitemap ``lastmod`` (or feed entry date) is not newer than the date
  it was listed with when last decided is not requested (:meth:`DiscoveryMemory.unchanged`).
* A child sitemap whose ``lastmod`` in its index equals the remembered one is not fetched
  again; the pages that sitemap listed without a date are re-planned (they get conditional
  requests: nothing says they did not change). A sitemap or feed answering ``304`` is the
  same: what it listed is remembered (its child sitemaps and undated pages re-planned).
* A page a re-read sitemap no longer lists is requested once (conditionally): a 404 or 410
  marks it gone.

Sitemaps' and feeds' own rows (validators, lastmod in their index, which index listed them)
are written only when a site's discovery and every planned page of it ended cleanly
(:meth:`DiscoveryMemory.save`): a run killed halfway reads them all again next time rather
than take a 304 for pages it never fetched.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from scrapy_maintext.state.schedule import NO_HINTS, Hints, Schedule, requested_from
from scrapy_maintext.state.store import StateStore
from scrapy_maintext.state.validators import Validators, iso_to_epoch


@dataclass(frozen=True)
class DocumentSeen:
    """A sitemap or feed read in this run."""

    url: str
    validators: Validators | None
    listed: int | None
    parent: str | None
    #: A hash of its body (None: it answered 304), and what it says of its changes.
    digest: int | None = None
    hints: Hints = NO_HINTS


@dataclass(frozen=True)
class Listing:
    """What a sitemap or feed listed when last read (pages gone since left out)."""

    #: Child sitemaps and feeds.
    children: list[str]
    #: Pages listed with a date (not planned again while the listing stays the same).
    dated: list[str]
    #: Pages listed without one (planned again: nothing says they did not change).
    undated: list[str]


@dataclass
class DiscoveryMemory:
    """One crawl's questions to the state and its discovery rows waiting for a clean end."""

    state: StateStore
    schedule: Schedule
    documents: defaultdict[str, list[DocumentSeen]] = field(
        default_factory=lambda: defaultdict(list)
    )
    unlisted: defaultdict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def unchanged(self, dated: dict[str, datetime | None]) -> set[str]:
        """Of the pages ``dated`` (URL to the date a sitemap or feed lists it with), those
        whose date is not newer than the one remembered; undated pages never are."""
        dates = {url: _epoch(date) for url, date in dated.items() if date is not None}
        records = self.state.get_many(dates)
        return {
            url
            for url, record in records.items()
            if not record.gone and record.listed is not None and dates[url] <= record.listed
        }

    def not_due(self, site: str, dated: dict[str, datetime | None]) -> set[str]:
        """Of the pages ``dated``, those listed without a date that are not due yet (with
        ``RECRAWL_SCHEDULE=adaptive``); a page its sitemap no longer lists is checked now."""
        undated = [url for url, date in dated.items() if date is None]
        return self.schedule.not_due(undated) - set(self.unlisted.get(site, ()))

    def due(self, url: str) -> bool:
        """Whether the sitemap or feed ``url`` is read in this run."""
        return self.schedule.due(url)

    def requested_from(self, url: str) -> int | None:
        """When a run starts late enough to read the sitemap or feed ``url`` (None: now)."""
        visit = self.schedule.get(url)
        return None if visit is None else requested_from(self.schedule.policy, visit)

    def child_unchanged(self, url: str, lastmod: str | None) -> bool:
        """A child sitemap listed with the same ``lastmod`` as when it was last read."""
        listed = iso_to_epoch(lastmod)
        if listed is None:
            return False
        record = self.state.get(url)
        return record is not None and record.listed == listed

    def listed_date(self, url: str) -> int | None:
        """The ``lastmod`` a child sitemap was last listed with in its index."""
        record = self.state.get(url)
        return record.listed if record is not None else None

    def remembered_children(self, url: str) -> Listing:
        """What the sitemap or feed ``url`` listed last time."""
        dated, undated = self.state.pages_listed_by(url)
        return Listing(self.state.listed_by(url, documents=True), dated, undated)

    def no_longer_listed(self, site: str, sitemap: str, listed: Iterable[str]) -> list[str]:
        """Pages ``sitemap`` listed last time and not now (each to be checked once)."""
        now = set(listed)
        gone = [url for url in self.state.listed_by(sitemap) if url not in now]
        self.unlisted[site] += gone
        return gone

    def read(
        self,
        site: str,
        url: str,
        validators: Validators | None,
        lastmod: str | None,
        parent: str | None,
        digest: int | None = None,
        hints: Hints = NO_HINTS,
    ) -> None:
        """A sitemap or feed was read (``validators`` None: it answered 304)."""
        seen = DocumentSeen(url, validators, iso_to_epoch(lastmod), parent, digest, hints)
        self.documents[site].append(seen)

    def save(self, site: str) -> None:
        """The site's discovery and pages ended cleanly: remember its documents, and when
        each is due again (changed when its body did)."""
        for doc in self.documents.pop(site, []):
            self.state.record_seen(doc.url, doc.validators, doc.listed, doc.parent, document=True)
            self.schedule.visited(doc.url, False, doc.hints, digest=doc.digest)
        self.state.unlist(self.unlisted.pop(site, []))


def _epoch(date: datetime) -> int:
    return int((date if date.tzinfo else date.replace(tzinfo=UTC)).timestamp())


def format_epoch(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


@dataclass
class NotDueDocuments:
    """The sitemaps and feeds a run did not read because they were not due: said once, at
    the end, on the default console (a cron run that asks nothing says why)."""

    count: int = 0
    #: The one a run reads first: (the run's start from which it is read, its URL).
    first: tuple[int, str] | None = None

    def add(self, url: str, when: int | None) -> None:
        self.count += 1
        key = (when if when is not None else 0, url)
        if self.first is None or key < self.first:
            self.first = key

    def line(self, min_interval: int) -> str | None:
        """The end's line, or None when every sitemap and feed was due."""
        if self.first is None:
            return None
        when, url = self.first
        start = format_epoch(when) if when else "now"
        what = url if self.count == 1 else f"{self.count} sitemaps or feeds ({url} first)"
        listed = "it listed" if self.count == 1 else "they listed"
        return (
            f"Not due: {what} read by a run started from {start} (RECRAWL_SCHEDULE=adaptive, "
            f"RECRAWL_MIN_INTERVAL={min_interval}); until then what {listed} last is planned. "
            "To read it now: -s RECRAWL_SCHEDULE=every-run"
        )
