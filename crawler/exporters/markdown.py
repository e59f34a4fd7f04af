"""Markdown output: each document a section (``# title``, a few metadata lines, its body).

Built from the same blocks as TEI: headings as ``#`` (the top ones one level below the
document's title), paragraphs, lists (nested by the items' depth), GitHub pipe tables
(first row as header), fenced code and ``>`` quotes. Text is kept as extracted: only what
would change the block structure is escaped (a paragraph that starts like a heading, a list
or a quote; ``|`` in a table cell), not inline ``*`` or ``_``, which corpora want as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from scrapy_maintext.document import Block, Image
from scrapy_maintext.exporters.records import images_before, text_of, to_record
from scrapy_maintext.exporters.txt import TxtItemExporter

#: Metadata lines of a document's header: (label, record key).
HEADER_FIELDS = (
    ("URL", "url"),
    ("Author", "author"),
    ("Date", "date"),
    ("Date-Modified", "date_modified"),
    ("Language", "language"),
    ("Language-Confidence", "language_confidence"),
)
#: A line that Markdown would read as a block marker (heading, quote, bullet, rule or setext
#: underline, fence, HTML), escaped with a backslash before its first character.
_BLOCK_START = re.compile(
    r"^(\s*)(?=#{1,6}(\s|$)|>|[-+*](\s|$)|[-*_=][-*_=\s]{2,}$|`{3}|~{3}|<[A-Za-z/!?])"
)
#: An ordered list marker: its ``.`` or ``)`` escaped.
_ORDERED_START = re.compile(r"^(\s*\d{1,9})([.)])(?=\s|$)")
_BACKTICKS = re.compile(r"`+")
_AUTOLINK_UNSAFE = re.compile(r"[\s<>]")


def markdown_document(item: Any) -> str:
    """One document: ``# title``, its metadata lines, its body; ends with a blank line."""
    record = to_record(item)
    title = _one_line(record.get("title") or record.get("url") or "Untitled")
    lines = [f"# {_escape_line(title)}", ""]
    meta = [
        f"{label}: <{_autolink(str(value))}>"
        if key == "url"
        else f"{label}: {_one_line(str(value))}"
        for label, key in HEADER_FIELDS
        if (value := record.get(key)) not in (None, "")
    ]
    if meta:
        # Backslash line ends: hard breaks, so the lines stay lines when rendered.
        lines += ["\\\n".join(meta), ""]
    blocks = record["body"] or [Block("p", line) for line in text_of(record).splitlines()]
    images: list[Image] = record["images"] if record["body"] else []
    if blocks and blocks[0].kind == "head" and _one_line(blocks[0].text) == title:
        blocks = blocks[1:]  # the page's own h1 is the section's title already
        images = [replace(image, position=max(image.position - 1, 0)) for image in images]
    # The body's top headings one level below the title: ``##``.
    levels = [block.level or 2 for block in blocks if block.kind == "head"]
    body = markdown_body(blocks, max(0, 2 - min(levels, default=2)), images)
    if body:
        lines += [body, ""]
    comments = record.get("comments")
    if isinstance(comments, str) and comments.strip():
        paragraphs = [_escape_line(line) for line in comments.splitlines() if line.strip()]
        lines += ["## Comments", "", "\n\n".join(paragraphs), ""]
    return "\n".join(lines) + "\n"


def markdown_body(
    blocks: list[Block], heading_offset: int = 0, images: Sequence[Image] = ()
) -> str:
    """The blocks as Markdown, each image before the block it stands before (one inside a
    list or table before it); headings ``heading_offset`` levels deeper (at most 6)."""
    parts: list[str] = []
    index = 0
    while index < len(blocks):
        block = blocks[index]
        end = index + 1
        if block.kind in ("item", "row"):
            while end < len(blocks) and blocks[end].kind == block.kind:
                end += 1
        parts += [markdown_image(image) for image in images_before(images, index, end, False)]
        group = blocks[index:end]
        if block.kind == "item":
            parts.append(_list(group))
        elif block.kind == "row":
            parts.append(_table(group))
        else:
            parts.append(_block(block, heading_offset))
        index = end
    last = images_before(images, len(blocks), len(blocks), True)
    parts += [markdown_image(image) for image in last]
    return "\n\n".join(part for part in parts if part)


def markdown_image(image: Image) -> str:
    """``![alt](url "caption")``, and the credit in italics on the next line."""
    alt = _one_line(image.alt or "").replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    title = ""
    if image.caption:
        caption = _one_line(image.caption).replace("\\", "\\\\").replace('"', '\\"')
        title = f' "{caption}"'
    url = _autolink(image.url)
    if "(" in url or ")" in url:
        url = f"<{url}>"
    line = f"![{alt}]({url}{title})"
    if image.credit:
        line += f"\\\n*{_escape_inline(_one_line(image.credit))}*"
    return line


def _escape_inline(text: str) -> str:
    """Text inside ``*...*``: its own ``*``, ``_`` and backslashes escaped."""
    return re.sub(r"([\\*_])", r"\\\1", text)


def _block(block: Block, heading_offset: int) -> str:
    if block.kind == "head":
        level = min((block.level or 2) + heading_offset, 6)
        return f"{'#' * level} {_escape_line(_one_line(block.text))}"
    if block.kind == "code":
        return _fenced(block.text)
    if block.kind == "quote":
        return "\n".join(f"> {_escape_line(line)}".rstrip() for line in block.text.splitlines())
    return "\n".join(_escape_line(line) for line in block.text.splitlines())


def _list(items: list[Block]) -> str:
    """Items as a bulleted list, indented by their depth (never deeper than the item before
    plus one, which Markdown could not nest)."""
    lines, depth = [], -1
    for item in items:
        depth = min(max(item.level, 0), depth + 1)
        lines.append(f"{'  ' * depth}- {_escape_line(_one_line(item.text))}")
    return "\n".join(lines)


def _table(rows: list[Block]) -> str:
    cells = [list(row.cells) if row.cells else [row.text] for row in rows]
    width = max(len(row) for row in cells)
    lines = []
    for number, row in enumerate(cells):
        padded = [_cell(cell) for cell in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(padded) + " |")
        if number == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


def _cell(text: str) -> str:
    return _one_line(text).replace("\\", "\\\\").replace("|", "\\|")


def _fenced(code: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{code.strip(chr(10))}\n{fence}"


def _escape_line(line: str) -> str:
    line = _ORDERED_START.sub(r"\1\\\2", line, count=1)
    return _BLOCK_START.sub(r"\1\\", line, count=1)


def _autolink(url: str) -> str:
    """A URL that stays one autolink: ``<``, ``>`` and spaces percent-encoded."""
    return _AUTOLINK_UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), url)


def _one_line(text: str) -> str:
    return " ".join(text.split())


_FENCE = re.compile(rb"^(`{3,}|~{3,})")


def section_starts(data: bytes) -> list[int]:
    """Offsets of the documents' ``# `` title lines in a Markdown corpus (a body's headings
    are ``##`` or deeper; ``#`` lines inside fenced code do not count)."""
    starts, fence, position = [], b"", 0
    for line in data.splitlines(keepends=True):
        match = _FENCE.match(line)
        if fence and line.rstrip().startswith(fence) and not line.strip(b"`~ \r\n"):
            fence = b""
        elif not fence and match:
            fence = match.group(1)
        elif not fence and line.startswith(b"# "):
            starts.append(position)
        position += len(line)
    return starts


class MarkdownItemExporter(TxtItemExporter):
    """Feed exporter ``markdown`` (also ``md``): one section per item."""

    render = staticmethod(markdown_document)
