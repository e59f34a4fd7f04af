"""Never emptier than the fallback (issue 39): when the neural engine's text, under the text
convention, is empty or a sliver of what the page's blocks hold, trafilatura is asked too and
the longer of the two texts is the document's. Rare by construction (it is priced in
models/CHANGELOG.md: how often it runs and what it costs). Scrapy-free.
"""

from __future__ import annotations

#: A text shorter than this may be a collapse; longer ones are never second-guessed.
THIN_CHARS = 200
#: ... when it is also below this share of the characters of the page's blocks.
THIN_SHARE = 0.2


def wants_second_opinion(text_chars: int, page_chars: int) -> bool:
    """Whether a text of ``text_chars`` characters, from a page whose blocks hold
    ``page_chars``, is thin enough to ask trafilatura for its own."""
    if text_chars == 0:
        return page_chars > 0
    return text_chars < THIN_CHARS and text_chars < THIN_SHARE * page_chars


def prefers_other(ours: str, theirs: str) -> bool:
    """Whether the second opinion's text replaces ours: it holds more."""
    return len(theirs.strip()) > len(ours.strip())
