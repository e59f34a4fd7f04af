"""Our metadata step gives trafilatura's ``extract_metadata`` fields, with a faster author search.

On every developer page: ``python -m benchmarks.metadata_equivalence --data ../shared/data``.
"""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from scrapy_maintext.fields.author import extract_author
from scrapy_maintext.fields.metadata import date_config, trafilatura_metadata
from trafilatura.metadata import extract_author as trafilatura_author
from trafilatura.metadata import extract_metadata

FIXTURES = Path(__file__).parent / "fixtures"
PAGES = sorted(FIXTURES.glob("extraction/site/*.html")) + sorted(FIXTURES.glob("neural/*.html"))
URL = "https://gazette.example/news/page.html"

#: Author markup trafilatura looks for, each on a page of its own: the class/id/itemprop/rel
#: patterns of its three expressions, sections it deletes first (comments, dates, figures,
#: sidebars), text joined across a deleted element, and texts too short or too long.
AUTHOR_CASES = {
    "rel-author": '<a rel="author" href="/u/1">Jane Roe</a>',
    "class-author-name": '<span class="post-author-name">Ann Lee</span>',
    "itemprop": '<div itemprop="author"><b>Li</b> Wei</div>',
    "byline-h4": '<h4 class="byline">By Sam Poe</h4>',
    "data-component": '<section data-component="Byline">Kim Ode</section>',
    "id-zuozhe": '<p id="zuozhe">Wang Fang</p>',
    "in-comments": '<div class="comments"><span class="author">Troll Guy</span></div>'
    '<p class="byline">Real Author</p>',
    "in-figure": '<figure><span class="author">Photo Credit</span></figure>',
    "time-inside": '<div class="author">Jo<time>today</time>hn Doe</div>',
    "date-inside": '<div class="byline">By <span class="date">May 1</span>Ed Fox</div>',
    "sidebar-ancestor": '<div class="sidebar"><div class="byline">Side Bar</div></div>',
    "too-short": '<span class="author">Al</span><span class="writer">Bo Dee</span>',
    "too-long": '<div class="author">' + "word " * 40 + "</div>",
    "author-element": "<author>Ed Wood</author>",
    "rel-me": '<a href="/me"><rel>me</rel>Self Ref</a>',
    "rel-me-after-pruning": '<a href="/me"><rel><time>x</time>me</rel>Self Ref</a>',
    "none": "<p>No byline here.</p>",
}


def _tree(body: str) -> lxml.html.HtmlElement:
    html = f"<html><head><title>t</title></head><body><main>{body}</main></body></html>"
    return lxml.html.fromstring(html)


@pytest.mark.parametrize("case", sorted(AUTHOR_CASES))
def test_author_is_trafilaturas(case: str) -> None:
    tree = _tree(AUTHOR_CASES[case])
    assert extract_author(tree) == trafilatura_author(tree)


def test_author_cases_cover_found_and_not_found() -> None:
    found = {c for c, body in AUTHOR_CASES.items() if extract_author(_tree(body))}
    assert {"rel-author", "byline-h4", "time-inside", "in-comments"} <= found
    assert {"none", "in-figure", "sidebar-ancestor", "too-long"}.isdisjoint(found)
    assert extract_author(_tree(AUTHOR_CASES["in-comments"])) == "Real Author"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_metadata_is_trafilaturas(page: Path) -> None:
    tree = lxml.html.fromstring(page.read_bytes())
    dates = date_config(tree)
    ours = _fields(trafilatura_metadata(tree, URL, dates))
    theirs = _fields(extract_metadata(tree, default_url=URL, date_config=dates))
    assert ours == theirs
    assert ours["title"], "a fixture page without metadata checks nothing"


def _fields(meta: object) -> dict[str, object]:
    """The metadata fields (the empty body elements are new objects on every call)."""
    return {k: v for k, v in meta.as_dict().items() if k not in ("body", "commentsbody")}  # type: ignore[attr-defined]


#: Footers whose links name a licence (or nearly): trafilatura reads every footer link's
#: text, ours only the links whose href or letters could name one.
LICENCE_CASES = {
    "href": '<footer><a href="https://creativecommons.org/licenses/by-sa/4.0/">x</a></footer>',
    "text": '<footer><a href="/l">Licensed CC BY 4.0</a></footer>',
    "split": '<div class="site-footer"><a href="/l"><b>Creative</b> <i>Commons</i> by-nc</a></div>',
    "blocks": '<div id="footer"><a href="/l"><p>cc</p><p>zero</p></a></div>',
    "no-cue": '<footer><a href="/privacy">Privacy policy by us</a><a href="/c">CC</a></footer>',
    "rel": '<a rel="license nofollow" href="/lic">Some licence</a>',
    "none": "<p>no footer</p>",
}


@pytest.mark.parametrize("case", sorted(LICENCE_CASES))
def test_licence_is_trafilaturas(case: str) -> None:
    from scrapy_maintext.fields.metadata import extract_license
    from trafilatura.metadata import extract_license as trafilatura_license

    tree = lxml.html.fromstring(f"<html><body>{LICENCE_CASES[case]}</body></html>")
    assert extract_license(tree) == trafilatura_license(tree)
    if case != "none" and case != "no-cue":
        assert extract_license(tree) is not None


#: JSON-LD texts where minifying and normalising can go wrong: escaped quotes and
#: backslashes, an unterminated string, a backslash before a line break, white space runs
#: inside and outside strings, \u escapes (lone surrogates included), control characters,
#: HTML entities and tags.
JSON_CASES = [
    '{\n  "@type": "NewsArticle",\n  "headline": "A  \\"quoted\\"  title",\n  "x": 1\n}',
    '{"a": "back\\\\slash", "b" : "tab\\there\\nnew\\rline"}',
    '{"a": "open string  \n  "b": 2}',
    '{"a": "line\\\n  break", "b": "\\u00e9t\\u00E9 \\ud83d\\ude00 \\ud800 lone"}',
    '{"name": "Tom &amp; <b>Jerry</b>", "c": "\x01\x1f ctrl"}',
    "  \t\n ",
    '"unterminated \\" still',
    '{"k":"v"}\u00a0{"k2" :\u2003"v 2"}',
]


@pytest.mark.parametrize("text", JSON_CASES)
def test_json_ld_text_is_trafilaturas(text: str) -> None:
    from scrapy_maintext.fields.metadata import minify_json, normalize_json
    from trafilatura.json_metadata import normalize_json as trafilatura_normalize
    from trafilatura.metadata import JSON_MINIFY

    assert minify_json(text) == JSON_MINIFY.sub(r"\1", text)
    assert normalize_json(minify_json(text)) == trafilatura_normalize(JSON_MINIFY.sub(r"\1", text))


def test_json_ld_text_is_trafilaturas_on_random_text() -> None:
    import random

    from scrapy_maintext.fields.metadata import minify_json, normalize_json
    from trafilatura.json_metadata import normalize_json as trafilatura_normalize
    from trafilatura.metadata import JSON_MINIFY

    pieces = ['"', "\\", " ", "\n", "\t", "a", "\\n", "\\u00e9", "\\ud83d", "\ud800", "<b>", "{"]
    pieces += ["}", ":", ",", "&amp;", '\\"', "\u2003"]
    rng = random.Random(45)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        minified = JSON_MINIFY.sub(r"\1", text)
        assert minify_json(text) == minified
        assert normalize_json(minified) == trafilatura_normalize(minified)
