"""Markdown output: each document a section (``# title``, a few metadata lines, its body).

Built from the same blocks as TEI: headings as ``#`` (the top ones one level below the
document's title), paragraphs, lists (nested by the items' depth), GitHub pipe tables
(first row as header), fenced code and ``>`` quotes. A page's text stays text: every
character that CommonMark or GitHub's Markdown would read as inline markup (code spans,
emphasis, links and images, raw HTML, autolinks, entity references, tables, strikethrough)
is backslash-escaped, and so is whatever would open a block at a line's start, so a renderer
shows the page's words and nothing the page did not have. Only our own structure is markup;
a picture's line stays one image whatever its alt text, caption and URL hold, and only
``http(s)`` URLs become links or images. Plain text, JSON and TEI keep the text unescaped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import quote, urlsplit

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
#: Characters that open inline markup in CommonMark or GitHub's Markdown: a backslash (it
#: would escape what follows), code spans, emphasis, strikethrough, links and images, raw
#: HTML and autolinks, entity references, table cells, a heading's closing ``#``.
_INLINE = re.compile(r"([\\`*_~\[\]<>&|#])")
#: A character that opens a block at a line's start and is not escaped inline: a list
#: bullet, a setext underline (``=``, ``-``), a thematic break.
_BLOCK_START = re.compile(r"^(?=[-+=])")
#: An ordered list marker: its ``.`` or ``)`` escaped.
_ORDERED_START = re.compile(r"^(\d{1,9})([.)])")
_BACKTICKS = re.compile(r"`+")
#: A URL character that may not stand unencoded (RFC 3986 allows the rest and ``%``).
_URL_UNSAFE = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")
_LINK_SCHEMES = ("http", "https")


def markdown_document(item: Any) -> str:
    """One document: ``# title``, its metadata lines, its body; ends with a blank line."""
    record = to_record(item)
    title = _one_line(record.get("title") or record.get("url") or "Untitled")
    lines = [f"# {_escape_line(title)}", ""]
    meta = [
        f"{label}: {_meta_value(key, str(value))}"
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


def _meta_value(key: str, value: str) -> str:
    return _url_line(value) if key == "url" else _escape_inline(_one_line(value))


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
    """``![alt](<url> "caption")``, and the credit in italics on the next line; a picture
    whose URL is not ``http(s)`` keeps its caption and credit as text, with no image."""
    url = _http_url(image.url)
    if url is None:
        words = [_one_line(image.caption or ""), _one_line(image.credit or "")]
        return _escape_line(" ".join(word for word in words if word))
    title = ""
    if image.caption:
        title = ' "' + _escape_inline(_one_line(image.caption)).replace('"', '\\"') + '"'
    # In a link destination an entity's ``&`` would be decoded: escaped.
    url = url.replace("&", "\\&")
    line = f"![{_escape_inline(_one_line(image.alt or ''))}](<{url}>{title})"
    credit = _escape_inline(_one_line(image.credit or ""))
    if credit:
        line += f"\\\n*{credit}*"
    return line


def _escape_inline(text: str) -> str:
    """Text that renders as itself inside a paragraph, a heading, an image's alt text or
    title, or ``*...*``: every inline markup character backslash-escaped."""
    return _INLINE.sub(r"\\\1", text)


def _http_url(url: str) -> str | None:
    """An ``http(s)`` URL percent-encoded where RFC 3986 does not allow the character (so it
    holds no space, ``<``, ``>``, quote, backquote or backslash); None for any other scheme."""
    url = url.strip()
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    if scheme not in _LINK_SCHEMES:
        return None
    return _URL_UNSAFE.sub(lambda match: quote(match.group(), safe=""), url)


def _url_line(url: str) -> str:
    """The document's URL: an autolink where it is ``http(s)``, else text."""
    link = _http_url(url)
    return f"<{link}>" if link else _escape_inline(_one_line(url))


def _block(block: Block, heading_offset: int) -> str:
    if block.kind == "head":
        level = min((block.level or 2) + heading_offset, 6)
        return f"{'#' * level} {_escape_line(_one_line(block.text))}"
    if block.kind == "code":
        return _fenced(block.text)
    if block.kind == "quote":
        lines = [line for line in block.text.splitlines() if line.strip()]
        return "\n".join(f"> {_escape_line(line)}" for line in lines)
    return "\n".join(_escape_line(line) for line in block.text.splitlines() if line.strip())


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
    return _escape_inline(_one_line(text))


def _fenced(code: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{code.strip(chr(10))}\n{fence}"


def _escape_line(line: str) -> str:
    """One line of text that renders as itself: no indentation (it would make code) or
    trailing spaces (a line break), inline markup escaped, and no block opened."""
    line = _escape_inline(line.strip())
    line = _ORDERED_START.sub(r"\1\\\2", line, count=1)
    return _BLOCK_START.sub("\\\\", line, count=1)


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
