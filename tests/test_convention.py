"""The text convention (docs/formats.md): which blocks ``convention.judge`` takes out of
``text``, and why, in several languages; what it must leave; captions brought back."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from scrapy.settings import Settings
from scrapy_maintext.document import Block
from scrapy_maintext.extraction.convention import (
    Convention,
    PageFacts,
    apply,
    byline_author,
    judge,
)
from scrapy_maintext.extraction.markup import Markup
from scrapy_maintext.pipelines.config import ExtractConfig

#: A body paragraph (well above ``convention.LONG_WORDS``): what comes before the first one
#: or after the last one is the page's edge, where bylines and datelines stand.
LONG = (
    "The small ferry that links the two banks of the harbour carried its first passengers on "
    "Wednesday morning, three months after it was taken out of the water for a complete "
    "overhaul of its engine, its ramps and its steering gear."
)
TITLE = "Harbour ferry returns after winter repairs"
CAPTION = Markup(caption=True)
BYLINE = Markup(byline=True)
TIME = Markup(time=True)


def _verdict(
    block: Block | str,
    where: str = "top",
    title: str | None = TITLE,
    authors: Sequence[str] = (),
    markup: Markup | None = None,
) -> Convention | None:
    """The verdict on ``block`` standing at the page's top, between two body paragraphs
    ("middle") or after the last one ("bottom")."""
    block = Block("p", block) if isinstance(block, str) else block
    body = [Block("p", LONG), Block("p", LONG)]
    at = {"top": 0, "middle": 1, "bottom": 2}[where]
    blocks = [*body[:at], block, *body[at:]]
    marks = [Markup()] * len(blocks)
    marks[at] = markup or Markup()
    verdicts = judge(blocks, PageFacts(title, tuple(authors)), marks)
    assert verdicts[:at] + verdicts[at + 1 :] == [None, None]  # the body stays
    return verdicts[at]


@pytest.mark.parametrize(
    "block",
    [
        Block("head", TITLE, level=1),
        Block("head", f"{TITLE} - Coastline Courier", level=1),  # the site's name after it
        Block("p", TITLE),
    ],
)
def test_the_headline_is_the_title(block: Block) -> None:
    assert _verdict(block) is Convention.TITLE


def test_the_headline_in_german_and_an_h1_further_down() -> None:
    title = "Die Fähre fährt wieder nach drei Monaten"
    assert _verdict(Block("head", title, level=1), title=title) is Convention.TITLE
    # An h1 that repeats the title is the headline wherever the engine put it.
    assert _verdict(Block("head", title, level=1), "middle", title=title) is Convention.TITLE


@pytest.mark.parametrize(
    ("text", "authors", "markup"),
    [
        ("By Jane Doe", (), None),
        ("von Engin Haupt, MDR SACHSEN-ANHALT", (), None),
        ("Par Marie Dupont, envoyée spéciale à Lyon", (), None),
        ("Por Ana García", (), None),
        ("Jane Doe and John Roe", ("Jane Doe", "John Roe"), None),  # the page's own authors
        ("Jane Doe, Harbour Reporter, Coastline Courier", (), BYLINE),  # class="byline"
    ],
)
def test_bylines(text: str, authors: tuple[str, ...], markup: Markup | None) -> None:
    assert _verdict(text, authors=authors, markup=markup) is Convention.BYLINE
    assert _verdict(text, "bottom", authors=authors, markup=markup) is Convention.BYLINE


@pytest.mark.parametrize(
    ("text", "markup"),
    [
        ("Stand: 08.07.2026 05:00 Uhr", None),
        ("Publié le 30 août 2023 à 14h52", None),
        ("Updated: 12 March 2025 14:52", None),
        ("Mis à jour le 31 août 2023 à 09h10", None),
        ("12. März 2025", None),
        ("Yasmine Hassan · CBC News · Posted: Aug 08, 2024 4:00 AM EDT", None),
        ("Wednesday, 12 March", TIME),  # in a <time>
    ],
)
def test_datelines(text: str, markup: Markup | None) -> None:
    assert _verdict(text, markup=markup) is Convention.DATELINE
    assert _verdict(text, "bottom", markup=markup) is Convention.DATELINE


@pytest.mark.parametrize(
    ("text", "markup"),
    [
        ("The repaired ferry leaves the quay on its first crossing of the season.", CAPTION),
        ("Foto: dpa", None),
        ("Photo: Tom Reed / Coastline Courier", None),
        ("© Reuters", None),
        ("Die Fähre am Kai der Altstadt. (Foto: Tom Reed)", None),
        ("Le bac quitte le quai. © AFP", None),
    ],
)
def test_captions_anywhere(text: str, markup: Markup | None) -> None:
    for where in ("top", "middle", "bottom"):
        assert _verdict(text, where, markup=markup) is Convention.CAPTION


@pytest.mark.parametrize(
    "text",
    [
        "Share on Facebook",
        "Partager sur Facebook",
        "Lire aussi : La route du pont fermée pendant deux semaines en avril",
        "Read more: Road bridge to close for two weeks in April",
        "Lesen Sie auch: Die Brücke wird im April gesperrt",
        "Sign up for our newsletter",
        "Anzeige",
        "Advertisement",
    ],
)
def test_furniture_anywhere(text: str) -> None:
    # The shipped phrases (extraction/phrases.json), in the middle of the body too.
    assert _verdict(text, "middle") is Convention.FURNITURE


@pytest.mark.parametrize(
    ("text", "where"),
    [
        # "By" opening a sentence, long (body text by length) or short (no name after it).
        (
            "By 2030, the city will have replaced every diesel bus with an electric one, the "
            "mayor said on Tuesday, and the savings will pay for new cycle lanes across the "
            "northern districts of the harbour town.",
            "top",
        ),
        ("By 2030, the city wants 40 electric buses.", "top"),
        # A short sentence with a date inside the article, and at its edges.
        ("The council meets again on 12 March 2025.", "middle"),
        ("The council meets again on 12 March 2025.", "bottom"),
        # Words of several-word date markers ("mis à jour", "online seit") opening a sentence.
        ("Le bac part à 6 h 30 du quai nord.", "top"),
        ("Café crème, naïve façade, à la carte, 5€.", "top"),
        ("Seit 2019 gibt es drei neue Linien.", "top"),
        # A count is not a date.
        (Block("item", "Tyres: 17"), "bottom"),
        (Block("item", "Plastic bottles: 1,240"), "bottom"),
        # Headings that are common words.
        (Block("head", "Background", level=2), "top"),
        (Block("head", "Update", level=2), "middle"),
        (Block("head", "Results", level=2), "bottom"),
        # A table row and code, whatever their words.
        (Block("row", "Updated | 12 March 2025", cells=("Updated", "12 March 2025")), "top"),
        (Block("code", "By Jane Doe"), "top"),
    ],
)
def test_body_text_stays(text: Block | str, where: str) -> None:
    assert _verdict(text, where) is None


def test_a_long_paragraph_opening_with_a_short_title_is_text() -> None:
    title = "Новости"
    paragraph = "Новости дня. " * 40
    assert _verdict(Block("head", title, level=1), title=title) is Convention.TITLE
    assert _verdict(paragraph, title=title) is None
    assert _verdict(f"{title} Harbour Ferry", title=title) is None  # too short to be one


def test_a_body_byline_gives_the_author() -> None:
    blocks = [
        Block("head", TITLE, level=1),
        Block("p", "von Engin Haupt, MDR SACHSEN-ANHALT"),
        Block("p", LONG),
    ]
    kept, verdicts = apply(blocks, PageFacts(TITLE))
    assert kept == [Block("p", LONG)]
    assert verdicts == [Convention.TITLE, Convention.BYLINE, None]
    assert byline_author(blocks, verdicts) == "Engin Haupt"
    blocks[1] = Block("p", "By Jane Doe | Coastline Courier")
    assert byline_author(blocks, judge(blocks, PageFacts(TITLE))) == "Jane Doe"


def test_captions_come_back_when_asked_for_and_nothing_else_does() -> None:
    blocks = [
        Block("head", TITLE, level=1),
        Block("p", "By Jane Doe"),
        Block("p", "The repaired ferry leaves the quay. Photo: Tom Reed"),
        Block("p", LONG),
        Block("p", "Foto: dpa"),
        Block("p", "Share on Facebook"),
    ]
    facts, marks = PageFacts(TITLE), [Markup(), Markup(), CAPTION, Markup(), Markup(), Markup()]
    dropped = [Convention.TITLE, Convention.BYLINE, Convention.CAPTION, None]
    assert judge(blocks, facts, marks) == [*dropped, Convention.CAPTION, Convention.FURNITURE]
    kept = [Convention.TITLE, Convention.BYLINE, None, None, None, Convention.FURNITURE]
    assert judge(blocks, facts, marks, captions=True) == kept
    assert apply(blocks, facts, marks, captions=True)[0] == [blocks[2], blocks[3], blocks[4]]


def test_the_captions_setting_reaches_the_options() -> None:
    assert ExtractConfig.from_settings(Settings()).options.include_captions is False
    config = ExtractConfig.from_settings(Settings({"EXTRACT_CAPTIONS": "True"}))
    assert config.options.include_captions is True


def test_blocks_markup_is_each_blocks_markup() -> None:
    """The markup of a page's blocks, gathered once per shared path prefix, is each block's
    own (``block_markup``), on a page with captions, bylines, times, tables and deep paths."""
    import lxml.html
    from scrapy_maintext.extraction.markup import block_markup, blocks_markup
    from scrapy_maintext.neural.segment import segment

    html = (
        "<html><body><article><figure><img src=a.jpg><figcaption>A <b>cap</b></figcaption>"
        "</figure><div class='byline'>By <a href=/x>Ann Lee</a></div><time>May 2</time>"
        "<table><tr><td>one</td><td>two</td></tr></table>"
        + "<div class='credit'>" * 70
        + "<p>deep</p>"
        + "</div>" * 70
        + "<address>Ann</address><p>text <a href=/y>link</a></p></article></body></html>"
    )
    blocks = segment(lxml.html.document_fromstring(html))
    assert blocks_markup(blocks) == [block_markup(block) for block in blocks]
    assert any(markup.caption for markup in blocks_markup(blocks))


COMMENT = Markup(comments=True)


def test_reader_comments_after_an_articles_body_leave_its_text() -> None:
    """Blocks in a comment section (``#comments``, ``.commentlist``) after an article's body
    leave ``text``; on a page that is not article-like (a forum's thread) they stay."""
    blocks = [Block("p", LONG)] * 3 + [Block("p", "Great piece, thanks!"), Block("p", LONG)]
    marks = [Markup()] * 3 + [COMMENT, COMMENT]
    facts = PageFacts(TITLE)
    assert judge(blocks, facts, marks) == [None] * 3 + [Convention.COMMENTS] * 2
    assert judge(blocks, facts, marks, article=False) == [None] * 5


def test_a_page_whose_posts_all_sit_in_comment_sections_keeps_them() -> None:
    """No article body outside the comment sections (a forum's posts, a page wrapped in an
    element named for comments): nothing is taken as comments."""
    blocks = [Block("p", LONG)] * 4
    assert judge(blocks, PageFacts(TITLE), [COMMENT] * 4) == [None] * 4
    # Two long paragraphs before the thread are not yet an article's body.
    marks = [Markup(), Markup(), COMMENT, COMMENT]
    assert judge(blocks, PageFacts(TITLE), marks) == [None] * 4


def test_comment_sections_are_read_from_class_and_id_words() -> None:
    import lxml.html
    from scrapy_maintext.extraction.markup import blocks_markup
    from scrapy_maintext.neural.segment import segment

    html = (
        "<html><body><article><p>Body</p></article><div id='comments'><ol class='commentlist'>"
        "<li><div class='comment-body'><p>First!</p></div></li></ol></div>"
        "<div id='disqus_thread'><p>Thread</p></div><div class='commentary'><p>Op-ed</p></div>"
        "</body></html>"
    )
    blocks = segment(lxml.html.document_fromstring(html))
    flags = {b.text: m.comments for b, m in zip(blocks, blocks_markup(blocks), strict=True)}
    assert flags == {"Body": False, "First!": True, "Thread": True, "Op-ed": False}
