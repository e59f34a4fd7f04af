"""The text a script-built page ships as data, read without a browser (Scrapy-free).

Next.js puts a page's props in ``<script id="__NEXT_DATA__" type="application/json">``,
Nuxt 3 its payload in ``<script id="__NUXT_DATA__">`` (a flat array: every string is an
element of it), Nuxt 2 and many stores assign ``window.__NUXT__`` / ``__INITIAL_STATE__`` /
``__PRELOADED_STATE__`` / ``__APOLLO_STATE__`` a JSON literal, and articles give their text as
JSON-LD ``articleBody``. Each script is read once, up to :data:`MAX_SCRIPT_CHARS` (all of them
up to :data:`MAX_TOTAL_CHARS`); JSON that does not parse (a function call, too deep a
nesting, a number too long) is skipped, never raised.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

import lxml.html
from scrapy_maintext.document import Block
from scrapy_maintext.render.json_text import MIN_BODY_CHARS, best_body, text_blocks

logger = logging.getLogger(__name__)

#: Longest data script read (characters); a longer one is skipped.
MAX_SCRIPT_CHARS = 4_000_000
#: Characters of data scripts read on one page, all together.
MAX_TOTAL_CHARS = 8_000_000
_ASSIGNED = re.compile(
    r"^\s*(?:window\.|self\.|globalThis\.)?"
    r"(__NUXT__|__INITIAL_STATE__|__PRELOADED_STATE__|__APOLLO_STATE__|__INITIAL_DATA__|"
    r"__DATA__|__STATE__|__remixContext)\s*=\s*"
)
_ARTICLE_TYPES = re.compile(r"Article|Posting|Report|CreativeWork|WebPage|Blog", re.I)


class Kind:
    """Where the text came from (``Document.text_source`` is ``embedded:<kind>``)."""

    NEXT_DATA = "next-data"
    NUXT_DATA = "nuxt-data"
    HYDRATION = "hydration-state"
    JSON_DATA = "json-data"
    JSON_LD = "json-ld"


@dataclass(frozen=True)
class EmbeddedText:
    """A body read from a page's data, and which data held it."""

    kind: str
    blocks: list[Block]

    @property
    def chars(self) -> int:
        return sum(len(block.text) for block in self.blocks)


def embedded_text(tree: lxml.html.HtmlElement) -> EmbeddedText | None:
    """The longest body any of the page's data scripts holds (None: none holds one)."""
    best: EmbeddedText | None = None
    budget = MAX_TOTAL_CHARS
    for script in tree.iter("script"):
        source = script.text or ""
        if not source.strip() or len(source) > min(MAX_SCRIPT_CHARS, budget):
            continue
        budget -= len(source)
        found = _read_script(script, source)
        if found is not None and found.blocks and (best is None or found.chars > best.chars):
            best = found
    return best if best is not None and best.chars >= MIN_BODY_CHARS else None


def _read_script(script: lxml.html.HtmlElement, source: str) -> EmbeddedText | None:
    kind_of = (script.get("type") or "").strip().lower()
    ident = script.get("id") or ""
    if kind_of == "application/ld+json":
        return _json_ld(_loads(source))
    if ident == "__NEXT_DATA__":
        data = _loads(source)
        props = data.get("props", data) if isinstance(data, dict) else data
        return _from_json(Kind.NEXT_DATA, props)
    if ident == "__NUXT_DATA__":
        return _nuxt_payload(_loads(source))
    if kind_of == "application/json":
        return _from_json(Kind.JSON_DATA, _loads(source))
    if kind_of in ("", "text/javascript", "application/javascript", "module"):
        assigned = _ASSIGNED.match(source)
        if assigned:
            literal = source[assigned.end() :].strip().rstrip(";").strip()
            return _from_json(Kind.HYDRATION, _loads(literal))
    return None


def _loads(source: str) -> Any:
    """Parsed JSON, or None for anything that is not (hostile nesting included)."""
    try:
        return json.loads(source)
    except (ValueError, RecursionError, MemoryError):
        return None


def _from_json(kind: str, data: Any) -> EmbeddedText | None:
    if data is None:
        return None
    candidate = best_body(data)
    return EmbeddedText(kind, candidate.blocks) if candidate is not None else None


def _nuxt_payload(data: Any) -> EmbeddedText | None:
    """Nuxt 3's payload is flat (devalue): objects point at strings by index, so the strings
    are read where they stand, never resolved (a hostile payload could point each object
    at every other)."""
    if not isinstance(data, list):
        return None
    strings = [value for value in data if isinstance(value, str)]
    return _from_json(Kind.NUXT_DATA, {"strings": strings})


def _json_ld(data: Any) -> EmbeddedText | None:
    """``articleBody`` (or ``text``) of the page's article-like JSON-LD objects."""
    best: list[Block] = []
    for obj in _json_ld_objects(data):
        kinds = obj.get("@type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if not any(isinstance(k, str) and _ARTICLE_TYPES.search(k) for k in kinds):
            continue
        body = obj.get("articleBody") or obj.get("text")
        if isinstance(body, str) and len(body) >= MIN_BODY_CHARS:
            blocks = text_blocks(body)
            if sum(len(b.text) for b in blocks) > sum(len(b.text) for b in best):
                best = blocks
    return EmbeddedText(Kind.JSON_LD, best) if best else None


def _json_ld_objects(data: Any) -> list[dict[str, Any]]:
    """The objects of a JSON-LD script: itself, a list of them, or its ``@graph``."""
    if isinstance(data, list):
        objects = [item for item in data if isinstance(item, dict)]
    elif isinstance(data, dict):
        objects = [data]
    else:
        return []
    graphs = [o["@graph"] for o in objects if isinstance(o.get("@graph"), list)]
    return objects + [item for graph in graphs for item in graph if isinstance(item, dict)]
