"""The text convention (docs/formats.md), applied to every engine's blocks.

``text`` is the body a reader would call the document. The headline, bylines, datelines,
captions and known page furniture (share bars, advertisement labels, newsletter, consent and
paywall notices, teaser lead-ins) are not: :func:`judge` names, per block, the part of the
convention that removes it, or None. The title and author have their own fields; a byline
found only in the body gives the author (:func:`byline_author`).

Decisions read the block's words and place (before the first long paragraph or after the
last one) and, for the neural engine, what the markup says of it (``extraction.markup``:
inside a ``<figcaption>``, an element named "byline", a ``<time>``, a comment section).
On an article, reader comments after its body are not its text either. Scrapy-free.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from scrapy_maintext.document import Block
from scrapy_maintext.extraction.markup import Markup
from scrapy_maintext.extraction.phrases import Phrases, line_key, shipped_phrases
from scrapy_maintext.extraction.words import line_key as words_key
from scrapy_maintext.extraction.words import tokens


class Convention(enum.Enum):
    """Why a block is not ``text`` although an engine kept it."""

    TITLE = "title"
    BYLINE = "byline"
    DATELINE = "dateline"
    CAPTION = "caption"
    FURNITURE = "furniture"
    #: Reader comments after an article's body (``Markup.comments``).
    COMMENTS = "comments"


@dataclass(frozen=True)
class PageFacts:
    """What the convention compares blocks with: the page's title and authors."""

    title: str | None = None
    authors: tuple[str, ...] = ()

    @classmethod
    def of(cls, title: str | None, author: str | None) -> PageFacts:
        """The facts of a page whose title and ``Document.author`` ("A; B") are these."""
        return cls(title, tuple(a.strip() for a in (author or "").split(";") if a.strip()))


#: A paragraph this long is body text: bylines and datelines sit before the first one or
#: after the last one.
LONG_WORDS = 25
#: Blocks at the top that may repeat the title even before any long paragraph is seen.
TITLE_WINDOW = 4
BYLINE_MAX_WORDS = 12
DATELINE_MAX_WORDS = 16
MARKED_DATELINE_MAX_WORDS = 25
CAPTION_MAX_WORDS = 60
#: An article page has at least this many long paragraphs: after its last one, a block that
#: is all link is a teaser (a listing page, all links, has none).
ARTICLE_LONG_PARAGRAPHS = 3
#: The parts of the convention that apply to article-like pages only (``judge``'s
#: ``article``), with the teaser rule.
ARTICLE_RULES = frozenset(
    {Convention.BYLINE, Convention.DATELINE, Convention.CAPTION, Convention.COMMENTS}
)
CREDIT_MAX_WORDS = 40
#: Words a headline block may add after the title (a site's name: "Headline - The Times").
SITE_NAME_MAX_WORDS = 6


def _wordlist(words: str) -> tuple[str, ...]:
    return tuple(words.split())


_MONTHS = _wordlist(
    "jan january januar janvier enero gennaio januari janeiro feb february februar fevrier "
    "février febrero febbraio februari fevereiro mar march märz maerz mars marzo maart março "
    "apr april avril abril aprile mai may mayo maggio mei maio jun june juni juin junio giugno "
    "junho jul july juli juillet julio luglio julho aug august août aout agosto augustus sep "
    "sept september septembre septiembre settembre setembro oct october oktober octobre "
    "octubre ottobre outubro nov november novembre noviembre novembro dec december dezember "
    "décembre decembre diciembre dicembre dezembro"
)
_TIME_WORDS = _wordlist(
    "uhr am pm utc gmt est edt cet cest mez mesz bst pst pdt h hrs hours hour ago min mins "
    "minutes minute minuten stunden stunde vor heute gestern today yesterday aujourd hui hier "
    "monday tuesday wednesday thursday friday saturday sunday montag dienstag mittwoch "
    "donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi samedi dimanche"
)
#: Words that announce a date or a reading time ("Stand:", "Publié le", "4 min read").
_DATE_MARKERS = _wordlist(
    "stand updated update published posted publié publie mis à jour veröffentlicht "
    "aktualisiert lesedauer read reading time lecture publicado actualizado pubblicato "
    "aggiornato gepubliceerd bijgewerkt online seit modified erstellt geändert"
)
_DATE_FILLER = _wordlist("le la à a um am on at the of de del di den der des et and dem")
_DATE_WORDS = frozenset((*_MONTHS, *_TIME_WORDS, *_DATE_MARKERS, *_DATE_FILLER))
#: The words that announce a date on their own. Not the filler and the other words of
#: several-word markers ("mis à jour", "online seit"): "à" or "seit" opens body sentences
#: ("Seit 2019 gibt es drei Linien").
_MARKERS = (
    frozenset(_DATE_MARKERS)
    - frozenset(_DATE_FILLER)
    - {"read", "time", "update", "lecture", "jour", "seit"}
)
_BYLINE_LEADS = (
    "by", "von", "par", "por", "di", "door", "av", "af", "od", "text", "texte", "written by",
    "reporting by", "autor", "auteur", "author", "redaktion",
)  # fmt: skip
_CREDIT_LEADS = (
    "reporting by", "additional reporting by", "writing by", "editing by", "compiled by",
    "mit material von", "mit informationen von", "avec afp", "avec reuters", "con información de",
)  # fmt: skip
#: A written date or time: 08.07.2026, 2026-07-08, 8/7/26, 05:00, 14h52.
_DATE = re.compile(
    r"\b(?:\d{1,2}[./]\s?\d{1,2}[./]\s?\d{2,4}|\d{4}-\d{2}-\d{2}|\d{1,2}[:h]\d{2})\b"
)
_CAPTION_OPENINGS = re.compile(
    r"^(?:©|\(c\)|foto:|photo:|bild:|image:|fotó:|crédit|credit:|credits:|copyright)", re.I
)
_CAPTION_CLOSING = re.compile(r"(?:©[^.]{0,80}|\((?:photo|foto|bild|image)[^)]{0,80}\))$", re.I)


def judge(
    blocks: Sequence[Block],
    facts: PageFacts,
    markup: Sequence[Markup] | None = None,
    phrases: Phrases | None = None,
    captions: bool = False,
    article: bool = True,
) -> list[Convention | None]:
    """Per block, the part of the convention that takes it out of ``text``, or None. With
    ``captions`` (``EXTRACT_CAPTIONS``), captions stay: no block is judged a caption. On a
    page that is not article-like (``article`` False: ``extraction.page_type``), only the
    headline and the furniture lines leave: the bylines, datelines, captions and teasers of
    a listing, a collection or a forum index are its items (``ARTICLE_RULES``)."""
    phrases = phrases or shipped_phrases()
    words = [tokens(b.text) for b in blocks]
    long = [i for i, w in enumerate(words) if len(w) >= LONG_WORDS and blocks[i].kind != "head"]
    first_long = long[0] if long else len(blocks)
    last_long = long[-1] if long else -1
    title = tokens(facts.title)
    names = _name_words(facts.authors)
    teasers = article and len(long) >= ARTICLE_LONG_PARAGRAPHS
    thread = comments_start(long, markup) if article else None
    verdicts: list[Convention | None] = []
    for i, block in enumerate(blocks):
        place = Place(head=i < first_long, edge=i < first_long or i > last_long)
        place.top = i < TITLE_WINDOW
        mark = markup[i] if markup is not None and i < len(markup) else Markup()
        verdict = _judge_block(block, words[i], place, title, names, mark, phrases, article)
        if verdict is None and thread is not None and i >= thread and mark.comments:
            verdict = Convention.COMMENTS
        if verdict is None and teasers and i > last_long and mark.linked:
            # After an article's last paragraph, a block that is all link: a teaser.
            verdict = Convention.FURNITURE
        verdicts.append(None if captions and verdict is Convention.CAPTION else verdict)
    return verdicts


def comments_start(long: Sequence[int], markup: Sequence[Markup] | None) -> int | None:
    """Where an article's reader comments may start: after the article's body, that is
    :data:`ARTICLE_LONG_PARAGRAPHS` long paragraphs outside any comment section; None on a
    page without them (one whose posts all sit in comment sections, a forum's)."""
    if not markup:
        return None
    body = [i for i in long if i < len(markup) and not markup[i].comments]
    if len(body) < ARTICLE_LONG_PARAGRAPHS:
        return None
    return body[ARTICLE_LONG_PARAGRAPHS - 1] + 1


@dataclass
class Place:
    """Where a block stands: before the first long paragraph (``head``), outside the run of
    long paragraphs (``edge``), among the first blocks (``top``)."""

    head: bool
    edge: bool
    top: bool = False


def _judge_block(
    block: Block,
    words: list[str],
    place: Place,
    title: list[str],
    names: frozenset[str],
    mark: Markup,
    phrases: Phrases,
    article: bool = True,
) -> Convention | None:
    head, edge, top = place.head, place.edge, place.top
    if not words:
        return None
    if (head or top or (block.kind == "head" and block.level == 1)) and is_title(words, title):
        return Convention.TITLE
    if block.kind in ("row", "code") or mark.table:
        return None
    if not article:
        return Convention.FURNITURE if phrases.is_furniture(words_key(words)) else None
    if _is_caption(block.text, len(words), mark):
        return Convention.CAPTION
    if edge and (_is_byline(block.text, words, names, mark) or _is_credit(words)):
        return Convention.BYLINE
    if block.kind != "item" and _is_dateline(block.text, words, names, mark, edge):
        return Convention.DATELINE
    if phrases.is_furniture(words_key(words)):
        return Convention.FURNITURE
    return None


def is_title(words: list[str], title: list[str]) -> bool:
    if not title:
        return False
    if words == title:
        return True
    # "Headline | Site" titles, or a headline with the site's name after it; not a paragraph
    # that merely opens with a short title's words.
    if len(words) < 4 or len(words) > len(title) + SITE_NAME_MAX_WORDS:
        return False
    return title[: len(words)] == words or words[: len(title)] == title


def _is_caption(text: str, n: int, mark: Markup) -> bool:
    if n > CAPTION_MAX_WORDS:
        return False
    if mark.caption:
        return True
    stripped = text.strip()
    return bool(_CAPTION_OPENINGS.match(stripped) or _CAPTION_CLOSING.search(stripped))


def _is_byline(text: str, words: list[str], names: frozenset[str], mark: Markup) -> bool:
    n = len(words)
    if mark.byline and n <= 2 * BYLINE_MAX_WORDS:
        return True
    if n > BYLINE_MAX_WORDS:
        return False
    if names and sum(w in names for w in words) >= max(2, (n + 1) // 2):
        return True
    lead = _byline_lead(words_key(words))
    if lead is None:
        return False
    after = text.strip()[len(lead) :].lstrip(" :")
    return after[:1].isupper()


def _byline_lead(key: str) -> str | None:
    """The byline opening ("by", "von", "written by") a line's key starts with, if any."""
    return next((lead for lead in _BYLINE_LEADS if key.startswith(lead + " ")), None)


def _is_credit(words: list[str]) -> bool:
    """An agency or editing credit: "Reporting by ...; Editing by ...", "Mit Material von"."""
    if len(words) > CREDIT_MAX_WORDS:
        return False
    key = words_key(words)
    return any(key.startswith(lead + " ") for lead in _CREDIT_LEADS)


def _is_dateline(
    text: str, words: list[str], names: frozenset[str], mark: Markup, edge: bool
) -> bool:
    """A date line: outside the body's run (``edge``) it may name its source; inside it, only
    a line that is all date, marked ("Stand: 08.07.2026 05:00 Uhr, Lesedauer 4 Minuten")."""
    n = len(words)
    if mark.time and n <= DATELINE_MAX_WORDS and edge:
        return True
    if n > MARKED_DATELINE_MAX_WORDS:
        # Settled before scanning the words: most blocks are longer than any date line.
        return False
    numbers = [w for w in words if _numeric(w)]
    dated = bool(_DATE.search(text)) or bool(numbers) or any(w in _MONTHS for w in words)
    if not dated:
        return False
    other = [w for w in words if not (_numeric(w) or w in _DATE_WORDS or w in names)]
    if any(w in _MARKERS for w in words):
        # "Yasmine Hassan · CBC News · Posted: Aug 08, 2024": a marked date line may name
        # its source; one that names the author is a byline wherever it stands.
        signed = any(w in names for w in words)
        return len(other) <= (5 if edge or signed else 0)
    if not edge or n > DATELINE_MAX_WORDS or len(other) > 1:
        return False
    # One other word beside a date ("Tuesday 14:52 Politics"), but not beside one bare
    # number, which is a count ("Tyres: 17", "2 comments").
    return not other or len(numbers) > 1 or any(w in _MONTHS or _year(w) for w in words)


def _name_words(authors: Sequence[str]) -> frozenset[str]:
    return frozenset(w for a in authors for w in tokens(a) if len(w) > 1)


def apply(
    blocks: list[Block],
    facts: PageFacts,
    markup: Sequence[Markup] | None = None,
    captions: bool = False,
    phrases: Phrases | None = None,
    article: bool = True,
) -> tuple[list[Block], list[Convention | None]]:
    """``blocks`` without those the convention takes out, and the verdict of every block
    (captions kept with ``captions``; ``phrases``: other furniture lines than the package's;
    ``article``: whether the article rules apply, :func:`judge`)."""
    verdicts = judge(blocks, facts, markup, phrases, captions, article)
    return [b for b, v in zip(blocks, verdicts, strict=True) if v is None], verdicts


def byline_author(blocks: Sequence[Block], verdicts: Sequence[Convention | None]) -> str | None:
    """The name a body byline gives ("By Jane Doe" -> "Jane Doe"), for a page whose metadata
    names no author."""
    for block, verdict in zip(blocks, verdicts, strict=True):
        if verdict is not Convention.BYLINE:
            continue
        text = " ".join(block.text.split())
        lead = _byline_lead(line_key(text))
        if lead is None:
            continue
        name = text[len(lead) :].lstrip(" :")
        name = re.split("\\s[|\u00b7\u2022\u2013\u2014-]\\s|,\\s", name)[0].strip()
        if 1 <= len(name.split()) <= 5:
            return name
    return None


def _year(word: str) -> bool:
    return len(word) == 4 and word.isdigit() and word[:2] in ("19", "20")


def _numeric(word: str) -> bool:
    """A number or a time such as "14h52"."""
    # No character is both a letter and a digit: a word of letters (most words) is settled
    # without a look at each character.
    return not word.isalpha() and any(c.isdigit() for c in word)
