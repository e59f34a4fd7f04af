"""The report's plots as inline SVG, drawn by matplotlib (the ``report`` extra; Scrapy-free).

Static SVG: small, sharp when printed, and it needs no script and no network to show. Each
plot shows the sites that matter (most failures or drops, most pages) and the rest
together, so that a crawl of 500 sites gives the same eight figures as a crawl of one.
Without matplotlib, :func:`figures` returns None and the HTML report keeps its tables.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scrapy_maintext.report.broad import sites_that_matter
from scrapy_maintext.report.sites import ENGINES, UNKNOWN, bin_labels, total_of

#: Sites drawn one by one; the others are drawn together as "rest".
TOP_SITES = 6
#: Languages and statuses drawn one by one; the others are "other".
TOP_VALUES = 8
WIDTH = 7.5
#: Inches per character of a tick label or a small legend entry (roughly, for margins).
CHAR_WIDTH = 0.075
REST = "rest"

#: matplotlib's SVG metadata, left out (None): a page of plots needs no RDF block each.
_SVG_METADATA = ("Creator", "Date", "Format", "Type")
_XML_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.S)


@dataclass(frozen=True)
class Figure:
    """One plot: its id in the page (``plot-<key>``), caption and SVG markup."""

    key: str
    caption: str
    svg: str


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def figures(data: dict[str, Any]) -> list[Figure] | None:
    """Every plot the report's data has something for; None without matplotlib."""
    if not available():
        return None
    groups = site_groups(data["sites"])
    drawn = []
    for key, caption, draw in _PLOTS:
        figure = draw(data, groups)
        if figure is not None:
            drawn.append(Figure(key, caption, _svg(figure)))
    return drawn


def site_groups(sites: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The sites that matter one by one (by turns most failures or drops, most exported
    pages), then the others together as ``rest (N sites)``."""
    top = sites_that_matter(sites, TOP_SITES)
    chosen = {s["site"] for s in top}
    rest = [s for s in sites if s["site"] not in chosen]
    groups = [(short_name(s["site"]), [s]) for s in top]
    if rest:
        groups.append((f"{REST} ({len(rest)} sites)", rest))
    return groups


def short_name(site: str) -> str:
    return urlsplit(site).netloc or site


def _new_figure(rows: int = 1, height: float = 2.8, sharex: bool = False) -> Any:
    from matplotlib.figure import Figure as MplFigure

    figure = MplFigure(figsize=(WIDTH, height))
    figure.subplots(rows, 1, squeeze=False, sharex=sharex)
    return figure


def _margins(
    figure: Any,
    left: float = 0.6,
    right: float = 0.15,
    bottom: float = 0.5,
    top: float = 0.15,
    hspace: float = 0.2,
) -> None:
    """Fixed margins in inches: a layout engine takes longer than drawing the plot."""
    width, height = figure.get_size_inches()
    figure.subplots_adjust(
        left=min(left / width, 0.6),
        right=max(1 - right / width, 0.65),
        bottom=bottom / height,
        top=1 - top / height,
        hspace=hspace,
    )


def _text_width(texts: list[str]) -> float:
    """Inches that the longest of ``texts`` takes at the tick labels' size."""
    return CHAR_WIDTH * max((len(t) for t in texts), default=0)


def _svg(figure: Any) -> str:
    import matplotlib

    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "report"}):
        figure.savefig(out, format="svg", metadata=dict.fromkeys(_SVG_METADATA))
    return _XML_PROLOGUE.sub("", out.getvalue(), count=1)


def _stacked_bars(
    axes: Any,
    labels: list[str],
    counts: list[Counter[str]],
    keys: list[str],
    unit: str,
    colors: dict[str, str] | None = None,
) -> None:
    """One horizontal bar per label, stacked by ``keys``, drawn as shares of the bar."""
    left = [0.0] * len(labels)
    rows = list(range(len(labels)))
    for key in keys:
        shares = [c[key] / (sum(c.values()) or 1) for c in counts]
        axes.barh(rows, shares, left=left, label=key, color=(colors or {}).get(key))
        left = [a + b for a, b in zip(left, shares, strict=True)]
    names = [f"{label} ({sum(c.values())})" for label, c in zip(labels, counts, strict=True)]
    axes.set_yticks(rows, names)
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel(f"share of {unit}")
    axes.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small", frameon=False)
    _margins(axes.figure, left=0.2 + _text_width(names), right=0.5 + _text_width(keys))


def _legend_right(axes: Any, labels: list[str]) -> None:
    """The sites' legend right of the plot, where it hides no bar."""
    axes.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small", frameon=False)
    _margins(axes.figure, bottom=0.95, right=0.5 + _text_width(labels))


def _top_keys(counts: list[Counter[str]], limit: int = TOP_VALUES) -> list[str]:
    total: Counter[str] = Counter()
    for counter in counts:
        total.update(counter)
    return [key for key, _ in total.most_common(limit)]


def _fold_other(counter: Counter[str], keep: list[str]) -> Counter[str]:
    folded = Counter({key: counter[key] for key in keep if counter[key]})
    other = sum(v for k, v in counter.items() if k not in keep)
    if other:
        folded["other"] = other
    return folded


def _grouped(groups: list[tuple[str, list[dict[str, Any]]]], key: str) -> Any:
    """Labels and totals of ``key``: every site first (when there are several), then each
    group."""
    labels = [label for label, _ in groups]
    counts = [total_of(group, key) for _, group in groups]
    if len(groups) > 1:
        everything = [site for _, group in groups for site in group]
        labels, counts = ["all sites", *labels], [total_of(everything, key), *counts]
    return labels, counts


def plot_funnel(data: dict[str, Any], groups: list[Any]) -> Any:
    sites = data["sites"]
    steps = {
        "planned": sum(s["planned"] for s in sites),
        "fetched": sum(s["fetched"] for s in sites),
        "exported": sum(sum(s["extracted"].values()) for s in sites),
    }
    for kind in ("dropped", "skipped", "not_planned"):
        for reason, count in total_of(sites, kind).most_common(4):
            steps[f"{kind.replace('_', ' ')}: {reason}"] = count
    figure = _new_figure(rows=2, height=1.4 + 0.22 * (len(steps) + len(groups)))
    top, bottom = figure.axes
    names = list(steps)
    top.barh(names, list(steps.values()), color=["C0", "C0", "C2"] + ["C3"] * (len(names) - 3))
    top.invert_yaxis()
    top.set_xlabel("pages (all sites)")
    labels = [label for label, _ in groups]
    outcome = [_outcomes(group) for _, group in groups]
    _stacked_bars(bottom, labels, outcome, list(_OUTCOME_COLORS), "planned", _OUTCOME_COLORS)
    left = 0.2 + _text_width([*names, *(f"{label} (000000)" for label in labels)])
    _margins(figure, left=left, right=0.5 + _text_width(["not done"]), hspace=0.45)
    return figure


#: Exported green as in the funnel above, what fell out warm, what is left grey.
_OUTCOME_COLORS = {"exported": "C2", "dropped": "C3", "skipped": "C1", "not done": "C7"}


def _outcomes(group: list[dict[str, Any]]) -> Counter[str]:
    exported = sum(sum(s["extracted"].values()) for s in group)
    dropped = sum(sum(s["dropped"].values()) for s in group)
    skipped = sum(sum(s["skipped"].values()) for s in group)
    planned = sum(s["planned"] for s in group)
    left = max(planned - exported - dropped - skipped, 0)
    return Counter(exported=exported, dropped=dropped, skipped=skipped, **{"not done": left})


def plot_engines(data: dict[str, Any], groups: list[Any]) -> Any:
    labels, counts = _grouped(groups, "extracted")
    if not any(counts):
        return None
    figure = _new_figure(height=1.0 + 0.3 * len(labels))
    others = sorted({k for c in counts for k in c} - set(ENGINES))
    _stacked_bars(figure.axes[0], labels, counts, [*ENGINES, *others], "exported documents")
    return figure


def plot_text_lengths(data: dict[str, Any], groups: list[Any]) -> Any:
    edges = data["text_length_bins"]
    if not any(sum(s["text_lengths"]) for s in data["sites"]):
        return None
    figure = _new_figure(height=3.0)
    axes = figure.axes[0]
    bottom = [0] * len(edges)
    for label, group in groups:
        heights = [sum(s["text_lengths"][i] for s in group) for i in range(len(edges))]
        axes.bar(range(len(edges)), heights, bottom=bottom, label=label)
        bottom = [a + b for a, b in zip(bottom, heights, strict=True)]
    axes.set_xticks(range(len(edges)), bin_labels(edges), rotation=30, fontsize="small")
    axes.set_xlabel("main text length (characters)")
    axes.set_ylabel("documents")
    _legend_right(axes, [label for label, _ in groups])
    return figure


def plot_languages(data: dict[str, Any], groups: list[Any]) -> Any:
    return _plot_shares(groups, "languages", "exported documents", sort_keys=False)


def plot_page_types(data: dict[str, Any], groups: list[Any]) -> Any:
    return _plot_shares(groups, "page_types", "exported documents", sort_keys=False)


def plot_dates(data: dict[str, Any], groups: list[Any]) -> Any:
    months = sorted({m for s in data["sites"] for m in s["months"] if m != UNKNOWN})
    if not months:
        return None
    figure = _new_figure(height=3.0)
    axes = figure.axes[0]
    bottom = [0] * len(months)
    edges = list(range(len(months) + 1))
    for label, group in groups:
        total = total_of(group, "months")
        top = [b + total[m] for b, m in zip(bottom, months, strict=True)]
        # Stacked steps, one shape per group: a bar per month and group would be hundreds.
        axes.stairs(top, edges, baseline=bottom, fill=True, label=label)
        bottom = top
    step = max(len(months) // 12, 1)
    ticks = range(0, len(months), step)
    axes.set_xticks([t + 0.5 for t in ticks], months[::step], rotation=30, fontsize="small")
    unknown = sum(s["months"].get(UNKNOWN, 0) for s in data["sites"])
    axes.set_xlabel(f"publication month ({unknown} documents without a date)")
    axes.set_ylabel("documents")
    _legend_right(axes, [label for label, _ in groups])
    return figure


def plot_statuses(data: dict[str, Any], groups: list[Any]) -> Any:
    return _plot_shares(groups, "statuses", "fetched pages", sort_keys=True)


def _plot_shares(groups: list[Any], key: str, xlabel: str, sort_keys: bool) -> Any:
    """Stacked shares of a per-site counter: its most common keys, the rest as "other"."""
    labels, counts = _grouped(groups, key)
    if not any(counts):
        return None
    keep = _top_keys(counts)
    if sort_keys:
        keep = sorted(keep)
    folded = [_fold_other(c, keep) for c in counts]
    keys = [k for k in [*keep, "other"] if any(c[k] for c in folded)]
    figure = _new_figure(height=1.0 + 0.3 * len(labels))
    _stacked_bars(figure.axes[0], labels, folded, keys, xlabel)
    return figure


def plot_requests(data: dict[str, Any], groups: list[Any]) -> Any:
    """Requests per second over time, one panel per top site with its delay's limit."""
    width = float(data["bucket_seconds"])
    panels = [(label, group) for label, group in groups if any(s["requests"] for s in group)]
    if not panels:
        return None
    figure = _new_figure(rows=len(panels), height=0.8 + 0.9 * len(panels), sharex=True)
    for axes, (label, group) in zip(figure.axes, panels, strict=True):
        length = max(len(s["requests_per_bucket"]) for s in group)
        rates = [0.0] * length
        for site in group:
            for i, count in enumerate(site["requests_per_bucket"]):
                rates[i] += count / width
        # One filled step line per panel: a bar per bucket would be hundreds of shapes.
        axes.stairs(rates, [i * width for i in range(length + 1)], fill=True)
        delay = group[0]["delay"] if len(group) == 1 else None
        if delay:
            axes.axhline(1 / delay, color="C3", linestyle="--", label=f"1 / delay ({delay:g} s)")
            axes.legend(fontsize="x-small", frameon=False, loc="upper right")
        axes.set_ylabel("req/s", fontsize="small")
        axes.set_title(label, fontsize="small", loc="left")
    figure.axes[-1].set_xlabel(f"seconds since the start (bars of {width:g} s)")
    _margins(figure, top=0.3, hspace=0.5)
    return figure


def plot_recrawl(data: dict[str, Any], groups: list[Any]) -> Any:
    outcomes = {k: v for k, v in (data.get("recrawl") or {}).items() if v}
    if not outcomes:
        return None
    figure = _new_figure(height=0.8 + 0.3 * len(outcomes))
    axes = figure.axes[0]
    axes.barh(list(outcomes), list(outcomes.values()))
    axes.invert_yaxis()
    axes.set_xlabel("pages (all sites)")
    _margins(figure, left=0.2 + _text_width(list(outcomes)))
    return figure


_PLOTS: list[tuple[str, str, Callable[[dict[str, Any], list[Any]], Any]]] = [
    ("funnel", "Funnel: planned, fetched, exported, and why pages fell out", plot_funnel),
    ("engines", "Which engine gave the text (fallback: the model was unsure)", plot_engines),
    ("text-lengths", "Main text length", plot_text_lengths),
    ("languages", "Languages", plot_languages),
    ("page-types", "Page types per site (article, listing, product, ...)", plot_page_types),
    ("dates", "Publication dates by month", plot_dates),
    ("statuses", "HTTP statuses of pages", plot_statuses),
    ("requests", "Requests over time against each site's delay (politeness)", plot_requests),
    ("recrawl", "Recurring crawl: what changed since the last run", plot_recrawl),
]
