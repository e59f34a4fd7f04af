"""htmldate's date and the check of a bare year's guess in one pass (``fields.pagedate``)
answer what ``find_date`` called twice answers, on real pages and on the same pages with
their markup's dates taken away (where the free-text search decides).

On every developer page: ``python -m benchmarks.metadata_dates --data ../shared/data``.
"""

from __future__ import annotations

import copy
from pathlib import Path

import htmldate
import lxml.html
import pytest
from htmldate import find_date
from scrapy_maintext.fields import pagedate
from scrapy_maintext.fields.metadata import bound_json_ld, date_config
from scrapy_maintext.fields.pagedate import find_dates
from trafilatura.settings import set_date_params

FIXTURES = Path(__file__).parent / "fixtures"
PAGES = sorted(
    [
        *FIXTURES.glob("extraction/site/*.html"),
        *FIXTURES.glob("neural/*.html"),
        *FIXTURES.glob("articles/*.html"),
    ]
)
URLS = (None, "https://example.org/2021/03/04/a-story", "https://example.org/news/story")


def twice(
    tree: lxml.html.HtmlElement,
    url: str | None,
    params: dict,
    page_url: str | None,
    page_tree: lxml.html.HtmlElement | None = None,
) -> tuple[str | None, str | None]:
    """What the metadata did before: ``find_date``, then for a first of January
    ``find_date`` again without the free-text search (``real_date``)."""
    found = find_date(tree, url=url, **params)
    if not found or not found.endswith("-01-01"):
        return found, found or None
    page_tree = tree if page_tree is None else page_tree
    again = find_date(page_tree, url=page_url, **{**params, "extensive_search": False})
    return found, found if again == found else None


def variants(page: Path) -> list[lxml.html.HtmlElement]:
    """The page; without its meta tags, ``<time>`` and scripts; and that with a copyright
    line and a date in a ``<small>`` (a bare year, and a day in a fast-search element)."""
    tree = lxml.html.fromstring(page.read_bytes())
    bare = copy.deepcopy(tree)
    for element in bare.xpath("//meta|//time|//script|//link[@rel='canonical']"):
        element.getparent().remove(element)
    footer = copy.deepcopy(bare)
    body = footer.find(".//body")
    if body is not None:
        body.append(lxml.html.fromstring("<footer><p>© 2019 Example</p></footer>"))
    dated = copy.deepcopy(footer)
    body = dated.find(".//body")
    if body is not None:
        body.insert(0, lxml.html.fromstring("<small>Posted 2019-01-01</small>"))
    return [tree, bare, footer, dated]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_one_pass_answers_as_find_date_twice(page: Path) -> None:
    assert pagedate.follows_htmldate() == (htmldate.__version__ == pagedate.KNOWN_HTMLDATE)
    for tree in variants(page):
        for extensive in (True, False):
            params = set_date_params(extensive=extensive)
            for url in URLS:
                page_url = url or URLS[2]
                want = twice(tree, url, params, page_url)
                assert find_dates(tree, url, params, page_url) == want, (url, extensive)


def test_bare_years_are_checked() -> None:
    """The variants reach both branches: a first of January kept from the markup's day,
    one dropped (the copyright line's year alone), and other days kept as they are."""
    page = FIXTURES / "extraction" / "site" / "article.html"
    _, bare, footer, dated = variants(page)
    params = set_date_params(extensive=True)
    assert find_dates(footer, None, params, None) == ("2019-01-01", None)
    assert find_dates(dated, None, params, None) == ("2019-01-01", "2019-01-01")
    found, kept = find_dates(bare, None, params, None)
    assert kept == found


def test_bounded_json_ld_is_checked_on_the_page() -> None:
    """With a JSON-LD block cut (another tree), the check reads the page itself."""
    html = (
        '<html><head><script type=\'application/ld+json\'>{"datePublished": "2019-01-01",'
        + " " * 20_000
        + "</script></head><body><p>© 2019 Example</p></body></html>"
    )
    tree = lxml.html.fromstring(html)
    bounded = bound_json_ld(tree)
    assert bounded is not tree
    params = date_config(tree)
    assert find_dates(bounded, None, params, None, tree) == twice(bounded, None, params, None, tree)


def test_another_htmldate_runs_find_date(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(htmldate, "__version__", "0.0.0")
    assert not pagedate.follows_htmldate()
    _, _, footer, dated = variants(FIXTURES / "extraction" / "site" / "article.html")
    params = set_date_params(extensive=True)
    for tree in (footer, dated):
        assert find_dates(tree, None, params, None) == twice(tree, None, params, None)
