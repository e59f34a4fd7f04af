"""A page's words stay words in our Markdown: rendered by a CommonMark renderer with raw HTML
on (markdown-it, with GitHub's tables and strikethrough), no caption, alt text, credit, title,
metadata line or body text makes an element, attribute, link, image or code span that our own
structure did not put there, and each renders as the text it was. Checked on documents built
from hostile strings, on random strings of Markdown's punctuation, and on a hostile page
through ``maintext extract`` and a real crawl."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from pathlib import Path

import lxml.html
import pytest
from markdown_it import MarkdownIt
from scrapy_maintext.cli import main as maintext
from scrapy_maintext.document import Block, Image
from scrapy_maintext.exporters.markdown import markdown_body, markdown_document, markdown_image

from tests.crawl import NO_WAITS, run_crawl
from tests.sites import TestSiteServer, serve_with_page

PAGE = Path(__file__).parent / "fixtures" / "articles" / "hostile_markdown.html"
PAGE_PATH = "/news/quay.html"
#: Strings a hostile page can carry, each of which made markup on 1ea8e03 somewhere.
HOSTILE = (
    "<img src=x onerror=alert(1)>",
    "[c](javascript:alert(2))",
    "![i](javascript:alert(3))",
    "<javascript:alert(4)>",
    "<https://evil.example/>",
    "a `b` c",
    '`a](b "c` `<img src=y onerror=alert(5)>`',
    "**bold** and *em* and _em_",
    "~~struck~~",
    "&lt;script&gt;alert(6)&lt;/script&gt; &amp; &#60;b&#62;",
    "[ref]: javascript:alert(7)",
    "    four spaces then code",
    "# heading",
    "1. numbered",
    "- bullet",
    "> quote",
    "line with a trailing backslash \\",
    "a | b | c",
    "<script>alert(8)</script>",
    '" onerror="alert(9)',
)
#: Elements our own structure makes (no code block in these documents).
STRUCTURE = {
    "h1",
    "h2",
    "h3",
    "p",
    "ul",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "blockquote",
    "img",
    "br",
    "em",
    "a",
}
RENDER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def rendered(markdown: str) -> lxml.html.HtmlElement:
    return lxml.html.fragment_fromstring(RENDER.render(markdown), create_parent="div")


def check_no_page_markup(markdown: str, image_urls: Iterable[str], links: Iterable[str]) -> None:
    """Only our structure's elements; every image and link one of ours, with only the
    attributes we write; no ``javascript:`` anywhere."""
    root = rendered(markdown)
    tags = {el.tag for el in root.iter() if el is not root}
    assert tags <= STRUCTURE, (tags - STRUCTURE, markdown)
    assert [img.get("src") for img in root.iter("img")] == list(image_urls), markdown
    assert [a.get("href") for a in root.iter("a")] == list(links), markdown
    for el in root.iter():
        assert set(el.attrib) <= {"src", "alt", "title", "href"}, (el.tag, dict(el.attrib))
        for value in el.attrib.values():
            assert not value.lower().startswith(("javascript:", "data:", "file:")), value


def _document(text: str) -> dict[str, object]:
    image = Image("https://pics.example/a.jpg", text, text, text, True, 1)
    body = [
        Block("head", text, level=2),
        Block("p", text),
        Block("item", text),
        Block("row", text, cells=(text, text)),
        Block("row", text, cells=(text, text)),
        Block("quote", text),
    ]
    return {
        "url": "https://news.example/a",
        "title": text,
        "author": text,
        "date": text,
        "body": body,
        "images": [image],
        "comments": text,
    }


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_in_every_field_stays_text(text: str) -> None:
    markdown = markdown_document(_document(text))
    check_no_page_markup(markdown, ["https://pics.example/a.jpg"], ["https://news.example/a"])
    root = rendered(markdown)
    words = " ".join(text.split())
    assert root.find("h1").text_content() == words
    (img,) = root.iter("img")
    assert (img.get("alt"), img.get("title")) == (words, words)
    (credit,) = root.iter("em")
    assert credit.text_content() == words
    cells = [td.text_content() for td in root.iter("td", "th")]
    assert cells == [words] * 4
    assert root.find("ul/li").text_content() == words


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:image/png;base64,AAAA",
        "file:///etc/passwd",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "vbscript:x",
        "http://[broken",
    ],
)
def test_an_image_url_that_is_not_http_makes_no_image(url: str) -> None:
    image = Image(url, "alt <b>x</b>", "caption [c](javascript:x)", "credit `y`", False, 0)
    markdown = markdown_image(image)
    check_no_page_markup(markdown, [], [])
    assert rendered(markdown).text_content().strip() == "caption [c](javascript:x) credit `y`"


def test_an_image_url_is_percent_encoded_and_stays_one_image() -> None:
    url = 'https://pics.example/a b/"q"<x>`y`\\z.jpg?a=1&amp;b=(2)'
    image = Image(url, "a", 'cap" onerror="alert(1)', "c", False, 0)
    encoded = "https://pics.example/a%20b/%22q%22%3Cx%3E%60y%60%5Cz.jpg?a=1&amp;b=(2)"
    check_no_page_markup(markdown_image(image), [encoded], [])
    (img,) = rendered(markdown_image(image)).iter("img")
    assert img.get("title") == 'cap" onerror="alert(1)'


def test_a_document_url_that_is_not_http_is_text() -> None:
    markdown = markdown_document(
        {"url": "javascript:alert(1)", "title": "t", "body": [], "images": [], "text": "words"}
    )
    check_no_page_markup(markdown, [], [])
    assert "javascript:alert(1)" in rendered(markdown).text_content()


def _random_texts(count: int) -> Iterator[str]:
    """Strings of Markdown's punctuation, letters, spaces and line breaks (seeded)."""
    rng = random.Random(44)
    alphabet = "`*_~[]()<>!&#;|\\-+=.:/\"' \n\tabc1"
    for _ in range(count):
        yield "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))


def test_random_punctuation_renders_as_the_same_text() -> None:
    for text in _random_texts(3000):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        markdown = markdown_body([Block("p", text)])
        root = rendered(markdown)
        tags = {el.tag for el in root.iter() if el is not root}
        assert tags <= {"p"}, (text, markdown, tags)
        assert root.text_content().strip() == "\n".join(lines), (text, markdown)


def test_random_punctuation_keeps_an_image_one_image() -> None:
    texts = list(_random_texts(1500))
    for alt, caption, credit in zip(texts[:-2], texts[1:-1], texts[2:], strict=True):
        image = Image("https://pics.example/a.jpg", alt, caption, credit, False, 0)
        markdown = markdown_image(image)
        root = rendered(markdown)
        assert {el.tag for el in root.iter() if el is not root} <= {"p", "img", "br", "em"}
        (img,) = root.iter("img")
        assert img.get("alt") == " ".join(alt.split()), markdown
        assert (img.get("title") or "") == " ".join(caption.split()), markdown
        assert root.findtext(".//em") == (" ".join(credit.split()) or None), markdown


def _page_image_urls() -> list[str]:
    return [
        "https://cdn.courier.example/photos/harbour.jpg",
        "https://cdn.courier.example/photos/quay.jpg",
    ]


def check_hostile_page(markdown: str, url: str) -> None:
    root = rendered(markdown)
    sources = [img.get("src") for img in root.iter("img")]
    assert set(_page_image_urls()) <= set(sources), sources
    check_no_page_markup(markdown, sources, [url])
    text = root.text_content()
    for words in (
        "<img src=x onerror=alert(1)>",
        "[would cost](javascript:alert(9))",
        "<script>alert(10)</script>",
        "<javascript:alert(13)>",
        "~~not struck~~",
        "**pointed**",
        "`rm -rf`",
        "&lt;b&gt;",
        "# Not a heading",
    ):
        assert words in text, words


def test_maintext_extract_writes_hostile_page_as_text(tmp_path: Path) -> None:
    page = tmp_path / "quay.html"
    page.write_bytes(PAGE.read_bytes())
    corpus, folder = tmp_path / "corpus.md", tmp_path / "docs"
    base = ["extract", str(page), "--base-url", "https://courier.example/news/"]
    assert maintext([*base, "-o", str(corpus), "--no-progress"]) == 0
    check_hostile_page(corpus.read_text("utf-8"), "https://courier.example/news/quay.html")
    assert maintext([*base, "-o", f"{folder}/:md", "--no-progress"]) == 0
    (single,) = folder.rglob("*.md")
    check_hostile_page(single.read_text("utf-8"), "https://courier.example/news/quay.html")


@pytest.fixture(scope="module")
def hostile_site() -> Iterator[TestSiteServer]:
    with serve_with_page(PAGE_PATH, PAGE.read_bytes()) as server:
        yield server


def test_a_crawl_writes_hostile_page_as_text(hostile_site: TestSiteServer, tmp_path: Path) -> None:
    md = tmp_path / "c.md"
    settings = {**NO_WAITS, "EXTRACT_WORKERS": "1", "EXTRACT_MARKDOWN": "True"}
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": hostile_site.base_url},
        settings,
        extra_outputs=(f"{md}:markdown",),
    )
    assert result.returncode == 0, result.log[-3000:]
    url = hostile_site.base_url + PAGE_PATH
    (section,) = [s for s in md.read_text("utf-8").split("\n# ") if f"<{url}>" in s]
    check_hostile_page("# " + section.removeprefix("# "), url)
    (item,) = [i for i in result.items if i["url"] == url]
    check_no_page_markup(
        item["markdown"], [img.get("src") for img in rendered(item["markdown"]).iter("img")], []
    )
