"""The end-of-crawl table of the console and the durations of progress lines (Scrapy-free)."""

from __future__ import annotations

from scrapy_maintext.report.sites import SiteReport


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


_COLUMNS = ("planned", "fetched", "extracted", "dropped", "skipped", "mean chars")


def format_report(sites: dict[str, SiteReport], reason: str) -> str:
    """The end-of-crawl table: one row per site, then its reasons on an indented line."""
    width = max([len("site"), *(len(key) for key in sites)])
    header = f"{'site':<{width}}  " + "  ".join(f"{c:>10}" for c in _COLUMNS)
    lines = [f"Crawl report ({len(sites)} sites, finished: {reason})", header]
    for key, r in sites.items():
        numbers = (
            r.planned,
            r.fetched,
            sum(r.extracted.values()),
            sum(r.dropped.values()),
            sum(r.skipped.values()),
            r.mean_text_length(),
        )
        lines.append(f"{key:<{width}}  " + "  ".join(f"{n:>10}" for n in numbers))
        details = [f"not crawled: {r.failure}"] if r.failure else []
        if r.rendered:
            details.append(f"rendered {r.rendered} in {r.render_seconds:.1f} s")
        for label, counter in (
            ("by", r.extracted),
            ("dropped", r.dropped),
            ("skipped", r.skipped),
            ("not planned", r.not_planned),
            ("recrawl", r.recrawl),
        ):
            if counter:
                details.append(
                    f"{label} " + ", ".join(f"{k} {v}" for k, v in counter.most_common())
                )
        if details:
            lines.append(" " * 4 + "; ".join(details))
    return "\n".join(lines)
