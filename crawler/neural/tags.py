"""The tags the segmenter reads: dropped, block-level, lists, and the kind a tag gives its
text."""

from __future__ import annotations

from typing import Any

#: Elements whose text is never page content.
DROP_TAGS = frozenset(
    [
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "embed",
        "canvas",
        "head",
        "title",
        "meta",
        "link",
        "select",
        "option",
        "textarea",
        "button",
        "input",
        "audio",
        "video",
        "source",
        "track",
        "map",
        "area",
        "applet",
        "frame",
        "frameset",
        "datalist",
        "dialog",
    ]
)

#: Elements that start a new block.
BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "center",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
        "legend",
        "caption",
    ]
)

#: Block tags that may appear inside a simple data row without making it a layout row.
ROW_INNER_OK = frozenset({"td", "th"})
NESTED_IN_ROW = tuple(sorted(BLOCK_TAGS - ROW_INNER_OK))

#: Lists, whose nesting gives an item its depth.
LIST_TAGS = frozenset({"ul", "ol", "dl", "menu"})
#: Tags that give their kind to the text below them.
KIND_OF_TAG = {
    "li": "item",
    "dd": "item",
    "dt": "item",
    "blockquote": "quote",
    "pre": "code",
    **{f"h{i}": "head" for i in range(1, 7)},
}


_tag_names: dict[Any, str | None] = {}
#: ``name_of``'s memo, for walks that read it before calling ``name_of`` (a call less per
#: element); "" where a tag is not in it yet.
known_name = _tag_names.get


def tag_of(el: Any) -> str | None:
    """Lowercase local tag name; None for comments, processing instructions and entities."""
    return name_of(el.tag)


def name_of(tag: Any) -> str | None:
    """:func:`tag_of` from the element's ``tag`` (read once by a walk that reads it anyway)."""
    name = _tag_names.get(tag, "")
    if name == "":
        name = tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else None
        if len(_tag_names) < 10_000:
            _tag_names[tag] = name
    return name
