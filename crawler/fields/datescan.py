"""htmldate's page-wide date patterns, run only where a date can be: the same answers in
less time.

When nothing in a page's markup dates it, htmldate's extensive search runs half a dozen
patterns of the form ``\\D(date)\\D`` (``2024-05-01``, ``01.05.2024``, ``05/2024``, ...)
over the whole serialized page (``htmldate.core.search_page``). Python's ``re`` tries
each of them at every position of a page that is mostly markup: most of ``find_date``'s
time, the largest part of our metadata's (``benchmarks.datatrove_throughput --part
inside``, issue 35).

:class:`WindowedPattern` finds the same matches, in the same order: a cheap pattern that
every match contains (a run of digits and ``/.-`` starting with a digit: ``re`` skips to
the digits in C) says where a match can be, and the real pattern runs from a few
characters before that place to the end of its run of digits and separators, where any
match there ends. :func:`install` puts such wrappers in place of htmldate's patterns, only
when those are the patterns this module knows (another htmldate keeps its own);
``tests/test_datescan.py`` compares both on random and real text.

The last pattern of that search, ``LONG_TEXT_PATTERN`` ("March 5, 2024", "5. März 2024"),
whose lookbehind ``re`` evaluates at every position of the page, gets the same treatment
(:class:`YearAnchoredSearch`): every match of it ends with a year, so it runs only just
before each year written.
"""

from __future__ import annotations

import logging
import re
from typing import Any

logger = logging.getLogger(__name__)

#: A run of the characters a date of these patterns is made of (its end ends any match).
_RUN = re.compile(r"[0-9./-]*")


class WindowedPattern:
    """``pattern.findall`` looked for only around the places ``hint`` finds.

    Valid for a ``pattern`` of the form ``\\D(X)\\D`` (one group, or the whole of it one
    group) where X is made of digits and ``/.-`` only, at most ``longest`` characters, and
    contains a match of ``hint`` (which itself matches digits and ``/.-`` only).
    """

    def __init__(self, pattern: re.Pattern[str], hint: str, longest: int) -> None:
        self.original = pattern
        self.hint = re.compile(hint)
        self.longest = longest

    def findall(self, string: str, pos: int = 0, endpos: int | None = None) -> list[Any]:
        if pos or endpos is not None:
            stop = len(string) if endpos is None else endpos
            return self.original.findall(string, pos, stop)
        found: list[Any] = []
        done = 0  # where the original's scan stands: after its last match or window
        for hint in self.hint.finditer(string):
            if hint.start() < done:
                continue  # in a run already searched
            # A match containing this hint starts at most `longest` + 1 characters before it
            # (its X, then the \D before it), and none starts between `done` and there.
            start = max(done, hint.start() - self.longest - 1)
            run = _RUN.match(string, hint.end())
            run_end = run.end() if run is not None else hint.end()
            # The \D after X is at most the first character after the run.
            end = min(len(string), run_end + 1)
            for match in self.original.finditer(string, start, end):
                found.append(_as_findall(match))
                done = match.end()
            # The next hint is in a later run: at most the character after this run (a
            # \D ending no match here) can still open a match there.
            done = max(done, run_end)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


#: A year of ``LONG_TEXT_PATTERN``, found at every position (years may overlap: "202020"):
#: its first digit alone is consumed, the rest looked ahead at (a pattern that opens with a
#: character, not a lookahead, lets ``re`` skip to where it can match).
_YEAR_AHEAD = re.compile(r"[12](?=99[0-9]|0[0-3][0-9])")
#: Characters before its year where the month of a ``LONG_TEXT_PATTERN`` match may still
#: run ("Mar 05th, 2024": the month ends 7 before the year), and before its month where
#: its day may start ("05th of Mar 2024": 8).
_MONTH_REACH = 10
_DAY_REACH = 8
#: Strings shorter than this are searched by the pattern itself.
_SHORT = 512


class YearAnchoredSearch:
    """``LONG_TEXT_PATTERN.search`` tried only just before the years in the string.

    Each match is ``month day, year`` or ``day month year``: a year at its end, right after
    a space, with at most a day, a suffix and a few separators between it and the month, a
    whole run of letters. No four digits in a row come before the year in a match, so
    matches come in the order of their years: the first match at or after ``pos`` is the
    first one found, year by year, from where a month ending near that year can start
    (the start of the letter run there) to the year's end.
    """

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.original = pattern

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        if endpos is not None or len(string) < _SHORT:
            stop = len(string) if endpos is None else endpos
            return self.original.search(string, pos, stop)
        run_start, run_end = 0, -1  # the letter run last walked back over
        for year in _YEAR_AHEAD.finditer(string, pos):
            y = year.start()
            edge = max(0, y - _MONTH_REACH)
            if run_start <= edge <= run_end:
                edge = run_start
            else:
                run_end = edge
                while edge and _is_letter(string[edge - 1]):
                    edge -= 1
                run_start = edge
            match = self.original.search(string, max(pos, edge - _DAY_REACH), y + 4)
            if match is not None:
                return match
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


#: A letter to ``re`` (``[^\W\d_]``, Unicode): what a month is made of.
_LETTER = re.compile(r"[^\W\d_]")


def _is_letter(char: str) -> bool:
    return _LETTER.match(char) is not None


def _as_findall(match: re.Match[str]) -> Any:
    """What ``findall`` lists for ``match``."""
    groups = match.re.groups
    if groups == 0:
        return match.group(0)
    if groups == 1:
        return match.group(1) or ""
    return match.groups(default="")


#: htmldate.core's names: (the pattern as htmldate 1.9-1.11 writes it, hint, longest X).
PATTERNS: dict[str, tuple[str, str, int]] = {
    "THREE_LOOSE_PATTERN": (
        r"\D([0-9]{4}[/.-][0-9]{2}[/.-][0-9]{2})\D",
        # One digit, then three: ``re`` skips to a first character of a set in C, not to
        # that of a repeat (the same matches, found faster).
        r"[0-9][0-9]{3}[/.-][0-9]{2}[/.-][0-9]{2}",
        10,
    ),
    "SELECT_YMD_PATTERN": (
        r"\D([0-3]?[0-9][/.-][0-1]?[0-9][/.-][0-9]{4})\D",
        r"[0-9][/.-][0-9]{1,2}[/.-][0-9]{4}",
        10,
    ),
    "DATESTRINGS_PATTERN": (
        r"(\D19[0-9]{2}[01][0-9][0-3][0-9]\D|\D20[0-9]{2}[01][0-9][0-3][0-9]\D)",
        r"[12][09][0-9]{2}[01][0-9][0-3][0-9]",
        8,
    ),
    "SLASHES_PATTERN": (
        r"\D([0-3]?[0-9]/[0-1]?[0-9]/[0129][0-9]|[0-3][0-9]\.[01][0-9]\.[0129][0-9])\D",
        r"[0-9](?:/[0-9]{1,2}/[0-9]{2}|[0-9]\.[0-9]{2}\.[0-9]{2})",
        8,
    ),
    "YYYYMM_PATTERN": (
        r"\D([12][0-9]{3}[/.-](?:1[0-2]|0[1-9]))\D",
        r"[12][0-9]{3}[/.-][01][0-9]",
        7,
    ),
    "MMYYYY_PATTERN": (
        r"\D([0-1]?[0-9][/.-][12][0-9]{3})\D",
        r"[0-9][/.-][12][0-9]{3}",
        7,
    ),
}


#: htmldate.extractors' ``LONG_TEXT_PATTERN`` as htmldate 1.11 writes it.
LONG_TEXT = (
    r"(?P<month>(?<![^\W\d_])[^\W\d_]{3,})\s(?P<day>[0-3]?[0-9])(?:st|nd|rd|th)?,? "
    r"(?P<year>(?:199[0-9]|20[0-3][0-9]))|(?P<day2>[0-3]?[0-9])(?:st|nd|rd|th|\.)? (?:of )?"
    r"(?P<month2>(?<![^\W\d_])[^\W\d_]{3,})[,.]? (?P<year2>(?:199[0-9]|20[0-3][0-9]))"
)


def install() -> int:
    """Put :class:`WindowedPattern` wrappers in place of htmldate's patterns that are the
    ones :data:`PATTERNS` knows, and :class:`YearAnchoredSearch` in place of its
    ``LONG_TEXT_PATTERN`` when it is :data:`LONG_TEXT`; returns how many (0 when htmldate
    writes them otherwise)."""
    try:
        from htmldate import core, extractors
    except ImportError:  # pragma: no cover - htmldate is a dependency
        return 0
    installed = 0
    long_text = getattr(extractors, "LONG_TEXT_PATTERN", None)
    if isinstance(long_text, YearAnchoredSearch):
        installed += 1
    elif (
        isinstance(long_text, re.Pattern)
        and long_text.pattern == LONG_TEXT
        and long_text.flags == re.I | re.U
    ):
        extractors.LONG_TEXT_PATTERN = YearAnchoredSearch(long_text)  # type: ignore[assignment]
        installed += 1
    else:
        logger.debug("htmldate's LONG_TEXT_PATTERN is not the one known: left as it is")
    for name, (text, hint, longest) in PATTERNS.items():
        current = getattr(core, name, None)
        if isinstance(current, WindowedPattern):
            installed += 1
            continue
        if not isinstance(current, re.Pattern) or current.pattern != text or current.flags != re.U:
            logger.debug("htmldate's %s is not the one known: left as it is", name)
            continue
        wrapper = WindowedPattern(current, hint, longest)
        setattr(core, name, wrapper)
        # search_page reads the 3-component patterns from this tuple.
        three = getattr(core, "THREE_COMP_PATTERNS", ())
        if current in three:
            core.THREE_COMP_PATTERNS = tuple(  # type: ignore[assignment]
                wrapper if p is current else p for p in three
            )
        installed += 1
    return installed
