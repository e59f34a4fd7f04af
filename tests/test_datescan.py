"""htmldate's page-wide date patterns, windowed (``fields.datescan``), find what the
patterns themselves find, in the same order, and htmldate's dates do not change."""

from __future__ import annotations

import random
import re
from pathlib import Path

import htmldate.core
import lxml.html
import pytest
from htmldate import find_date
from scrapy_maintext.fields import datescan
from scrapy_maintext.fields.datescan import PATTERNS, WindowedPattern

FIXTURES = Path(__file__).parent / "fixtures"
PAGES = sorted(FIXTURES.glob("extraction/site/*.html")) + sorted(FIXTURES.glob("neural/*.html"))
#: Dates of every kind glued to each other, to markup and to numbers that are none.
SAMPLES = [
    "x2024-05-01y 12.05.2024 05/2024 2024/05 ©2019 20240501 1/2/99",
    "-2021-01-05-2022-01-06-2023.02.07.",
    "path d='M12.5 3.25-1.2 2024-05-011 4.5.2024.5.6'",
    "9/9/99/9/9/99 01.01.2001.01.01.2001 2019-12 12-2019-12-2019",
    "",
    "2024-05-01",
]


def _random_texts(count: int) -> list[str]:
    rng = random.Random(35)
    alphabet = "0123456789" * 3 + "/.-" * 3 + "ab ©"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(count)]


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_windowed_finds_what_the_pattern_finds(name: str) -> None:
    text, hint, longest = PATTERNS[name]
    pattern = re.compile(text)
    windowed = WindowedPattern(pattern, hint, longest)
    long_page = " <p>".join(SAMPLES) * 50
    for string in [*SAMPLES, long_page, *_random_texts(3000)]:
        assert windowed.findall(string) == pattern.findall(string), string
    assert windowed.findall(long_page, 5, 300) == pattern.findall(long_page, 5, 300)
    assert windowed.pattern == text  # the rest is the pattern's own


def test_installed_in_htmldate() -> None:
    # metadata installed them (and LONG_TEXT_PATTERN's search); again changes nothing
    assert datescan.install() == len(PATTERNS) + 1
    for name in PATTERNS:
        assert isinstance(getattr(htmldate.core, name), WindowedPattern)
    assert isinstance(htmldate.core.THREE_COMP_PATTERNS[1], WindowedPattern)


def test_other_patterns_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    other = re.compile(r"\D([0-9]{4}-[0-9]{2})\D")
    monkeypatch.setattr(htmldate.core, "YYYYMM_PATTERN", other)
    assert datescan.install() == len(PATTERNS)
    assert htmldate.core.YYYYMM_PATTERN is other


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_dates_are_htmldates(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datescan.install()
    tree = lxml.html.fromstring(page.read_bytes())
    # Nothing found in the markup: the page-wide search decides.
    for meta in tree.xpath("//meta|//time|//script"):
        meta.getparent().remove(meta)
    windowed = find_date(tree, extensive_search=True)
    for name in PATTERNS:
        monkeypatch.setattr(htmldate.core, name, getattr(htmldate.core, name).original)
    monkeypatch.setattr(
        htmldate.core,
        "THREE_COMP_PATTERNS",
        tuple(getattr(p, "original", p) for p in htmldate.core.THREE_COMP_PATTERNS),
    )
    assert find_date(tree, extensive_search=True) == windowed


#: Days written out, glued to words, numbers and each other (``LONG_TEXT_PATTERN``).
LONG_SAMPLES = [
    "Published March 5, 2024 by SmithMarch 12th 2023",
    "5. März 2024, 12 of Mar. 2025; 31st of December 1999 and Ocak 2 2021",
    "xyzabc 33 2020 Foo 1 20202 1920 March 2021 Şubat 3, 2022 İkinci 4 2023",
    "Mar 05th, 2024 05th of Mar 2024 Mar\t5 2024 mar 5 ,2024 Jan 32 2020 Feb 30, 2020",
    "2019 2020 March 2021 " + "a" * 700 + " 5 2020",
]


def _long_random_texts(count: int) -> list[str]:
    rng = random.Random(45)
    words = ["March", "mar", "Dec", "of ", "Ocak", "İki", "5th", "st", ",", ".", "\t", "x", "é_"]
    dates = ["March 5, ", "5th of Dec ", "12. März ", "Ocak 3 ", "xMar 31st ", "İkinci 4 "]
    pieces = [*words, *dates, *"0123", *[" "] * 8, "199", "20", "2024", "1999", "31", "12"]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 120))) for _ in range(count)]


def test_long_text_search_finds_what_the_pattern_finds() -> None:
    from htmldate import extractors

    datescan.install()
    anchored = extractors.LONG_TEXT_PATTERN
    assert isinstance(anchored, datescan.YearAnchoredSearch)
    pattern = anchored.original
    padding = "<div class='x'>" * 40  # past the length below which the pattern runs alone
    strings = [*LONG_SAMPLES, *_long_random_texts(3000)]
    for string in [padding + s for s in strings] + strings:
        for pos in range(0, len(string), 7):
            want, got = pattern.search(string, pos), anchored.search(string, pos)
            assert (got and (got.span(), got.groups())) == (want and (want.span(), want.groups()))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_long_text_dates_are_htmldates(page: Path) -> None:
    from htmldate import extractors

    datescan.install()
    html = page.read_text(errors="replace")
    text = " ".join(lxml.html.fromstring(page.read_bytes()).itertext())
    for string in (html, text, html + " Posted on 3rd of March 2024"):
        assert extractors.regex_parse(string) == _original_regex_parse(string)


def _original_regex_parse(string: str) -> object:
    from htmldate import extractors

    anchored = extractors.LONG_TEXT_PATTERN
    extractors.LONG_TEXT_PATTERN = anchored.original  # type: ignore[attr-defined]
    try:
        return extractors.regex_parse(string)
    finally:
        extractors.LONG_TEXT_PATTERN = anchored
