"""Page furniture known by its words, in many languages: share bars, advertisement labels,
newsletter and paywall notices, teaser lead-ins ("Read more:", "Lire aussi :").

Two lists, both in ``phrases.json`` beside this module:

* ``lines``: whole blocks that are furniture, as :func:`line_key` writes them (its tokens,
  digits as 0). Learnt from the training sets' pages by
  ``python -m scrapy_maintext.models.phrases`` (lines that recur on several sites and are
  almost never part of a ground truth), plus the hand-written seed in that module.
* ``leads``: openings of a teaser or a notice; a short block that starts with one is dropped.

Scrapy-free; read once per process.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from scrapy_maintext.extraction.words import line_key as words_key
from scrapy_maintext.extraction.words import tokens

PHRASES_FILE = Path(__file__).resolve().parent / "phrases.json"
#: Longest block (in words) a lead-in can open: a teaser is one headline, not a paragraph.
LEAD_MAX_WORDS = 30
#: Longest block (in words) looked up in the line list.
LINE_MAX_WORDS = 40


def line_key(text: str) -> str:
    """The form a line is looked up by: its tokens (``extraction.words``), digits as 0."""
    return words_key(tokens(text))


@dataclass(frozen=True)
class Phrases:
    lines: frozenset[str]
    leads: tuple[str, ...]

    def is_furniture(self, key: str) -> bool:
        """Whether the whole block (by its :func:`line_key`) is a known furniture line or a
        short teaser/notice."""
        if not key:
            return False
        words = key.count(" ") + 1
        if words <= LINE_MAX_WORDS and key in self.lines:
            return True
        return words <= LEAD_MAX_WORDS and self.leads_with(key)

    def leads_with(self, key: str) -> bool:
        return key in self._lead_set or key.startswith(self._lead_openings)

    @functools.cached_property
    def _lead_set(self) -> frozenset[str]:
        return frozenset(self.leads)

    @functools.cached_property
    def _lead_openings(self) -> tuple[str, ...]:
        """Each lead and the space after it, for one C-level ``str.startswith``."""
        return tuple(lead + " " for lead in self.leads)

    @classmethod
    def from_json(cls, data: dict[str, list[str]]) -> Phrases:
        lines = frozenset(line_key(x) for x in data.get("lines", []) if line_key(x))
        leads = tuple(sorted({line_key(x) for x in data.get("leads", []) if line_key(x)}))
        return cls(lines, leads)


@functools.cache
def shipped_phrases() -> Phrases:
    """The package's lists (``phrases.json``); empty when the file is missing or broken, so
    extraction never fails for it."""
    try:
        return Phrases.from_json(json.loads(PHRASES_FILE.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, AttributeError):
        return Phrases(frozenset(), ())
