"""The authors of a page as a list of names, out of the author string the metadata chose.

JSON-LD author lists arrive joined ("Anna Maier, Ben Roe"), trafilatura joins with "; ",
bylines write "By Anna Maier and Ben Roe" or "Von Anna Maier und Ben Roe": :func:`split_authors`
gives ["Anna Maier", "Ben Roe"], without the byline's lead word, a trailing social-network
link text or an empty part. Scrapy-free.
"""

from __future__ import annotations

import re

from scrapy_maintext.extraction.structured import MAX_AUTHORS

#: Words that join two names, in the languages of the developer pages.
_JOINS = (
    "and", "und", "et", "y", "e", "en", "og", "och", "ja", "és", "i", "a", "ve", "və", "и",
    "та", "&", "+", "/",
)  # fmt: skip
_SEPARATOR = re.compile(
    "\\s*(?:[;,|\u00b7\u2022\u3001\uff0c]|\\s(?:" + "|".join(map(re.escape, _JOINS)) + ")\\s)\\s*"
)
#: A byline's opening word(s), left out of the first name.
_LEAD = re.compile(
    r"^(?i:(?:written|words|text|reporting|story|photos?|fotos?)\s+)?"
    r"(?:(?i:by|von|par|por|text|texte|autor|auteur|author)|di|door|av|af|od)\s*:?\s+"
)
#: Link texts that follow a name in a byline ("Sarah Lazare Twitter").
_SOCIAL = re.compile(
    r"\s+(?i:twitter|x|facebook|linkedin|instagram|email|e-mail|mail|bluesky|threads)$"
)
MAX_NAME_CHARS = 80


def split_authors(value: str | None) -> list[str]:
    """The names in an author string, in order, without duplicates (at most ``MAX_AUTHORS``)."""
    if not value:
        return []
    text = _LEAD.sub("", " ".join(value.split()), count=1)
    names: list[str] = []
    for part in _SEPARATOR.split(text):
        name = _SOCIAL.sub("", part.strip(" .:-\u2013\u2014"))
        if not name or len(name) > MAX_NAME_CHARS or not any(c.isalpha() for c in name):
            continue
        if name.casefold() not in (n.casefold() for n in names):
            names.append(name)
    return names[:MAX_AUTHORS]
