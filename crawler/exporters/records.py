"""Read an exported item (dict, scrapy Item, dataclass, Document) as a Document-like record."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from itemadapter import ItemAdapter
from scrapy_maintext.document import Block, Document, Image

# Characters XML 1.0 cannot hold (C0 controls but tab/newline/CR, surrogates, U+FFFE/F).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    return _XML_INVALID.sub("", text)


def to_record(item: Any) -> dict[str, Any]:
    """Plain dict of an item's fields; ``body`` as a list of :class:`Block`."""
    record = item.to_dict() if isinstance(item, Document) else ItemAdapter(item).asdict()
    record["body"] = blocks_of(record.get("body"))
    record["images"] = images_of(record.get("images"))
    return record


def images_of(value: Any) -> list[Image]:
    """Images from ``images`` values as the pipeline writes them (dicts) or as Images; an
    entry without a URL is left out."""
    images: list[Image] = []
    entries = value if isinstance(value, list | tuple) else ()
    for entry in entries:
        if isinstance(entry, Image):
            images.append(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("url"), str) and entry["url"]:
            try:
                images.append(Image.from_dict(entry))
            except (TypeError, ValueError):
                continue
    return images


def images_before(images: Sequence[Image], start: int, end: int, last: bool) -> list[Image]:
    """The images that stand before body block ``end`` but not before block ``start``; with
    ``last`` (``end`` is past the last block), those after the last block too."""
    return [image for image in images if start <= image.position and (last or image.position < end)]


def blocks_of(value: Any) -> list[Block]:
    """Blocks from ``body`` values as the pipeline writes them (dicts) or as Blocks."""
    blocks: list[Block] = []
    for entry in value or ():
        if isinstance(entry, Block):
            blocks.append(entry)
        elif isinstance(entry, dict) and "kind" in entry and "text" in entry:
            blocks.append(Block.from_dict(entry))
    return blocks


def text_of(record: dict[str, Any]) -> str:
    """The main text: ``text`` when present, else the body joined one block per line."""
    text = record.get("text")
    if isinstance(text, str) and text:
        return text
    return "\n".join(b.text for b in record["body"] if b.text)


def string_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value or () if v]
