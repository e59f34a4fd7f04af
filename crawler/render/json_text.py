"""A page's body out of the JSON it ships: the longest text-like value, with its paragraphs
and headings (Scrapy-free).

Three shapes are read: a string of HTML (``"<p>...</p><h2>...</h2>"``: its block elements
become blocks), a string of plain text or Markdown (blank lines part paragraphs, ``## `` marks
a heading) and a rich-text tree (Contentful, Portable Text, Storyblok, Slate: nodes typed
``paragraph``, ``heading-2``, ``h2``, ``list-item``...). The walk is iterative and bounded:
at most :data:`MAX_NODES` values and :data:`MAX_DEPTH` levels, strings of up to
:data:`MAX_STRING_CHARS` read, so hostile JSON costs no more than its size.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import lxml.html
from lxml import etree
from scrapy_maintext.document import Block

#: Values of a JSON document walked (the rest is not read).
MAX_NODES = 200_000
#: Nesting levels walked.
MAX_DEPTH = 64
#: Longest string turned into blocks (characters); longer ones are cut.
MAX_STRING_CHARS = 1_000_000
#: Fewest characters a body candidate holds.
MIN_BODY_CHARS = 200
#: Keys whose text is a page's body (a candidate under one counts double).
BODY_KEYS = frozenset(
    {
        "articlebody",
        "body",
        "bodyhtml",
        "content",
        "contenthtml",
        "html",
        "markdown",
        "text",
        "richtext",
        "post_content",
        "rendered",
    }
)
_TYPE_KEYS = ("nodeType", "type", "_type", "blockType", "component", "__typename")
_HTML = re.compile(r"<(?:p|h[1-6]|br|li|ul|ol|blockquote|div|section|article)\b[^>]*>", re.I)
_HEADING_TYPE = re.compile(r"^(?:heading|header|title|h)[-_ ]?([1-6])?$", re.I)
_PARAGRAPH_TYPES = frozenset({"paragraph", "p", "block", "text-block", "textblock", "normal"})
_ITEM_TYPES = frozenset({"list-item", "listitem", "list_item", "li"})
_QUOTE_TYPES = frozenset({"blockquote", "quote"})
_CODE_TYPES = frozenset({"code", "code-block", "codeblock", "code_block"})
_HTML_BLOCKS = {"p": "p", "li": "item", "blockquote": "quote", "pre": "code", "tr": "row"}
_MARKDOWN_HEAD = re.compile(r"^(#{1,6})\s+(.*)$")
_MARKDOWN_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+(.*)$")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Candidate:
    """A body found in JSON, and how much it is believed (its characters, doubled under a
    body key)."""

    blocks: list[Block]
    score: int


def best_body(data: Any) -> Candidate | None:
    """The JSON value that reads most like the page's body, as blocks (None: none)."""
    best: Candidate | None = None
    for key, value in _walk(data):
        candidate = _candidate(key, value)
        if candidate is not None and (best is None or candidate.score > best.score):
            best = candidate
    return best


def _walk(data: Any) -> Iterator[tuple[str, Any]]:
    """(key, value) of every value, depth first, within the bounds."""
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    seen = 0
    while stack and seen < MAX_NODES:
        key, value, depth = stack.pop()
        seen += 1
        yield key, value
        if depth >= MAX_DEPTH:
            continue
        if isinstance(value, dict):
            stack.extend((str(k), v, depth + 1) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((key, v, depth + 1) for v in reversed(value))


def _candidate(key: str, value: Any) -> Candidate | None:
    weight = 2 if key.lower() in BODY_KEYS else 1
    if isinstance(value, str) and len(value) >= MIN_BODY_CHARS and _prose(value):
        blocks = text_blocks(value)
        return Candidate(blocks, weight * _chars(blocks)) if blocks else None
    if isinstance(value, list) and value and isinstance(value[0], dict):
        if _node_kind(value[0])[0] is None:
            return None  # not a rich-text list: no second walk of it
        blocks = rich_text_blocks(value)
        chars = _chars(blocks)
        return Candidate(blocks, weight * chars) if chars >= MIN_BODY_CHARS else None
    return None


def _prose(text: str) -> bool:
    """Text with words (not a URL, a token or base64): a space every 20 characters."""
    head = text[:2000]
    return head.count(" ") * 20 >= len(head)


def _chars(blocks: list[Block]) -> int:
    return sum(len(block.text) for block in blocks)


def text_blocks(text: str) -> list[Block]:
    """Blocks of a string of HTML, or of plain text or Markdown."""
    text = text[:MAX_STRING_CHARS]
    if _HTML.search(text[:5000]):
        return html_blocks(text)
    blocks = []
    for part in re.split(r"\n\s*\n|\r\n\s*\r\n", text):
        for line in part.split("\n") if _MARKDOWN_HEAD.match(part) else [part]:
            block = _line_block(_SPACE.sub(" ", line).strip())
            if block is not None:
                blocks.append(block)
    return blocks


def _line_block(line: str) -> Block | None:
    if not line:
        return None
    head = _MARKDOWN_HEAD.match(line)
    if head:
        return Block("head", head.group(2).strip(), level=len(head.group(1)))
    item = _MARKDOWN_ITEM.match(line)
    return Block("item", item.group(1)) if item else Block("p", line)


def html_blocks(html: str) -> list[Block]:
    """The block elements of an HTML fragment (innermost ones), in order."""
    try:
        root = lxml.html.fragment_fromstring(html, create_parent="div")
    except (etree.ParserError, ValueError):
        return []
    blocks = []
    for element in root.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        kind = "head" if re.fullmatch(r"h[1-6]", tag) else _HTML_BLOCKS.get(tag)
        if kind is None or _holds_blocks(element):
            continue
        text = _SPACE.sub(" ", element.text_content()).strip()
        if text:
            level = int(tag[1]) if kind == "head" else 0
            blocks.append(Block(kind, text, level=level))
    if not blocks:
        text = _SPACE.sub(" ", root.text_content()).strip()
        return [Block("p", text)] if text else []
    return blocks


def _holds_blocks(element: lxml.html.HtmlElement) -> bool:
    # A list item or quote holding paragraphs gives them, not itself (the walk is over the
    # fragment once; the check looks at children only).
    return any(child.tag in _HTML_BLOCKS or child.tag in ("h2", "h3", "h4") for child in element)


def rich_text_blocks(nodes: list[Any]) -> list[Block]:
    """Blocks of a rich-text tree's nodes (typed dicts), in order."""
    blocks: list[Block] = []
    stack: list[tuple[Any, int]] = [(node, 0) for node in reversed(nodes)]
    seen = 0
    while stack and seen < MAX_NODES:
        node, depth = stack.pop()
        seen += 1
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            continue
        kind, level = _node_kind(node)
        if kind is not None:
            text = _SPACE.sub(" ", "".join(_leaf_strings(node))).strip()
            if text:
                blocks.append(Block(kind, text, level=level))
            continue
        children = node.get("content") or node.get("children")
        if isinstance(children, list):
            stack.extend((child, depth + 1) for child in reversed(children))
    return blocks


def _node_kind(node: dict[str, Any]) -> tuple[str | None, int]:
    name: str = next((node[k] for k in _TYPE_KEYS if isinstance(node.get(k), str)), "")
    style = node.get("style")
    style = style if isinstance(style, str) else ""
    for label in (style, name):
        heading = _HEADING_TYPE.match(label)
        if heading:
            level = heading.group(1) or _attribute_level(node)
            return "head", int(level)
    lowered = name.lower()
    if lowered in _PARAGRAPH_TYPES:
        return "p", 0
    if lowered in _ITEM_TYPES:
        return "item", 0
    if lowered in _QUOTE_TYPES:
        return "quote", 0
    if lowered in _CODE_TYPES:
        return "code", 0
    return None, 0


def _attribute_level(node: dict[str, Any]) -> int:
    attrs = node.get("attrs")
    attrs = attrs if isinstance(attrs, dict) else node
    level = attrs.get("level", attrs.get("depth", 2))
    return level if isinstance(level, int) and 1 <= level <= 6 else 2


def _leaf_strings(node: Any) -> Iterator[str]:
    """The text of a node's leaves (``text``/``value`` strings), bounded like the walk."""
    stack = [node]
    seen = 0
    while stack and seen < MAX_NODES:
        value = stack.pop()
        seen += 1
        if isinstance(value, dict):
            for key in ("text", "value"):
                if isinstance(value.get(key), str):
                    yield value[key][:MAX_STRING_CHARS]
            children = value.get("content") or value.get("children")
            if isinstance(children, list):
                stack.extend(reversed(children[:MAX_NODES]))
        elif isinstance(value, list):
            stack.extend(reversed(value[:MAX_NODES]))
