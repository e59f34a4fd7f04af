"""The authors of a page as a list of names, out of the author string the metadata chose.

JSON-LD author lists arrive joined ("Anna Maier, Ben Roe"), trafilatura joins with "; ",
bylines write "By Anna Maier and Ben Roe" or "Von Anna Maier und Ben Roe": :func:`split_authors`
gives ["Anna Maier", "Ben Roe"], without the byline's lead word, a trailing social-network
link text or an empty part. Scrapy-free.
"""

from __future__ import annotations

import re

from scrapy_maintext.fields.structured import MAX_AUTHORS

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
#: A domain name in an author string ("mdr.de", "Deutsche Welle (www.dw.com)").
_DOMAIN = re.compile(r"\b[\w-]+\.(?:[a-z]{2,3}|info|news|online)\b", re.I)
_NON_WORD = re.compile(r"[\W_]+")
#: Host name labels that name no publisher.
_HOST_WORDS = frozenset({"www", "m", "amp", "news", "com", "co", "org", "net"})


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


def is_publisher(author: str | None, sitename: str | None, hostname: str | None) -> bool:
    """Whether an author string names the site rather than a person: it holds a domain name,
    or it and the site's name (or its host name's main label) contain one another."""
    if not author:
        return False
    if _DOMAIN.search(author):
        return True
    name = _key(author)
    if not name:
        return False
    site = _key(sitename or "")
    if site and (site in name or name in site):
        return True
    labels = [w for w in (hostname or "").lower().split(".")[:-1] if w not in _HOST_WORDS]
    return any(len(_key(label)) >= 2 and _key(label) in name for label in labels)


def _key(text: str) -> str:
    return _NON_WORD.sub("", text.casefold())
