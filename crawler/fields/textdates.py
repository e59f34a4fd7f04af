"""Dates a page shows as text beside its title: "March 3, 2026", "3. März 2026",
"Updated Dec 4, 2025", "12.12.2025".

Many pages give their day only there, or give in markup a day other than the one they show
(the label of a labelled page is the day shown). The search is bounded: only the text nodes
just before and just after the first ``<h1>`` are read (:data:`BEFORE_NODES`,
:data:`AFTER_NODES`, :data:`MAX_WINDOW_CHARS`), each side by a walk that stops there;
the day patterns are tried only just before each year written.

Sources (``metadata_rules`` decides which is believed): :data:`AFTER_H1`, the first day
written after the heading; :data:`BEFORE_H1`, the nearest before it; :data:`UPDATED` and
:data:`PUBLISHED`, a day right after "Updated" ("Last updated:", "Aktualisiert") or
"Published" ("Posted on", "Veröffentlicht") in that window.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from datetime import date

import lxml.etree
import lxml.html

AFTER_H1 = "text_date_after_h1"
BEFORE_H1 = "text_date_before_h1"
UPDATED = "text_date_updated"
PUBLISHED = "text_date_published"
#: Text nodes read after the first ``<h1>`` (its own included) and before it.
AFTER_NODES = 120
BEFORE_NODES = 40
#: Characters of text read on each side of the heading at most.
MAX_WINDOW_CHARS = 3_000
#: Characters before a day searched for "Updated", "Published".
CUE_CHARS = 40

_MONTHS = {
    **dict.fromkeys(("january", "jan", "januar", "jänner", "janvier", "enero"), 1),
    **dict.fromkeys(("february", "feb", "februar", "février", "febrero"), 2),
    **dict.fromkeys(("march", "mar", "märz", "mars", "marzo"), 3),
    **dict.fromkeys(("april", "apr", "avril", "abril"), 4),
    **dict.fromkeys(("may", "mai", "mayo"), 5),
    **dict.fromkeys(("june", "jun", "juni", "juin", "junio"), 6),
    **dict.fromkeys(("july", "jul", "juli", "juillet", "julio"), 7),
    **dict.fromkeys(("august", "aug", "août", "agosto"), 8),
    **dict.fromkeys(("september", "sep", "sept", "septembre", "septiembre"), 9),
    **dict.fromkeys(("october", "oct", "oktober", "okt", "octobre", "octubre"), 10),
    **dict.fromkeys(("november", "nov", "novembre", "noviembre"), 11),
    **dict.fromkeys(("december", "dec", "dezember", "dez", "décembre", "diciembre"), 12),
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"((?:19|20)\d{2})"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|er|\.)?"
_DAY_MONTH_YEAR = rf"\b{_DAY}\s+(?:of\s+|de\s+)?{_MONTH}\s*,?\s+(?:de\s+)?{_YEAR}"
_MONTH_DAY_YEAR = rf"\b{_MONTH}\s+{_DAY}\s*,?\s+{_YEAR}"
_DOTTED = r"\b(\d{1,2})\.(\d{1,2})\.((?:19|20)\d{2})"
_SLASHED = r"\b(\d{1,2})/(\d{1,2})/((?:19|20)\d{2})"
_PATTERNS = (
    ("dmy", _DAY_MONTH_YEAR),
    ("mdy", _MONTH_DAY_YEAR),
    ("dotted", _DOTTED),
    ("slashed", _SLASHED),
)
#: A year: where every day written ends (or, ISO, starts); the patterns, slow to scan a
#: whole text with, are tried only on the few characters before each year.
_YEAR_ANCHOR = re.compile(r"\b(?:19|20)\d{2}\b")
_ENDING_AT_YEAR = re.compile(
    "(?:" + "|".join(f"(?P<{n}>{p})" for n, p in _PATTERNS) + ")$", re.IGNORECASE
)
_ISO = re.compile(r"((?:19|20)\d{2})-(\d{2})-(\d{2})\b")
#: Characters before a year that a day and month written out take at most.
_LEAD_CHARS = 32
_UPDATED = re.compile(
    r"(?i:updated|modified|revised|aktualisiert|geändert|mis à jour|actualizado)"
    r"\W*(?:on|am|le|el)?\W*$"
)
_PUBLISHED = re.compile(
    r"(?i:published|posted|veröffentlicht|publié|publicado)\W*(?:on|am|le|el)?\W*$"
)

_H1 = lxml.etree.XPath("(//h1)[1]")
_SKIPPED = frozenset({"script", "style", "noscript", "template"})
#: Elements whose text (theirs and their descendants') the window before the heading skips.
_NO_TEXT_BEFORE = frozenset({"script", "style"})
_BEFORE = lxml.etree.XPath(
    f"preceding::text()[not(ancestor::script or ancestor::style)][position() <= {BEFORE_NODES}]"
)
#: Elements the walk back from the heading visits before it hands the search to ``_BEFORE``:
#: on a page of many empty elements before its title libxml2 is the faster (where text
#: comes before it, the walk stops after a few dozen nodes).
MAX_WALK_BACK = 2_000


def texts_before(heading: lxml.html.HtmlElement) -> list[str]:
    """The :data:`BEFORE_NODES` text nodes before ``heading`` (those of ``_BEFORE``), nearest
    first.

    (The XPath reads every text node before the heading, most of a page whose title comes
    late, where the window reads a few dozen: a walk back from the heading, stopped there.)
    """
    texts: list[str] = []
    visited = 0
    for text in _preceding_texts(heading):
        if text is None:
            visited += 1
            if visited > MAX_WALK_BACK:
                return [str(node) for node in reversed(_BEFORE(heading))]
        else:
            texts.append(text)
            if len(texts) == BEFORE_NODES:
                break
    return texts


def _preceding_texts(heading: lxml.html.HtmlElement) -> Iterator[str | None]:
    """XPath's ``preceding::text()[not(ancestor::script or ancestor::style)]`` of ``heading``,
    nearest first, lazily; None for each element the walk enters (its cost)."""
    node = heading
    while True:
        for sibling in node.itersiblings(preceding=True):
            yield None
            if sibling.tail:
                yield sibling.tail
            if isinstance(sibling.tag, str):
                yield from _texts_backward(sibling)
        parent = node.getparent()
        if parent is None:
            return
        yield None
        # An ancestor's own text comes before its children (scripts and styles hold none).
        if parent.text and parent.tag not in _NO_TEXT_BEFORE:
            yield parent.text
        node = parent


def _texts_backward(element: lxml.html.HtmlElement) -> Iterator[str | None]:
    """The text nodes inside ``element`` (not its tail) but under no script or style, last
    first; None for each element below it entered. Iterative: hostile pages nest deeply."""
    if element.tag in _NO_TEXT_BEFORE:
        return
    stack = [(element, element.iterchildren(reversed=True))]
    while stack:
        el, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            if el.text:
                yield el.text
            continue
        yield None
        if child.tail:
            yield child.tail
        # A comment's or processing instruction's content is no text node, only its tail.
        if isinstance(child.tag, str) and child.tag not in _NO_TEXT_BEFORE:
            stack.append((child, child.iterchildren(reversed=True)))


def _following_texts(heading: lxml.html.HtmlElement) -> Iterator[str]:
    """The text of ``heading`` and of everything after it, in document order, lazily.

    (XPath's ``following::text()[position() <= n]`` costs the whole rest of the page in
    libxml2: 13 ms on a 50,000-paragraph page.)
    """
    yield from _texts(heading)
    node: lxml.html.HtmlElement | None = heading
    while node is not None:
        if node.tail:
            yield node.tail
        for sibling in node.itersiblings():
            # A comment or processing instruction has no text of its own, only a tail.
            if isinstance(sibling.tag, str):
                yield from _texts(sibling)
            if sibling.tail:
                yield sibling.tail
        node = node.getparent()


def _texts(element: lxml.html.HtmlElement) -> Iterator[str]:
    """The text inside ``element`` (not its tail), without scripts, styles and comments."""
    for event, el in lxml.etree.iterwalk(element, events=("start", "end")):
        visible = isinstance(el.tag, str) and el.tag not in _SKIPPED
        if event == "start":
            if visible and el.text:
                yield el.text
        elif el is not element and el.tail:
            yield el.tail


def parse_day(text: str) -> str | None:
    """YYYY-MM-DD of the first day written in ``text``, else None."""
    for day, _ in days(text):
        return day
    return None


def days(text: str) -> Iterable[tuple[str, int]]:
    """Every valid day written in ``text``, as YYYY-MM-DD, with where it starts."""
    for year in _YEAR_ANCHOR.finditer(text):
        start = year.start()
        iso = _ISO.match(text, start)
        if iso and (start == 0 or not text[start - 1].isalnum()):
            y, m, d = (int(g) for g in iso.groups())
            day = _valid(y, m, d)
        else:
            lead = max(0, start - _LEAD_CHARS)
            match = _ENDING_AT_YEAR.search(text, lead, year.end())
            day = _to_day(match) if match else None
            start = match.start() if match else start
        if day:
            yield day, start


def _valid(y: int, m: int, d: int) -> str | None:
    try:
        return date(y, m, d).isoformat()
    except ValueError:
        return None


def _to_day(match: re.Match[str]) -> str | None:
    kind = match.lastgroup
    groups = [g for g in match.groups() if g is not None][1:]
    if kind == "dmy":
        d, m, y = int(groups[0]), _MONTHS[groups[1].lower()], int(groups[2])
    elif kind == "mdy":
        m, d, y = _MONTHS[groups[0].lower()], int(groups[1]), int(groups[2])
    elif kind == "dotted":
        d, m, y = (int(g) for g in groups)
    else:
        # 03/01/2017: month first (the English pages that write days so), day first
        # when the first number cannot be a month.
        m, d, y = (int(g) for g in groups)
        if m > 12:
            m, d = d, m
    return _valid(y, m, d)


def _window(nodes: Iterable[str], from_end: bool = False) -> str:
    """The nodes' text joined, its first :data:`MAX_WINDOW_CHARS`; ``from_end``: ``nodes``
    come nearest first (``texts_before``) and the window is the last characters of
    their text in document order."""
    parts: list[str] = []
    size = 0
    for node in nodes:
        text = " ".join(node.split())
        if not text:
            continue
        parts.append(text)
        size += len(text) + 1
        if size >= MAX_WINDOW_CHARS:
            break
    if from_end:
        return " ".join(reversed(parts))[-MAX_WINDOW_CHARS:]
    return " ".join(parts)[:MAX_WINDOW_CHARS]


def heading_dates(tree: lxml.html.HtmlElement) -> dict[str, str]:
    """The days written beside the first ``<h1>``, by source (empty without one)."""
    h1s = _H1(tree)
    if not h1s:
        return {}
    found: dict[str, str] = {}
    before = _window(texts_before(h1s[0]), from_end=True)
    texts = (text for text in _following_texts(h1s[0]) if not text.isspace())
    after = _window(itertools.islice(texts, AFTER_NODES))
    before_days = list(days(before))
    if before_days:
        found[BEFORE_H1] = before_days[-1][0]
    for text, found_days in ((before, before_days), (after, list(days(after)))):
        for day, start in found_days:
            cue = text[max(0, start - CUE_CHARS) : start]
            if _UPDATED.search(cue):
                found.setdefault(UPDATED, day)
            elif _PUBLISHED.search(cue):
                found.setdefault(PUBLISHED, day)
        if text is after and found_days:
            found[AFTER_H1] = found_days[0][0]
    return found
