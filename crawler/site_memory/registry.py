"""One :class:`SiteMemory` per site for a whole crawl: warm-up buffers, caps, LRU, journal.

Scrapy-free; the crawl's pipeline feeds it pages in item arrival order, so its decisions
depend on that order only, never on which extraction worker finished first.

Cold start: a site's first pages meet an empty memory. :class:`SiteMemories` holds them
(the *warm-up buffer*) until the site has ``warmup`` pages, then decides them all with the
memory of those pages; later pages are decided on arrival with every page seen so far. The
price is latency and memory: up to ``warmup`` pages per site wait, and ``max_held_bytes``
caps what all sites hold together (over it, the site waiting longest is decided with the
pages it has). A site with fewer pages than ``warmup`` is decided by :meth:`flush` (end
of the crawl).

Bounded: at most ``max_sites`` memories, least recently used evicted first, each capped at
``SiteMemoryOptions.max_blocks`` signatures.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from scrapy_maintext.document import Document
from scrapy_maintext.site_memory.memory import (
    DEFAULT_WARMUP,
    Outcome,
    PageSignatures,
    SiteMemory,
    SiteMemoryOptions,
)
from scrapy_maintext.state.site_memory_journal import MemoryJournal
from scrapy_maintext.vocabulary.settings import default_of

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Sites remembered at once: 10,000 memories full to ``max_blocks`` take about 160 MB
#: (``python -m benchmarks.crawl_memory --part site-memory --sites 10000`` measures it).
DEFAULT_MAX_SITES: int = default_of("SITE_MEMORY_MAX_SITES")
#: HTML held in warm-up buffers of all sites together. Half of Scrapy's default
#: SCRAPER_SLOT_MAX_ACTIVE_SIZE (5 MB): the responses of held items count there, and over
#: it Scrapy stops downloading, so the sites waiting could never complete their warm-up.
DEFAULT_MAX_HELD_BYTES = 2_500_000


@dataclass(frozen=True)
class SiteMemoriesOptions:
    site: SiteMemoryOptions = field(default_factory=SiteMemoryOptions)
    #: Pages a site needs before its first pages are decided (0 or 1: decide on arrival).
    warmup: int = DEFAULT_WARMUP
    max_sites: int = DEFAULT_MAX_SITES
    max_held_bytes: int = DEFAULT_MAX_HELD_BYTES

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.max_sites < 1 or self.max_held_bytes < 0:
            raise ValueError("warmup and max_held_bytes must be >= 0, max_sites >= 1")


@dataclass
class Pending(Generic[T]):
    """A page waiting for its site-memory decision; ``token`` is the caller's handle."""

    site: str | None
    doc: Document
    signatures: PageSignatures | None
    token: T
    size: int = 0


@dataclass
class Decided(Generic[T]):
    pending: Pending[T]
    outcome: Outcome
    #: Why it was decided now: "arrival", "warmup", "held_bytes", "evicted" or "flush".
    trigger: str


def site_key(url: str | None) -> str | None:
    """Which site a page belongs to: its host and port, lowercased, without "www."."""
    if not url:
        return None
    try:
        netloc = urlsplit(url).netloc.lower()
    except ValueError:
        return None
    netloc = netloc.rsplit("@", 1)[-1]
    return netloc.removeprefix("www.") or None


class SiteMemories(Generic[T]):
    """Per-site memories of a crawl and the pages waiting for their site's warm-up."""

    def __init__(self, options: SiteMemoriesOptions | None = None) -> None:
        self.options = options or SiteMemoriesOptions()
        self.memories: OrderedDict[str, SiteMemory] = OrderedDict()
        self.held: OrderedDict[str, list[Pending[T]]] = OrderedDict()
        self.held_bytes = 0
        self.held_pages = 0
        #: Pages learnt so far (journal sequence number).
        self.seq = 0
        self.evicted = 0
        self.journal: MemoryJournal | None = None

    def __len__(self) -> int:
        return len(self.memories)

    def arrive(self, pending: Pending[T]) -> list[Decided[T]]:
        """Learn a page and return every page that can be decided now, in order."""
        key, page = pending.site, pending.signatures
        if key is None or page is None:
            return [Decided(pending, Outcome(), "arrival")]
        decided: list[Decided[T]] = []
        memory = self._memory(key, decided)
        self.learn(key, page, memory)
        if key not in self.held and memory.pages >= self.options.warmup:
            decided.append(Decided(pending, memory.apply(pending.doc, page), "arrival"))
            return decided
        self.held.setdefault(key, []).append(pending)
        self.held_bytes += pending.size
        self.held_pages += 1
        if memory.pages >= self.options.warmup:
            decided += self._release(key, "warmup")
        while self.held_bytes > self.options.max_held_bytes and self.held:
            decided += self._release(next(iter(self.held)), "held_bytes")
        return decided

    def learn(self, key: str, page: PageSignatures, memory: SiteMemory | None = None) -> None:
        """Add a page to its site's memory (and to the journal)."""
        memory = memory or self._memory(key, [])
        memory.add(page)
        self.seq += 1
        if self.journal is not None:
            self.journal.append(self.seq, key, page)
            if self.journal.records >= JOURNAL_COMPACT_RECORDS:
                self.journal.snapshot(self)

    def flush(self) -> list[Decided[T]]:
        """Decide every held page with what its site's memory has (end of the crawl)."""
        decided: list[Decided[T]] = []
        while self.held:
            decided += self._release(next(iter(self.held)), "flush")
        return decided

    def _memory(self, key: str, decided: list[Decided[T]]) -> SiteMemory:
        memory = self.memories.get(key)
        if memory is not None:
            self.memories.move_to_end(key)
            return memory
        while len(self.memories) >= self.options.max_sites:
            old, _ = next(iter(self.memories.items()))
            if old in self.held:
                decided += self._release(old, "evicted")
            del self.memories[old]
            self.evicted += 1
        memory = self.memories[key] = SiteMemory(self.options.site)
        return memory

    def _release(self, key: str, trigger: str) -> list[Decided[T]]:
        pages = self.held.pop(key, [])
        self.held_bytes -= sum(p.size for p in pages)
        self.held_pages -= len(pages)
        memory = self.memories[key]
        # Only pages with signatures are held (arrive() decides the others at once).
        return [
            Decided(p, memory.apply(p.doc, p.signatures) if p.signatures else Outcome(), trigger)
            for p in pages
        ]

    @property
    def nbytes(self) -> int:
        """Bytes of the signature arrays of every site (what the caps bound)."""
        return sum(m.nbytes for m in self.memories.values())

    def state(self) -> dict[str, Any]:
        """JSON-able state: every site's memory, least recently used first."""
        return {
            "seq": self.seq,
            "evicted": self.evicted,
            "sites": [[key, m.to_dict()] for key, m in self.memories.items()],
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.seq = int(state["seq"])
        self.evicted = int(state.get("evicted", 0))
        self.memories = OrderedDict(
            (str(key), SiteMemory.from_dict(data, self.options.site))
            for key, data in state["sites"]
        )


#: Journal records (about 3 KB each) after which the state is snapshotted and the journal
#: emptied, so a long crawl's journal stays under about 60 MB.
JOURNAL_COMPACT_RECORDS = 20_000
