"""The extraction result: a clean document with its metadata and structured body.

Scrapy-free; shared by every extraction engine (trafilatura, neural) and every exporter.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

#: Block kinds. Exporters group consecutive ``item`` blocks into a list and
#: consecutive ``row`` blocks into a table.
BLOCK_KINDS = ("head", "p", "item", "row", "code", "quote")


@dataclass(frozen=True)
class Block:
    """One unit of main text: a heading, paragraph, list item, table row, code or quote."""

    kind: str
    text: str
    #: Heading level (1-6) for ``head``; for ``item``, its depth below the outermost list
    #: (0 for a top-level item); 0 otherwise.
    level: int = 0
    #: Cell texts for ``row`` (``text`` then holds them joined by " | ").
    cells: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.level:
            data["level"] = self.level
        if self.cells:
            data["cells"] = list(self.cells)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Block:
        return cls(
            kind=str(data["kind"]),
            text=str(data["text"]),
            level=int(data.get("level", 0)),
            cells=tuple(data.get("cells", ())),
        )


@dataclass(frozen=True)
class Image:
    """One picture of the article (``pictures.images``): never fetched, read from the page."""

    #: Absolute URL of its largest rendition (``srcset``, ``<picture>``, lazy-loading attributes).
    url: str
    alt: str | None = None
    caption: str | None = None
    #: Photographer, agency or rights holder, as the page writes it.
    credit: str | None = None
    #: Whether it is the article's cover (``Document.image``).
    cover: bool = False
    #: Index in ``Document.body`` of the block it stands before (``len(body)``: after the last).
    position: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "alt": self.alt,
            "caption": self.caption,
            "credit": self.credit,
            "cover": self.cover,
            "position": self.position,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Image:
        def text(key: str) -> str | None:
            value = data.get(key)
            return str(value) if value not in (None, "") else None

        return cls(
            url=str(data["url"]),
            alt=text("alt"),
            caption=text("caption"),
            credit=text("credit"),
            cover=bool(data.get("cover", False)),
            position=max(int(data.get("position") or 0), 0),
        )


def blocks_to_text(blocks: list[Block]) -> str:
    """Plain text, one block per line (what ``Document.text`` holds)."""
    return "\n".join(b.text for b in blocks if b.text)


@dataclass
class Document:
    """A page turned into main text plus metadata."""

    url: str | None = None
    title: str | None = None
    #: The authors as the page writes them (``authors`` joined), kept for compatibility.
    author: str | None = None
    #: The authors' names, in the page's order (``fields.people``).
    authors: list[str] = field(default_factory=list)
    #: ISO 8601 publication date: YYYY-MM-DD, with the time (and zone) where the page gives
    #: them ("2025-04-02T09:15:00+02:00").
    date: str | None = None
    #: When the page says it was last changed (ISO 8601, with the time where given).
    date_modified: str | None = None
    sitename: str | None = None
    hostname: str | None = None
    description: str | None = None
    categories: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    #: ISO 639-1 code, from the text with the page's markup as a hint
    #: (``fields.language``).
    language: str | None = None
    #: The language detector's probability of ``language`` (None: no text to read, the
    #: markup's word alone).
    language_confidence: float | None = None
    license: str | None = None
    #: The cover image's URL (``og:image``, else the first of ``images``).
    image: str | None = None
    #: The article's own pictures, each where it stands in ``body`` (``pictures.images``).
    images: list[Image] = field(default_factory=list)
    #: Main text, one block per line.
    text: str = ""
    #: The same text as structured blocks (headings, lists, tables, code, quotes).
    body: list[Block] = field(default_factory=list)
    comments: str | None = None
    #: Which engine produced ``text``: "neural", "trafilatura", ...
    extractor: str = ""
    #: Model version when the neural engine took part, else None.
    model_version: str | None = None
    #: Engine confidence in [0, 1], when the engine gives one.
    confidence: float | None = None
    #: The page's type (``extraction.page_type``): article, service, forum, listing,
    #: documentation, collection or product; None when not predicted.
    page_type: str | None = None
    #: The page-type model's probability of ``page_type``.
    page_type_probability: float | None = None
    #: Stable near-duplicate hash of the text (hex simhash).
    fingerprint: str = ""
    #: Why the text is empty, when it is ("empty-page", "binary", "no-main-text",
    #: "needs-javascript", ...).
    reason: str | None = None
    #: How the text was obtained: ``html`` (the page as fetched), ``embedded:<kind>`` (the
    #: data a script-built page ships: ``next-data``, ``nuxt-data``, ``hydration-state``,
    #: ``json-data``, ``json-ld``) or ``rendered`` (the page after a headless browser ran it).
    text_source: str = "html"
    #: The neural engine's error on this page, if it failed (counted by the crawl as
    #: ``extract/neural_error``; not an exported field).
    neural_error: str | None = None
    #: What parsing repaired or lost ("nesting-flattened", "nesting-cut", "attributes-cut";
    #: counted as ``extract/repaired/...``; not an exported field).
    notes: list[str] = field(default_factory=list)
    #: Whether a cascade model (v4 was one) was unsure and handed the page to its next model, which
    #: runs trafilatura (counted as ``extract/neural_escalated``; not an exported field).
    escalated: bool = False
    #: How trafilatura's work was bounded on a page too big for it ("no_comparison",
    #: "no_reference"; counted as ``extract/trafilatura_bounded/...``; not exported).
    trafilatura_bounded: str | None = None
    #: Whether the page looks written by its scripts and has little text without them
    #: (``render.marks``; the crawl renders such pages; not exported).
    needs_javascript: bool = False
    #: Why the render of a page that needed JavaScript gave no text: ``no-text`` (its
    #: scripts ran and wrote none) or the render's failure (``timeout``, ``unresponsive``,
    #: ``crashed``...); None: not rendered (not exported).
    render_failure: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The exported fields, in field order (``INTERNAL_FIELDS`` left out).

        Built field by field rather than with ``dataclasses.asdict``, which walks every
        block of ``body`` only for it to be replaced: the crawl process calls this for
        every page (``python -m benchmarks.crawl_throughput`` measures it).
        """
        data = {name: getattr(self, name) for name in EXPORTED_FIELDS}
        data["categories"] = list(self.categories)
        data["tags"] = list(self.tags)
        data["authors"] = list(self.authors)
        data["images"] = [image.to_dict() for image in self.images]
        data["body"] = [b.to_dict() for b in self.body]
        return data


#: Fields the crawl counts but does not export.
INTERNAL_FIELDS = (
    "neural_error",
    "notes",
    "escalated",
    "trafilatura_bounded",
    "needs_javascript",
    "render_failure",
)
#: Fields of :meth:`Document.to_dict`, in order.
EXPORTED_FIELDS = tuple(f.name for f in fields(Document) if f.name not in INTERNAL_FIELDS)
