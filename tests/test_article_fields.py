"""The article's remaining fields (issue 45, item 4): the cover as the lead picture (above the
headline too, another crop of ``og:image``), pictures that CMSs name "thumb" or "widget" or
link to a photo page, keywords without a CMS's facets and categories without a menu. A real
page in ``fixtures/articles``; hostile input is bounded."""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from scrapy_maintext.document import Document
from scrapy_maintext.extraction import ExtractOptions, extract
from scrapy_maintext.fields.topics import page_keywords, sections, without_facets
from scrapy_maintext.pictures.cover import (
    HEADLINE_REACH,
    LEAD_REACH,
    cover_index,
    crop_of,
    headline_offset,
    lead_offset,
)
from scrapy_maintext.pictures.furniture import in_teaser, is_furniture, is_furniture_file, is_tiny

ARTICLES = Path(__file__).parent / "fixtures" / "articles"
PAGE = ARTICLES / "lead_above_headline.html"
URL = "https://www.seeblatt.example/lokales/faehre"
LEAD = "https://www.seeblatt.example/storage/image/1065948_faehre-am-steg_detail-800w_1FngrG_4Iql23.webp"
WERFT = "https://www.seeblatt.example/storage/image/1065951_werft-im-winter.webp"


@pytest.fixture(scope="module", params=["auto", "trafilatura"])
def doc(request: pytest.FixtureRequest) -> Document:
    return extract(PAGE.read_bytes(), URL, ExtractOptions(engine=request.param))


def test_the_lead_above_the_headline_is_the_cover(doc: Document) -> None:
    urls = [image.url for image in doc.images]
    assert urls == [LEAD, WERFT], doc.extractor
    lead = doc.images[0]
    assert lead.cover and (lead.caption, lead.credit) == (
        "Die Fähre am Steg in Meersburg.",
        "Lena Berg",
    )
    # og:image is another crop of the lead (its number, 1065948): the page's rendition is kept.
    assert doc.image == LEAD
    assert doc.images[1].caption == "Die Werft im Winter" and not doc.images[1].cover


def test_keywords_without_facets(doc: Document) -> None:
    assert doc.tags == ["Fähren", "Bodensee"]


# -- The cover and the headline -----------------------------------------------------------------


def test_headline_without_the_titles_wording() -> None:
    headings = [("Logo", 10), ("Fährefährtwieder", 500)]
    # The h1 the title opens, else the last h1 shortly before the first block.
    assert headline_offset(headings, "Logo of the site", 900) == 10
    assert headline_offset(headings, "Another wording", 900) == 500
    assert (
        headline_offset(headings, "Another wording", 500 + HEADLINE_REACH + 1)
        == 500 + HEADLINE_REACH + 1
    )
    assert headline_offset([], None, 42) == 42


def test_lead_offset_and_cover_index() -> None:
    pictures = [("logo", 5), ("ad", 300), ("lead", 460), ("body", 900)]
    accept = lambda el: el in ("lead", "body")  # noqa: E731
    assert lead_offset(pictures, 500, accept) == 460
    assert lead_offset(pictures, 460 + LEAD_REACH + 1, accept) == 460 + LEAD_REACH + 1
    assert lead_offset(pictures, 500, lambda el: False) == 500
    og = "https://a.example/p/204_x_meta.jpg"
    urls = ["https://a.example/p/101_lead.jpg", "https://a.example/p/204_x.jpg"]
    assert cover_index(urls, [100, 900], 200, og) == 0  # the lead stands before the body
    assert cover_index(urls, [300, 900], 200, "https://a.example/p/204_x.jpg") == 1
    assert cover_index(urls, [300, 900], 200, None) == 0
    assert cover_index([], [], 200, og) == -1


def test_crops_of_one_picture() -> None:
    assert crop_of(
        "https://www.sn.example/storage/image/8/4/1065948_a_detail-800w_1FngrG_4Iql23.webp",
        "https://www.sn.example/storage/image/8/4/1065948_a_metadaten_1FngrG_MKF8HP.jpg",
    )
    assert not crop_of("https://a.example/1065948_a.jpg", "https://b.example/1065948_a.jpg")
    assert not crop_of("https://a.example/x/1065948/a.jpg", "https://a.example/x/1065948/b.jpg")
    assert not crop_of("https://a.example/2024_a.jpg", "https://a.example/2024_b.jpg")


# -- Furniture ----------------------------------------------------------------------------------


def _img(html: str) -> lxml.html.HtmlElement:
    tree = lxml.html.fromstring(html)
    return next(tree.iter("img"))


@pytest.mark.parametrize(
    ("html", "furniture"),
    [
        ('<div class="widget widget-image"><img src="/a.jpg"></div>', False),
        ('<div class="thumb thumb16_9"><img src="/a.jpg"></div>', False),
        ('<img class="attachment-post-thumbnail wp-post-image" src="/a.jpg">', False),
        ('<button class="lightbox"><img src="/a.jpg"></button>', False),
        ('<div class="body comments-enabled"><img src="/a.jpg"></div>', False),
        ('<article><aside class="left image wide"><img src="/a.jpg"></aside></article>', False),
        ('<img src="/a.jpg" width="0" height="0" sizes="100vw">', False),
        # A figure named for its picture is the picture's own, a furniture word beside.
        ('<figure class="articleImageFigure teaser-image"><img src="/a.jpg"></figure>', False),
        # ... not when the picture links elsewhere (a teaser's figure).
        (
            '<figure class="teaser__media"><a href="https://tv.example/x"><img src="/a.jpg">'
            "</a></figure>",
            True,
        ),
        ('<div class="teaser-image"><img src="/a.jpg"></div>', True),
        ('<div class="sidebar"><img src="/a.jpg"></div>', True),
        ('<div class="search_close"><img src="/a.jpg"></div>', True),
        ('<aside class="related"><img src="/a.jpg"></aside>', True),
        ('<img src="/pixel.gif" width="0" height="0">', True),
        ('<div><form><img src="/a.jpg"></form></div>', True),
    ],
)
def test_furniture(html: str, furniture: bool) -> None:
    assert (
        is_furniture(_img(f"<html><body>{html}</body></html>"), "https://a.example/x") is furniture
    )


def test_a_page_wide_form_is_no_furniture() -> None:
    page = '<html><body><form id="aspnetForm"><div><img src="/a.jpg"></div></form></body></html>'
    assert not is_furniture(_img(page), "https://a.example/x")


@pytest.mark.parametrize(
    ("href", "teaser"),
    [
        ("/article/20250121-Q/photo/C5TD/", False),  # a sub-page of the article
        ("./photo/AS2025.html", False),
        ("https://a.example/attachment/216479/", False),
        ("/other-story.html", True),
        ("https://shop.example/item", False),
    ],
)
def test_viewer_links_are_no_teasers(href: str, teaser: bool) -> None:
    page = f'<html><body><a href="{href}"><img src="/a.jpg"></a></body></html>'
    assert in_teaser(_img(page), "https://a.example/article/20250121-Q/") is teaser


def test_furniture_files_and_tiny() -> None:
    assert is_furniture_file("https://a.example/img/wsh_logo.png")
    assert is_furniture_file("https://a.example/img/fpApp/appIcon.png?v=2")
    assert not is_furniture_file("https://a.example/logos/harbour.jpg")  # the folder says nothing
    assert is_tiny(_img('<img src="/a.jpg" width="48">'))


# -- Topics -------------------------------------------------------------------------


def test_keyword_facets_and_menu_categories() -> None:
    facets = ["Day: Friday", "Time: 11.00", "Subject: Justice", "Medium", "Subject: Politics"]
    # Most terms are facets: "Medium", a facet without its value, is left out too.
    assert without_facets(facets) == ["Justice", "Politics"]
    assert without_facets(["Day: Friday", "Subject: Justice", "Medium", "Gaza"]) == [
        "Justice",
        "Medium",
        "Gaza",
    ]
    assert without_facets(["Star Wars: Andor", "Disney"]) == ["Star Wars: Andor", "Disney"]
    # A news agency's subject codes are no keywords: the next source is read.
    codes = "AER,AERO,AIRS08,INDG08,RSBI:HUMAN-RIGHTS,GEN,NP,AE,CRSH,DIS,TPT,TRAN"
    head = f'<meta name="keywords" content="{codes}">'
    tags = '<nav class="article-tags"><a href="/aerospace/">Aerospace &amp; Defense</a></nav>'
    assert _tags_of(tags, head) == ["Aerospace & Defense"]
    acronyms = '<meta name="keywords" content="EU, NATO, USA, UN, G7, G20, AI, FBI">'
    assert _tags_of("", acronyms) == ["EU", "NATO", "USA", "UN", "G7", "G20", "AI", "FBI"]
    assert sections(["AI", "Apps", "Biotech & Health"]) == ["AI", "Apps", "Biotech & Health"]
    menu = ["Canada", "World", "NP Comment", "Longreads", "Life", "Shopping"]
    assert sections(menu) == []


def test_hostile_keywords_and_pictures_are_bounded() -> None:
    """A megabyte of facets, a JSON-LD keyword list of garbage, a header of thousands of
    icons above the headline: bounded, never an error."""
    garbage = ", ".join(f"K{i}: {'x' * (i % 90)}" for i in range(20_000))
    json_ld = (
        '{"@type": "NewsArticle", "keywords": [' + ",".join(["1", "null", "{}"] * 5_000) + "]}"
    )
    icons = '<img src="/i.png" width="300" height="300">' * 5_000
    html = (
        f'<html><head><meta name="keywords" content="{garbage}">'
        f'<script type="application/ld+json">{json_ld}</script></head><body>'
        f"<div>{icons}</div><h1>Title</h1><p>{'Words of the body. ' * 40}</p></body></html>"
    )
    tree = lxml.html.fromstring(html)
    assert len(page_keywords(tree)) <= 30
    doc = extract(html, "https://a.example/x", ExtractOptions(engine="trafilatura"))
    assert doc.reason is None and len(doc.images) <= 60


# -- Tags shown as links ------------------------------------------------------------------------

BODY = "<p>" + "Words of the body. " * 30 + "</p>"


ARTICLE = '<meta property="og:type" content="article">'


def _tags_of(middle: str, head: str = "", before: str = "", kind: str = ARTICLE) -> list[str]:
    html = (
        f"<html><head>{kind}{head}</head><body>{before}<h1>Title</h1>{BODY}{middle}</body></html>"
    )
    return page_keywords(lxml.html.fromstring(html))


def test_a_tag_list_after_the_article() -> None:
    tags = (
        '<div class="articleTags"><span class="articleTag"><a href="/person/meloni/">'
        "Giorgia Meloni</a></span></div>"
    )
    assert _tags_of(tags) == ["Giorgia Meloni"]
    # Only on a page that says it is an article: og:type, or a JSON-LD article type.
    assert _tags_of(tags, kind="") == []
    json_ld = '<script type="application/ld+json">{"@type": ["NewsArticle"]}</script>'
    assert _tags_of(tags, kind=json_ld) == ["Giorgia Meloni"]
    # The data's keywords first; the links only where the data names none.
    head = '<meta name="keywords" content="Italien, Rom">'
    assert _tags_of(tags, head) == ["Italien", "Rom"]
    # An id names it too; its heading and separators are no terms.
    box = (
        '<section id="post-tags"><h2>Mehr zum Thema</h2><ul>'
        '<li><a href="/gaza/">Gazastreifen</a> -</li><li><a href="/nahost/">#Nahost</a></li>'
        "</ul></section>"
    )
    assert _tags_of(box) == ["Gazastreifen", "Nahost"]
    # Data attributes name it too, by their value or their name.
    assert _tags_of('<div data-component="tags"><a href="/t/a">Alpha</a></div>') == ["Alpha"]
    assert _tags_of('<div data-test-tags-box=""><a href="/t/a">Alpha</a></div>') == ["Alpha"]


def test_the_innermost_tag_list_without_a_skip_link() -> None:
    related = (
        '<section id="related-topics">'
        '<a href="#after">Den nächsten Abschnitt überspringen</a>'
        '<aside class="related-topics-list"><a href="/t-1">Long COVID</a>'
        '<a href="/t-2">Coronavirus</a></aside></section>'
    )
    assert _tags_of(related) == ["Long COVID", "Coronavirus"]
    # Links named as tags stand for their parent.
    links = '<p><a class="tag" href="/t/a">Alpha</a> <a class="tag" href="/t/b">Beta</a></p>'
    assert _tags_of(links) == ["Alpha", "Beta"]


def test_menus_and_teasers_are_no_tag_list() -> None:
    # Above the headline (the site's header), named for trends or a menu, holding headlines
    # or running text: not the article's tags.
    header = '<div class="tags"><a href="/t/x">Alpha</a></div>'
    assert _tags_of("", before=header) == []
    trending = '<ul class="c-trending-tags"><li><a href="/t/x">Alpha</a></li></ul>'
    assert _tags_of(trending) == []
    headline = "Wine Guy: These bottles are hot off the presses"
    teaser = f'<ol class="more-topic"><li><a href="/a">{headline}</a></li></ol>'
    assert _tags_of(teaser) == []
    text = '<div class="topics">' + "Some running text here. " * 10 + '<a href="/t">Alpha</a></div>'
    assert _tags_of(text) == []


def test_a_hostile_tag_list_is_bounded() -> None:
    """Deeply nested and thousands of sibling elements named "tags": at most 50 looked at,
    at most 30 terms, no error (the parser keeps 255 levels)."""
    nested = '<div class="tags">' * 200 + '<a href="/t">A</a>' + "</div>" * 200
    assert _tags_of(nested) == ["A"]
    many = '<div class="tags">' + '<a href="/t">A</a>' * 5_000 + "</div>"
    assert _tags_of(many) == []
    siblings = '<span class="tag"><a href="/t">T</a></span>' * 5_000
    assert len(_tags_of(f"<div>{siblings}</div>")) <= 30
