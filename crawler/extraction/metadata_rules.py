"""Which source of a title, author and date is believed first: decision lists learnt on
labelled pages.

A decision list takes the value of its first source that gives one. The lists below are what
``python -m benchmarks.metadata --data ../shared/data`` learns from every labelled page
(``learn_order``: repeatedly the source most often right on the pages no source before it
covers); the benchmark reports the lists learnt without each site fold, scored on that fold,
and checks these are the lists learnt from all folds. ``trafilatura`` is trafilatura's own
answer (``metadata.trafilatura_metadata``), ``*_clean`` a title without its site name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import urlsplit

from scrapy_maintext.extraction.structured import Candidates

#: Learnt by ``python -m benchmarks.metadata --data ../shared/data`` (all folds).
TITLE_ORDER: tuple[str, ...] = ("trafilatura",)
AUTHOR_ORDER: tuple[str, ...] = ("trafilatura",)
DATE_ORDER: tuple[str, ...] = ("trafilatura",)
ORDERS: dict[str, tuple[str, ...]] = {
    "title": TITLE_ORDER,
    "author": AUTHOR_ORDER,
    "date": DATE_ORDER,
}

#: trafilatura's own answer: the last resort of every list.
FALLBACK = "trafilatura"
#: A source must give a value on this many pages to enter a list.
MIN_SUPPORT = 8

#: " | ", " - ", en and em dashes, middle dots, bullets, ":" , "»", "/", "~", "::".
_SEPARATOR = re.compile("(\\s+[|\\-\u2013\u2014\u00b7\u2022:\u00bb/~]\\s+|\\s*\\|\\s*|\\s+::\\s+)")
_NON_WORD = re.compile(r"[\W_]+")
_TITLE_SOURCES = ("html_title", "og_title", "twitter_title", "jsonld_headline", "trafilatura")


def key(text: str) -> str:
    """Letters and digits only, case-folded (what two spellings of a name share)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _NON_WORD.sub("", text)


def add_clean_titles(found: Candidates, url: str | None) -> None:
    """``<source>_clean`` titles: the title sources without a site name at either end."""
    names = {key(name) for name in found.sitename.values()}
    names |= _host_names(url)
    names.discard("")
    h1 = key(found.title.get("h1", ""))
    for source in _TITLE_SOURCES:
        title = found.title.get(source)
        if title:
            cleaned = clean_title(title, names, h1)
            if cleaned and cleaned != title:
                found.title[source + "_clean"] = cleaned


def _host_names(url: str | None) -> set[str]:
    try:
        host = urlsplit(url).hostname if url else None
    except ValueError:
        return set()
    if not host:
        return set()
    labels = host.removeprefix("www.").split(".")
    return {key(label) for label in labels[:-1] if len(label) > 2} | {key("".join(labels[:-1]))}


def clean_title(title: str, names: set[str], h1: str = "") -> str:
    """``title`` without the site name it starts or ends with ("Story | Site" -> "Story").

    A part is the site's name when it matches a name the page gives (``og:site_name``,
    JSON-LD publisher or WebSite) or its host name; when none does, the part equal to the
    page's first heading is the title.
    """
    pieces = _SEPARATOR.split(title)
    parts = pieces[::2]
    if len(parts) < 2:
        return title
    keys = [key(p) for p in parts]
    if h1 and h1 in keys:
        return parts[keys.index(h1)].strip()
    start, end = 0, len(parts)
    while end - start > 1 and _is_site(keys[end - 1], names):
        end -= 1
    while end - start > 1 and _is_site(keys[start], names):
        start += 1
    if (start, end) == (0, len(parts)):
        return title
    return "".join(pieces[2 * start : 2 * end - 1]).strip()


def _is_site(part: str, names: set[str]) -> bool:
    if not part:
        return True
    return any(
        part == n or (len(n) >= 4 and len(part) >= 4 and (part in n or n in part)) for n in names
    )


def choose(values: Mapping[str, str], order: Sequence[str]) -> tuple[str | None, str | None]:
    """The value of the first source in ``order`` that gives one, and that source."""
    for source in order:
        value = values.get(source)
        if value:
            return value, source
    return None, None


def learn_order(
    pages: Sequence[tuple[Mapping[str, str], str]],
    right: Callable[[str, str], bool],
    min_support: int = MIN_SUPPORT,
) -> tuple[str, ...]:
    """A decision list from labelled pages (their sources' values, the right value).

    Greedy: the next source is the one right most often (smoothed share) on the pages that
    the sources chosen so far leave without a value; sources seen on fewer than
    ``min_support`` of those pages wait. :data:`FALLBACK` ends the list.
    """
    order: list[str] = []
    left = list(pages)
    while left:
        best, best_score = None, -1.0
        sources = {s for values, _ in left for s in values if s not in order}
        for source in sorted(sources):
            fired = [(values[source], gold) for values, gold in left if values.get(source)]
            if len(fired) < min_support:
                continue
            hits = sum(right(value, gold) for value, gold in fired)
            score = (hits + 1) / (len(fired) + 2)
            if score > best_score:
                best, best_score = source, score
        if best is None:
            break
        order.append(best)
        left = [(values, gold) for values, gold in left if not values.get(best)]
    if FALLBACK not in order:
        order.append(FALLBACK)
    return tuple(order)
