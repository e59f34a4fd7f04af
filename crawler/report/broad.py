"""A crawl of many sites, read at a glance (Scrapy-free): which sites matter, long lists
binned, the whole-crawl progress line and the end-of-crawl summary.

Above ``CRAWL_REPORT_BROAD_SITES`` sites a line per site is no longer readable (200 sites
gave 200 progress lines every 30 s and a 400-line table). Progress is then one line for the
crawl and its slowest sites; the end table shows the totals and the sites with most
failures or drops, and names where the full table is. The HTML report draws its plots and
its site table from the same ranking (:func:`sites_that_matter`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scrapy_maintext.vocabulary.names import Stat

#: Lists longer than this are binned: months by year, other values as the most common
#: ones and "other".
MAX_LIST = 24
#: Values of a count list shown one by one before "other".
TOP_VALUES = 10
#: Slowest sites named on the progress line.
SLOWEST = 3


def trouble(site: Mapping[str, Any]) -> int:
    """Pages of a JSON report site that failed or were dropped (a site not crawled at all
    counts above any number of pages)."""
    failed = sum(site["skipped"].values()) + sum(site["dropped"].values())
    return failed + (10**9 if site.get("failure") else 0)


def exported(site: Mapping[str, Any]) -> int:
    return sum(site["extracted"].values())


def sites_that_matter(sites: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """Up to ``count`` sites: by turns the one with most failures or drops and the one with
    most exported pages (ties by name), each once; sites with neither come last."""
    by_trouble = sorted((s for s in sites if trouble(s)), key=lambda s: (-trouble(s), s["site"]))
    by_pages = sorted(sites, key=lambda s: (-exported(s), -s["planned"], s["site"]))
    chosen: dict[str, dict[str, Any]] = {}
    turns = [iter(by_trouble), iter(by_pages)]
    while len(chosen) < min(count, len(sites)) and turns:
        for ranking in list(turns):
            site = next((s for s in ranking if s["site"] not in chosen), None)
            if site is None:
                turns.remove(ranking)
            elif len(chosen) < count:
                chosen[site["site"]] = site
    return list(chosen.values())


def binned(counter: Mapping[str, int], order: str = "count") -> list[tuple[str, int]]:
    """A counter as (label, count) pairs, short enough to read: by count (the
    :data:`TOP_VALUES` most common, then ``other (N values)``), by key (publication months
    binned by year when there are more than :data:`MAX_LIST`) or as given."""
    if order == "given":
        return [(k, v) for k, v in counter.items() if v]
    if order == "key":
        items = sorted((k, v) for k, v in counter.items() if v)
        if len(items) <= MAX_LIST:
            return items
        years: Counter[str] = Counter()
        for key, value in items:
            years[key[:4] if key[:4].isdigit() else key] += value
        return sorted(years.items())
    common = Counter({k: v for k, v in counter.items() if v}).most_common()
    if len(common) <= TOP_VALUES + 1:
        return common
    rest = common[TOP_VALUES:]
    return [*common[:TOP_VALUES], (f"other ({len(rest)} values)", sum(v for _, v in rest))]


def format_counts(pairs: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{k} {v}" for k, v in pairs) or "-"


@dataclass(frozen=True)
class SiteProgress:
    """One site's numbers for the whole-crawl progress line."""

    site: str
    planned: int
    done: int
    failed: bool
    started: bool
    #: Discovery still has requests of the site outstanding (None: not known).
    discovering: bool
    eta_seconds: float | None


def progress_line(
    sites: list[SiteProgress], pages_per_second: float, format_seconds: Any
) -> tuple[str, tuple[Any, ...]]:
    """The message and arguments of the whole-crawl progress line (%-style, for logging)."""
    failed = sum(s.failed for s in sites)
    done = sum(
        1 for s in sites if not s.failed and not s.discovering and s.started and s.done >= s.planned
    )
    running = sum(1 for s in sites if s.started and not s.failed) - done
    waiting = len(sites) - failed - done - running
    planned = sum(s.planned for s in sites if not s.failed)
    pages = sum(s.done for s in sites)
    left = max(planned - pages, 0)
    eta = left / pages_per_second if pages_per_second > 0 and left else None
    slowest = sorted(
        (s for s in sites if s.started and not s.failed and s.planned > s.done),
        key=lambda s: (-(s.planned - s.done), s.site),
    )[:SLOWEST]
    named = ", ".join(
        f"{s.site} ({s.planned - s.done} left, ETA {format_seconds(s.eta_seconds)})"
        for s in slowest
    )
    message = (
        "Progress: %d of %d sites done, %d running, %d waiting, %d failed; "
        "%d of %d planned pages done, %.1f pages/s, ETA %s; slowest: %s"
    )
    args = (
        done,
        len(sites),
        running,
        waiting,
        failed,
        pages,
        planned,
        pages_per_second,
        format_seconds(eta),
        named or "-",
    )
    return message, args


#: Rows of the end table of a broad crawl (the sites with most failures or drops).
TABLE_ROWS = 10
_COLUMNS = ("planned", "fetched", "extracted", "dropped", "skipped")


def summary(
    sites: list[dict[str, Any]],
    reason: str,
    full_table: str,
    discovery: Mapping[str, int] | None = None,
) -> str:
    """The end-of-crawl text of a broad crawl: totals, the sites with most failures or
    drops, what discovery met (``discovery``: stat names without ``discovery/``, counts;
    a line per site went to the log), where the full table is."""
    crawled = [s for s in sites if not s.get("failure")]
    failures = Counter(failure_kind(s) for s in sites if s.get("failure"))
    totals = {
        "planned": sum(s["planned"] for s in sites),
        "fetched": sum(s["fetched"] for s in sites),
        "extracted": sum(exported(s) for s in sites),
        "dropped": sum(sum(s["dropped"].values()) for s in sites),
        "skipped": sum(sum(s["skipped"].values()) for s in sites),
    }
    lines = [
        f"Crawl report ({len(sites)} sites, finished: {reason})",
        f"sites: {len(crawled)} crawled, {len(sites) - len(crawled)} not crawled"
        + (f" ({format_counts(binned(failures))})" if failures else ""),
        "pages: " + ", ".join(f"{k} {v}" for k, v in totals.items()),
    ]
    for label, key in (("dropped", "dropped"), ("skipped", "skipped"), ("by", "extracted")):
        total: Counter[str] = Counter()
        for site in sites:
            total.update(site[key])
        if total:
            lines.append(f"{label}: {format_counts(binned(total))}")
    if discovery:
        lines.append(f"discovery: {format_counts(binned(discovery))}")
    rendered = sum(s.get("rendered") or 0 for s in sites)
    if rendered:
        seconds = sum(s.get("render_seconds") or 0.0 for s in sites)
        rendering = sum(1 for s in sites if s.get("rendered"))
        lines.append(f"rendered: {rendered} pages of {rendering} sites in {seconds:.1f} s")
    worst = [s for s in sorted(sites, key=lambda s: (-trouble(s), s["site"])) if trouble(s)]
    if worst:
        shown = worst[:TABLE_ROWS]
        width = max(len("site"), *(len(s["site"]) for s in shown))
        lines.append(f"Most failures or drops ({len(shown)} of {len(worst)} sites with any):")
        lines.append(f"{'site':<{width}}  " + "  ".join(f"{c:>9}" for c in _COLUMNS) + "  why")
        for site in shown:
            numbers = (
                site["planned"],
                site["fetched"],
                exported(site),
                sum(site["dropped"].values()),
                sum(site["skipped"].values()),
            )
            why = site.get("failure") or format_counts(
                binned(Counter(site["dropped"]) + Counter(site["skipped"]))[:3]
            )
            row = "  ".join(f"{n:>9}" for n in numbers)
            lines.append(f"{site['site']:<{width}}  {row}  {_first_words(str(why), 60)}")
    else:
        lines.append("No site had failures or drops.")
    lines.append(f"Every site: {full_table}")
    return "\n".join(lines)


def discovery_problems(stats: Mapping[str, Any]) -> dict[str, int]:
    """Counted discovery problems (invalid sitemaps and feeds, failed discovery requests,
    sitemaps past the limits) of a crawl's stats, by stat name without ``discovery/``."""
    prefixes = (Stat.DISCOVERY_INVALID, Stat.DISCOVERY_ERRORS)
    names = (Stat.SITEMAPS_OVER_LIMIT, Stat.SITEMAPS_TOO_DEEP, Stat.SITEMAPS_TRUNCATED)
    return {
        name.removeprefix("discovery/"): int(value)
        for name, value in stats.items()
        if (name.startswith(prefixes) or name in names) and isinstance(value, int) and value
    }


def failure_kind(site: Mapping[str, Any]) -> str:
    """Why a site was not crawled, without its host: sites that failed alike count
    together ("connection refused by HOST")."""
    text = str(site.get("failure") or "")
    netloc = urlsplit(site["site"]).netloc
    host = urlsplit(site["site"]).hostname or netloc
    for name in filter(None, (netloc, host)):
        text = text.replace(name, "HOST")
    return _first_words(text, 60)


def _first_words(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
