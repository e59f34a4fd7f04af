"""Options of :func:`scrapy_maintext.extraction.extract`, one frozen object passed everywhere."""

from __future__ import annotations

from dataclasses import dataclass

#: Engines: "auto" (neural, trafilatura when the neural engine falls back or is missing),
#: "neural" (neural only) and "trafilatura".
ENGINES = ("auto", "neural", "trafilatura")

#: Bodies above this size are refused: real article pages are far below it and parsing
#: bigger ones costs seconds of CPU for no text gain (trafilatura caps at 20 MB too).
DEFAULT_MAX_BYTES = 10_000_000
#: Parsed trees above this many elements are refused (same reasoning, counted in nodes).
DEFAULT_MAX_ELEMENTS = 200_000


@dataclass(frozen=True)
class ExtractOptions:
    """How to turn one page into a :class:`~crawler.document.Document`."""

    engine: str = "auto"
    include_comments: bool = False
    include_tables: bool = True
    favor_precision: bool = False
    favor_recall: bool = False
    #: Extract title, author, date, ... (url and hostname are always set).
    with_metadata: bool = True
    max_bytes: int = DEFAULT_MAX_BYTES
    max_elements: int = DEFAULT_MAX_ELEMENTS

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, not {self.engine!r}")
        if self.max_bytes <= 0 or self.max_elements <= 0:
            raise ValueError("max_bytes and max_elements must be positive")
