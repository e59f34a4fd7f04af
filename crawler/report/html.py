"""The crawl report as one standalone HTML page, drawn from the JSON report (Scrapy-free).

The page holds everything it shows: styles, a few lines of script (the site table sorts,
printing opens every site's section), the plots as inline SVG and the JSON report itself
(``<script type="application/json" id="report-data">``), so that ``maintext report`` can
draw it again. ``report.html#sort=planned`` opens it sorted by a column (ascending). No
network is needed to view it; it prints on A4.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import Counter
from collections.abc import Iterable
from html import escape
from typing import Any

from scrapy_maintext.report import plots
from scrapy_maintext.report.broad import binned, sites_that_matter
from scrapy_maintext.report.sites import bin_labels, total_of

#: The one line a report without plots shows.
PLOTS_HINT = 'Plots need the report extra: pip install "scrapy-maintext[report]"'
DATA_ID = "report-data"
#: Sites the table and the sections show at most (the sites that matter); the page's data
#: holds every site.
TABLE_SITES = 200
#: Embedded JSON above this many bytes is kept gzipped (base64): a 10,000-site report
#: stays a page of a megabyte or two.
COMPRESS_ABOVE = 256_000
_COMPRESSED_TYPE = "application/gzip+base64"

#: The site table's columns: the key of :func:`site_values`, a tooltip.
SITE_COLUMNS: list[tuple[str, str]] = [
    ("planned", "pages planned (sitemaps, feeds, links)"),
    ("fetched", "pages downloaded"),
    ("exported", "documents exported"),
    ("dropped", "pages dropped after download (no text, duplicate, ...)"),
    ("skipped", "planned pages not exported before extraction (HTTP errors, filters, ...)"),
    ("not_planned", "URLs found but not planned (off-site, too old, ...)"),
    ("mean_text_length", "mean main text length (characters)"),
    ("requests", "requests sent (pages, robots.txt, sitemaps, feeds, retries)"),
    ("delay", "the site's delay (s) between requests at its last request"),
    ("min_gap", "the shortest time (s) that passed between two requests"),
]

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:76em;padding:0 1em;color:#222}
h1{font-size:1.6em;margin:0 0 .3em}h2{border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.15em .45em;text-align:right}
th{background:#f0f0f0;position:sticky;top:0}td:first-child,th:first-child{text-align:left}
tbody tr:nth-child(even){background:#fafafa}.kv td{text-align:left;vertical-align:top}
.kv td:first-child{font-weight:600;white-space:nowrap}.hint{background:#fff6d5;padding:.5em}
#site-table{font-size:.92em}#site-table th{cursor:pointer;vertical-align:bottom}
#site-table td.failure{color:#a00;text-align:left}
figure{margin:1em 0;break-inside:avoid}figure svg{max-width:100%;height:auto}
figcaption{font-weight:600}details{margin:.3em 0}summary{cursor:pointer}
.counts td:first-child{font-weight:600}.scroll{overflow-x:auto}
@media print{body{max-width:none;font-size:11px}th{position:static}.scroll{overflow:visible}}
"""

_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function(table){
  table.querySelectorAll('th').forEach(function(th,col){
    th.addEventListener('click',function(){
      var body=table.tBodies[0],rows=Array.from(body.rows),up=th.dataset.dir!=='up';
      th.dataset.dir=up?'up':'down';
      rows.sort(function(a,b){
        var x=a.cells[col].dataset.value,y=b.cells[col].dataset.value;
        var d=(x!==undefined&&y!==undefined)?(+x)-(+y):
          a.cells[col].textContent.localeCompare(b.cells[col].textContent);
        return up?d:-d;});
      rows.forEach(function(r){body.appendChild(r);});});});});
var sortBy=location.hash.match(/^#sort=(\\w+)$/);
if(sortBy){var th=document.querySelector('#site-table th[data-key="'+sortBy[1]+'"]');
  if(th)th.click();}
window.addEventListener('beforeprint',function(){
  document.querySelectorAll('details').forEach(function(d){d.open=true;});});
"""


def site_values(site: dict[str, Any]) -> dict[str, Any]:
    """The site table's numbers of one site of the JSON report."""
    return {
        "planned": site["planned"],
        "fetched": site["fetched"],
        "exported": sum(site["extracted"].values()),
        "dropped": sum(site["dropped"].values()),
        "skipped": sum(site["skipped"].values()),
        "not_planned": sum(site["not_planned"].values()),
        "mean_text_length": site["mean_text_length"],
        "requests": site.get("requests", 0),
        "delay": site.get("delay"),
        "min_gap": site.get("min_gap"),
    }


def render(data: dict[str, Any]) -> str:
    """The HTML page of a JSON report (as :meth:`RunReport.to_dict` makes it)."""
    figures = plots.figures(data)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Crawl report: {escape(_title(data))}</title>",
        f"<style>{_STYLE}</style></head><body>",
        _header(data),
        _whole_run(data),
        _plots(figures),
        _site_table(data["sites"]),
        _site_sections(data, _shown(data["sites"])),
        f"<script>{_SCRIPT}</script>",
        _embedded(data),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _title(data: dict[str, Any]) -> str:
    sites = data["sites"]
    first = plots.short_name(sites[0]["site"]) if sites else "no site"
    return first if len(sites) == 1 else f"{len(sites)} sites"


def _header(data: dict[str, Any]) -> str:
    run = data.get("run") or {}
    versions = ", ".join(f"{k} {v}" for k, v in (run.get("versions") or {}).items())
    settings = ", ".join(f"{k}={v}" for k, v in (run.get("settings") or {}).items())
    rows = [
        ("command", f"<code>{escape(str(run.get('command') or '-'))}</code>"),
        ("finished", escape(f"{data.get('reason', '-')} at {run.get('finished', '-')}")),
        ("duration", escape(_duration(run.get("duration_seconds")))),
        ("versions", escape(versions or "-")),
        ("model", escape(str(run.get("model_version") or "none (no neural extraction)"))),
        ("settings", escape(settings or "-")),
    ]
    return (
        f"<header><h1>Crawl report: {escape(_title(data))}</h1>"
        f"{_kv_table(rows, 'run-header')}</header>"
    )


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, (int, float)):
        return "-"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


def _kv_table(rows: Iterable[tuple[str, str]], table_id: str = "") -> str:
    ident = f' id="{table_id}"' if table_id else ""
    body = "".join(f"<tr><td>{escape(k)}</td><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="kv"{ident}>{body}</table>'


def _counts(counter: dict[str, int] | Counter[str], order: str = "count") -> str:
    """``a 3, b 1``: by count, by key (``key``) or as given (``given``); long lists binned
    (months by year, rare values as "other")."""
    return ", ".join(f"{escape(str(k))} {v}" for k, v in binned(counter, order)) or "-"


def _shown(sites: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sites of the table and the sections: all, or the :data:`TABLE_SITES` that
    matter."""
    return sites if len(sites) <= TABLE_SITES else sites_that_matter(sites, TABLE_SITES)


def _whole_run(data: dict[str, Any]) -> str:
    sites = data["sites"]
    values = [site_values(site) for site in sites]
    funnel = " → ".join(
        f"{step} {sum(v[step] for v in values)}" for step in ("planned", "fetched", "exported")
    )
    rows = [("funnel", escape(funnel)), *_counter_rows(sites, data)]
    failed = sum(1 for s in sites if s.get("failure"))
    if failed:
        rows.append(("sites not crawled", str(failed)))
    table = _kv_table(rows, "run-totals")
    count = f"{len(sites)} site" + ("" if len(sites) == 1 else "s")
    return f'<section id="run"><h2>Whole run ({count})</h2>{table}</section>'


def _counter_rows(sites: list[dict[str, Any]], data: dict[str, Any]) -> list[tuple[str, str]]:
    """Rows of counts by reason, engine, language, status, ... (empty ones left out)."""
    rows = []
    for label, key, order in _COUNTERS:
        counter = total_of(sites, key)
        if counter:
            rows.append((label, _counts(counter, order)))
    bins = range(len(data["text_length_bins"]))
    lengths = [sum(s["text_lengths"][i] for s in sites) for i in bins]
    if any(lengths):
        by_bin = dict(zip(bin_labels(data["text_length_bins"]), lengths, strict=True))
        rows.append(("text lengths", _counts(by_bin, "given")))
    recrawl = data.get("recrawl") or {}
    if any(recrawl.values()):
        rows.append(("recurring crawl", _counts(recrawl, "key")))
    repaired = data.get("repaired") or {}
    if any(repaired.values()):
        rows.append(("pages repaired or cut", _counts(repaired, "count")))
    return rows


_COUNTERS = [
    ("skipped", "skipped", "count"),
    ("dropped", "dropped", "count"),
    ("not planned", "not_planned", "count"),
    ("engines", "extracted", "count"),
    ("languages", "languages", "count"),
    ("page types", "page_types", "count"),
    ("publication months", "months", "key"),
    ("HTTP statuses", "statuses", "key"),
]


def _plots(figures: list[plots.Figure] | None) -> str:
    if figures is None:
        hint = f'<p class="hint" id="plots-hint">{escape(PLOTS_HINT, quote=False)}</p>'
        return f'<section id="plots"><h2>Plots</h2>{hint}</section>'
    drawn = "".join(
        f'<figure id="plot-{f.key}"><figcaption>{escape(f.caption)}</figcaption>{f.svg}</figure>'
        for f in figures
    )
    return f'<section id="plots"><h2>Plots</h2>{drawn}</section>'


def _site_table(sites: list[dict[str, Any]]) -> str:
    shown = _shown(sites)
    note = "Click a column to sort."
    if len(shown) < len(sites):
        note = (
            f"{len(shown)} of {len(sites)} sites: by turns those with most failures or drops "
            "and those with most exported pages. Every site is in this page's data: "
            "<code>maintext report THIS.html -o sites.json</code>. " + note
        )
    head = "<th>site</th>" + "".join(
        f'<th data-key="{name}" title="{escape(tip)}">{escape(_header_of(name))}</th>'
        for name, tip in SITE_COLUMNS
    )
    head += "<th>not crawled</th>"
    rows = []
    for site in shown:
        values = site_values(site)
        cells = "".join(_number_cell(name, values[name]) for name, _ in SITE_COLUMNS)
        failure = escape(site.get("failure") or "")
        rows.append(
            f'<tr data-site="{escape(site["site"])}"><td><a href="#{_anchor(site)}">'
            f'{escape(site["site"])}</a></td>{cells}<td class="failure">{failure}</td></tr>'
        )
    return (
        f'<section id="sites"><h2>Sites</h2><p id="sites-note">{note}</p><div class="scroll">'
        f'<table class="sortable" id="site-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


#: Headers shorter than their key, so that the table fits a laptop's screen.
_SHORT_HEADERS = {
    "mean_text_length": "mean chars",
    "delay": "delay (s)",
    "min_gap": "min gap (s)",
}


def _header_of(name: str) -> str:
    return _SHORT_HEADERS.get(name, name.replace("_", " "))


def _number_cell(name: str, value: Any) -> str:
    if value is None:
        return f'<td data-key="{name}" data-value="-1">-</td>'
    return f'<td data-key="{name}" data-value="{value}">{value:g}</td>'


def _anchor(site: dict[str, Any]) -> str:
    return "site-" + "".join(c if c.isalnum() else "-" for c in site["site"])


def _site_sections(data: dict[str, Any], shown: list[dict[str, Any]]) -> str:
    sections = []
    labels = bin_labels(data["text_length_bins"])
    for site in shown:
        values = site_values(site)
        summary = (
            f"{escape(site['site'])}: exported {values['exported']} of {values['planned']} planned"
        )
        rows = [
            (label, _counts(site.get(key) or {}, order), key)
            for label, key, order in _COUNTERS
            if site.get(key)
        ]
        lengths = dict(zip(labels, site["text_lengths"], strict=True))
        if any(lengths.values()):
            rows.append(("text lengths", _counts(lengths, "given"), "text_lengths"))
        if site.get("failure"):
            rows.append(("not crawled", escape(site["failure"]), "failure"))
        body = "".join(
            f'<tr data-key="{key}"><td>{escape(label)}</td><td>{value}</td></tr>'
            for label, value, key in rows
        )
        sections.append(
            f'<details id="{_anchor(site)}" data-site="{escape(site["site"])}">'
            f'<summary>{summary}</summary><table class="kv counts">{body}</table></details>'
        )
    return f'<section id="site-details"><h2>Each site</h2>{"".join(sections)}</section>'


def _embedded(data: dict[str, Any]) -> str:
    # "</" inside a script element would end it: JSON allows "<\\/" instead.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    if len(text) > COMPRESS_ABOVE:
        packed = base64.b64encode(gzip.compress(text.encode("utf-8"), mtime=0)).decode("ascii")
        return f'<script type="{_COMPRESSED_TYPE}" id="{DATA_ID}">{packed}</script>'
    return f'<script type="application/json" id="{DATA_ID}">{text}</script>'


def embedded_data(page: str) -> dict[str, Any] | None:
    """The JSON report a page of :func:`render` holds, or None."""
    for kind in ("application/json", _COMPRESSED_TYPE):
        start_tag = f'<script type="{kind}" id="{DATA_ID}">'
        start = page.find(start_tag)
        end = page.find("</script>", start)
        if start < 0 or end < 0:
            continue
        text = page[start + len(start_tag) : end]
        if kind == _COMPRESSED_TYPE:
            text = gzip.decompress(base64.b64decode(text)).decode("utf-8")
        data: dict[str, Any] = json.loads(text)
        return data
    return None
