"""Which source of a title, author and date is believed: rules learnt on labelled pages.

A decision list takes the value of its first source that gives one; a vote adds up the
weights (log-odds of being right) of the sources that give each value. ``RULES`` are what
``python -m benchmarks.metadata --data ../shared/data`` learns from every labelled page
(``learn_order``: repeatedly the source most often right on the pages no source before it
covers); the benchmark reports the rules learnt without each site fold, scored on that
fold, and ``--check`` fails when ``RULES`` are not those learnt from all folds.
``trafilatura`` is trafilatura's own answer (``metadata.trafilatura_metadata``), ``*_clean``
a title without the site name the page gives, ``*_cut`` one without a short last part.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from scrapy_maintext.fields.structured import Candidates, is_email


@dataclass(frozen=True)
class Rule:
    """How one field is chosen: a decision list ("list") or a weighted vote ("vote")."""

    method: str
    order: tuple[str, ...]
    weights: Mapping[str, float] = field(default_factory=dict)
    #: Values taken only when no source gives another (``LAST_RESORT``).
    last_resort: Callable[[str], bool] | None = None

    def pick(self, values: Mapping[str, str]) -> tuple[str | None, str | None]:
        if self.method == "vote":
            value, source = vote(values, self.weights)
            if value is not None:
                return value, source
        if self.last_resort is not None:
            value, source = choose(self._preferred(values), self.order)
            if value is not None:
                return value, source
        return choose(values, self.order)

    def needs(self, values: Mapping[str, str], source: str) -> bool:
        """Whether ``source``'s value may change the pick among ``values`` (a search that
        gives it is skipped otherwise)."""
        if self.method == "vote" or source not in self.order:
            return self.method == "vote"
        before = self.order[: self.order.index(source)]
        return choose(self._preferred(values), before)[0] is None

    def _preferred(self, values: Mapping[str, str]) -> Mapping[str, str]:
        test = self.last_resort
        return values if test is None else {s: v for s, v in values.items() if not test(v)}


#: Per field, the values a rule takes only when no source gives another.
LAST_RESORT: dict[str, Callable[[str], bool]] = {"author": is_email}
#: trafilatura's own answer: the last resort of every list.
FALLBACK = "trafilatura"
#: Words of a title's last part that ``cut_title`` takes for a site name.
MAX_SUFFIX_WORDS = 3
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
            cut = cut_title(title)
            if cut != title:
                found.title[source + "_cut"] = cut


def cut_title(title: str) -> str:
    """``title`` without a short last part ("Story | REI Co-op" -> "Story"), whatever it
    names: the usual place of a site's name, also one the page does not give."""
    pieces = _SEPARATOR.split(title)
    if len(pieces) < 3:
        return title
    head, last = "".join(pieces[:-2]).strip(), pieces[-1]
    if len(last.split()) <= MAX_SUFFIX_WORDS and len(head.split()) >= 2:
        return head
    return title


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


def vote(values: Mapping[str, str], weights: Mapping[str, float]) -> tuple[str | None, str | None]:
    """The value whose sources weigh most together (values compared on :func:`key`), given by
    its heaviest source; sources without a positive weight do not vote."""
    totals: dict[str, float] = {}
    best: dict[str, tuple[float, str]] = {}
    for source, value in values.items():
        weight = weights.get(source, 0.0)
        if not value or weight <= 0:
            continue
        group = key(value)
        totals[group] = totals.get(group, 0.0) + weight
        if weight > best.get(group, (0.0, ""))[0]:
            best[group] = (weight, source)
    if not totals:
        return None, None
    winner = max(totals, key=lambda g: (totals[g], best[g][0]))
    source = best[winner][1]
    return values[source], source


def learn_weights(
    pages: Sequence[tuple[Mapping[str, str], str]],
    right: Callable[[str, str], bool],
    min_support: int = MIN_SUPPORT,
) -> dict[str, float]:
    """Each source's vote: the log-odds of its being right (smoothed) on the labelled pages
    where it gives a value; sources seen on fewer than ``min_support`` pages get none."""
    fired: dict[str, list[bool]] = {}
    for values, gold in pages:
        for source, value in values.items():
            if value:
                fired.setdefault(source, []).append(right(value, gold))
    weights = {}
    for source, hits in sorted(fired.items()):
        if len(hits) >= min_support:
            share = (sum(hits) + 1) / (len(hits) + 2)
            weights[source] = round(math.log(share / (1 - share)), 3)
    return weights


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


#: Learnt by ``python -m benchmarks.metadata --data ../shared/data`` on all folds (it prints
#: them in this form and ``--check`` fails when they differ).
RULES: dict[str, Rule] = {
    "title": Rule(
        "list",
        (
            "parsely_title",
            "microdata_headline",
            "jsonld_headline",
            "og_title_clean",
            "og_title",
            "twitter_title",
            "h1",
            "html_title_clean",
            "html_title_cut",
            "html_title",
            "trafilatura",
        ),
    ),
    "author": Rule(
        "list",
        (
            "jsonld_author",
            "microdata_author",
            "rel_author",
            "meta_author",
            "article_author",
            "byline_text",
            "trafilatura",
        ),
        last_resort=LAST_RESORT["author"],
    ),
    "date": Rule(
        "list",
        (
            "url_date",
            "article_published",
            "text_date_published",
            "text_date_before_h1",
            "time_first",
            "text_date_after_h1",
            "microdata_date",
            "jsonld_published",
            "trafilatura",
        ),
    ),
}
