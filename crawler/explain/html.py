"""A :class:`~.trace.Trace` as one standalone HTML page (Scrapy-free).

The page holds everything it shows: inline styles, no script, no image, no link to another
resource (only ``#`` anchors), so that opening it makes no request; every text taken from
the page is escaped. A header with the page's facts and a legend, then one row per page
block: kept (green) or dropped (grey, with the reason), the model's probability as a bar
beside the threshold, the block's kind and its text (shortened).
"""

from __future__ import annotations

from collections import Counter
from html import escape

import scrapy_maintext
from scrapy_maintext.explain.trace import Fallback, Row, Trace, Verdict
from scrapy_maintext.extraction.options import ExtractOptions

#: Characters of a block's text shown in its row (the whole text is in the text section).
SHOWN_CHARS = 320

#: A verdict's label in its row's chip.
LABELS = {
    Verdict.KEPT: "kept",
    Verdict.KEPT_BY_NEIGHBOURS: "kept: smoothing",
    Verdict.KEPT_WITH_GROUP: "kept: repeated structure",
    Verdict.KEPT_BY_TRAFILATURA: "kept by trafilatura",
    Verdict.BELOW_THRESHOLD: "below threshold",
    Verdict.DROPPED_BY_NEIGHBOURS: "dropped: smoothing",
    Verdict.REPEATED_RUN: "repeated run",
    Verdict.NOT_IN_TRAFILATURA: "not in trafilatura's text",
    Verdict.CONVENTION: "convention",
    Verdict.TRAILING_HEADING: "trailing heading",
}
#: Chip colours by what decided: the model, trafilatura, the convention, the other rules.
_TONES = {
    Verdict.CONVENTION: "conv",
    Verdict.TRAILING_HEADING: "rule",
    Verdict.REPEATED_RUN: "rule",
    Verdict.DROPPED_BY_NEIGHBOURS: "rule",
    Verdict.NOT_IN_TRAFILATURA: "traf",
}

_STYLE = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:82em;padding:0 1em;
color:#1d232a}
h1{font-size:1.5em;margin:0 0 .15em}h2{font-size:1.15em;border-bottom:1px solid #d5d9de;
margin:1.6em 0 .5em;padding-bottom:.2em}
.url{color:#555;word-break:break-all;margin:0 0 .8em}
.top{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}
.kv{border-collapse:collapse}.kv td{padding:.12em .6em .12em 0;vertical-align:top}
.kv td:first-child{font-weight:600;white-space:nowrap;color:#444}
.legend{flex:1;min-width:26em;background:#f6f7f9;border:1px solid #e1e4e8;border-radius:6px;
padding:.6em .9em}.legend h3{margin:0 0 .3em;font-size:1em}
.legend dl{margin:0;display:grid;grid-template-columns:max-content 1fr;gap:.25em .7em}
.legend dd{margin:0;color:#444}
.chip{display:inline-block;border-radius:9px;padding:0 .55em;font-size:.85em;white-space:nowrap;
background:#e4e6e9;color:#3a3f45;border:1px solid #cfd3d8}
.chip.keep{background:#d9f2df;color:#14532d;border-color:#9fd8ae}
.chip.conv{background:#fdecc8;color:#7a4a00;border-color:#f0c76e}
.chip.rule{background:#ece3f7;color:#4b2a78;border-color:#cdb6ea}
.chip.traf{background:#dfe9f7;color:#1e3a66;border-color:#a9c1e6}
.filter{display:inline-block;margin:0 0 .6em;color:#444;cursor:pointer}
#hide-dropped{margin:0 .35em .6em 0;vertical-align:-1px}
table.blocks{border-collapse:collapse;width:100%}
.blocks th{text-align:left;background:#eef0f3;position:sticky;top:0;padding:.3em .5em;
font-size:.9em}
.blocks td{padding:.3em .5em;vertical-align:top;border-bottom:1px solid #eceef1}
.blocks td.n{color:#888;text-align:right;width:3em}
.blocks td.verdict{width:14em}.blocks td.kind{width:4.5em;color:#555}
.blocks td.prob{width:11em;white-space:nowrap}
.blocks tr.kept td.text{border-left:4px solid #2f9e52}
.blocks tr.dropped td.text{border-left:4px solid #d9a3a3;color:#6b7178}
.blocks tr.dropped{background:#fbfbfc}
.blocks tr.head td.text{font-weight:600}.blocks td.text{word-break:break-word}
small{color:#6b7178;display:block;font-size:.8em}
.bar{display:inline-block;position:relative;width:6.5em;height:.7em;background:#e9ebee;
border-radius:3px;vertical-align:middle;margin-right:.4em}
.bar span{position:absolute;left:0;top:0;bottom:0;background:#a9afb7;border-radius:3px}
.bar span.over{background:#2f9e52}
.bar i{position:absolute;top:-.2em;bottom:-.2em;width:2px;background:#c0392b}
.num{font-variant-numeric:tabular-nums;font-size:.9em}
.tag{font-size:.75em;color:#8a5a00}
#hide-dropped:checked~table tr.dropped{display:none}
pre{white-space:pre-wrap;background:#f6f7f9;border:1px solid #e1e4e8;padding:.8em;
border-radius:6px}
footer{margin-top:2em;color:#888;font-size:.85em}
"""


def render(trace: Trace, options: ExtractOptions | None = None) -> str:
    """The page of ``trace`` (``options``: the extraction's, named in the footer)."""
    doc = trace.doc
    name = doc.title or doc.url or "page"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Explain: {escape(name)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<header><h1>What the extractor keeps: {escape(name)}</h1>",
        f'<p class="url">{escape(doc.url or "")}</p>',
        f'<div class="top">{_facts(trace)}{_legend(trace)}</div></header>',
        _blocks(trace),
        _engine_blocks(trace),
        _text(trace),
        _footer(options),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _facts(trace: Trace) -> str:
    doc = trace.doc
    rows = [("engine", _engine(trace))]
    if doc.model_version:
        model = doc.model_version
        if trace.threshold is not None:
            model += f", keeps a block at probability ≥ {trace.threshold:.2f}"
        rows.append(("model", model))
    if doc.confidence is not None:
        rows.append(("page confidence", f"{doc.confidence:.2f}"))
    kept = sum(1 for row in trace.rows if row.verdict.kept)
    blocks = f"{len(trace.rows)}: {kept} kept, {len(trace.rows) - kept} dropped"
    rows += [("page blocks", blocks), ("text", f"{len(trace.kept_text)} characters")]
    for label, value in (
        ("title", doc.title),
        ("author", doc.author),
        ("date", doc.date),
        ("language", doc.language),
        ("site", doc.sitename),
    ):
        rows.append((label, value or "none found"))
    if doc.reason:
        rows.append(("no text", doc.reason))
    if doc.notes:
        rows.append(("notes", ", ".join(str(note) for note in doc.notes)))
    body = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="kv" id="facts">{body}</table>'


def _engine(trace: Trace) -> str:
    """Which engine decided the page, and why trafilatura when it did."""
    doc = trace.doc
    engine = doc.extractor or "none"
    if trace.fallback is Fallback.ENGINE_OPTION:
        return f"{engine} (asked for)"
    if trace.fallback is not None:
        detail = f" ({trace.detail})" if trace.detail else ""
        return f"{engine}, because {trace.fallback.value}{detail}"
    return engine


def _legend(trace: Trace) -> str:
    counts = Counter(row.verdict for row in trace.rows)
    shown = {row.verdict for row in [*trace.rows, *(trace.engine_rows or [])]}
    items = "".join(
        f"<dt>{_chip(verdict)}</dt><dd>{escape(verdict.description)} "
        f"(<i>{escape(verdict.decider.value)}</i>{_blocks_count(counts[verdict])})</dd>"
        for verdict in Verdict
        if verdict in shown
    )
    bar = ""
    if trace.threshold is not None:
        bar = (
            f"<dt>{_bar(0.8, trace.threshold)}</dt><dd>the model's probability; the red "
            "tick is its threshold</dd>"
        )
    return f'<div class="legend" id="legend"><h3>Legend</h3><dl>{items}{bar}</dl></div>'


def _blocks_count(count: int) -> str:
    return f", {count} block{'' if count == 1 else 's'}" if count else ""


def _chip(verdict: Verdict, convention: str | None = None) -> str:
    tone = "keep" if verdict.kept else _TONES.get(verdict, "")
    label = LABELS[verdict] + (f": {convention}" if convention else "")
    return f'<span class="chip {tone}">{escape(label)}</span>'


def _blocks(trace: Trace) -> str:
    if not trace.rows:
        reason = trace.doc.reason or "no blocks"
        return f'<section id="blocks"><h2>Page blocks</h2><p>None: {escape(reason)}.</p></section>'
    note = ""
    if trace.engine_rows is not None:
        note = (
            "<p>trafilatura decided this page: a block is marked by the part of its text "
            "that holds the block's words (its own blocks are below). The bars are the "
            "model's probabilities all the same.</p>"
        )
    rows = "".join(
        _row(i, row, trace.threshold, trace.engine_rows is not None)
        for i, row in enumerate(trace.rows, 1)
    )
    return (
        f'<section id="blocks"><h2>Page blocks, in order</h2>{note}'
        '<input type="checkbox" id="hide-dropped">'
        '<label for="hide-dropped" class="filter">hide the dropped blocks</label>'
        '<table class="blocks"><thead><tr><th>#</th><th>verdict</th><th>probability</th>'
        f"<th>kind</th><th>text</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _row(index: int, row: Row, threshold: float | None, model_aside: bool) -> str:
    verdict = row.verdict
    convention = row.convention.value if row.convention is not None else None
    aside = f"<small>{escape(verdict.decider.value)}</small>"
    if model_aside and row.model is not None:
        aside = f"<small>model: {escape(LABELS[row.model])}</small>"
    classes = ["kept" if verdict.kept else "dropped"]
    if row.block.kind == "head":
        classes.append("head")
    return (
        f'<tr class="{" ".join(classes)}" data-verdict="{verdict.value}">'
        f'<td class="n">{index}</td><td class="verdict">{_chip(verdict, convention)}{aside}</td>'
        f'<td class="prob">{_bar(row.probability, threshold)}</td>'
        f'<td class="kind">{_kind(row)}</td><td class="text">{_shown(row.block.text)}</td></tr>'
    )


def _bar(probability: float | None, threshold: float | None) -> str:
    if probability is None:
        return '<span class="num">-</span>'
    over = " over" if threshold is not None and probability >= threshold else ""
    tick = f'<i style="left:{threshold * 100:.1f}%"></i>' if threshold is not None else ""
    return (
        f'<span class="bar"><span class="{over.strip()}" style="width:{probability * 100:.1f}%">'
        f'</span>{tick}</span><span class="num">{probability:.2f}</span>'
    )


def _kind(row: Row) -> str:
    block = row.block
    kind = f"h{block.level}" if block.kind == "head" and block.level else block.kind
    hidden = '<br><span class="tag">hidden</span>' if row.hidden else ""
    return escape(kind) + hidden


def _shown(text: str) -> str:
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS].rstrip() + " …"
    return escape(text)


def _engine_blocks(trace: Trace) -> str:
    if not trace.engine_rows:
        return ""
    rows = "".join(
        f'<tr class="{"kept" if row.verdict.kept else "dropped"}"><td class="n">{i}</td>'
        f'<td class="verdict">'
        f"{_chip(row.verdict, row.convention.value if row.convention else None)}</td>"
        f'<td class="kind">{_kind(row)}</td><td class="text">{_shown(row.block.text)}</td></tr>'
        for i, row in enumerate(trace.engine_rows, 1)
    )
    return (
        '<section id="engine-blocks"><h2>trafilatura\'s blocks</h2>'
        '<table class="blocks"><thead><tr><th>#</th><th>verdict</th><th>kind</th>'
        f"<th>text</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _text(trace: Trace) -> str:
    text = trace.kept_text
    return (
        f'<section id="text"><h2>The text ({len(text)} characters)</h2>'
        "<details><summary>as <code>maintext extract</code> writes it</summary>"
        f"<pre>{escape(text) or '(none)'}</pre></details></section>"
    )


def _footer(options: ExtractOptions | None) -> str:
    options = options or ExtractOptions()
    used = [f"engine {options.engine}"]
    if options.model:
        used.append(f"model {options.model}")
    for flag, on in (
        ("comments", options.include_comments),
        ("no tables", not options.include_tables),
        ("favor precision", options.favor_precision),
        ("favor recall", options.favor_recall),
    ):
        if on:
            used.append(flag)
    return (
        f"<footer>maintext explain, scrapy-maintext {escape(scrapy_maintext.__version__)}; "
        f"{escape(', '.join(used))}</footer>"
    )
