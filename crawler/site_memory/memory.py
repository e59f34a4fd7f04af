"""Site-level boilerplate memory: which blocks repeat across the pages of one site.

A single page cannot tell a site's share bar, newsletter box or "related articles" heading
from content; the site's other pages can. :class:`SiteMemory` counts, for every block
signature (the block's normalised text plus the tags of its nearest ancestors), on how many
of the site's pages it occurs. A kept block whose signature occurs on at least
``max(min_pages, min_share * pages)`` pages is template and is removed from the Document.

The memory works on the blocks of the page (:func:`~scrapy_maintext.neural.segment.segment`)
and on the blocks an engine kept (``Document.body``), never on model internals, so it applies
to the neural and the trafilatura engine alike. It is a decision rule after extraction: it
can only remove blocks, never add them.

Scrapy-free::

    site = SiteMemory()
    for url, html in pages_of_one_site:
        doc = extract(html, url=url, site=site)    # the page is learnt, then decided

State is a few numpy arrays per site (16 bytes per remembered signature, capped by
``max_blocks``) and serialises to a JSON-able dict (:meth:`SiteMemory.to_dict`).
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scrapy_maintext.document import Block, Document, blocks_to_text
from scrapy_maintext.fields.fingerprint import fingerprint
from scrapy_maintext.fields.fingerprint_parts import FingerprintParts, fingerprint_parts
from scrapy_maintext.vocabulary.settings import default_of

if TYPE_CHECKING:
    # Imported for types only: importing the neural package loads onnxruntime.
    from scrapy_maintext.neural.segment import RawBlock

#: Pages a block must occur on before it can be template, and the share of the site's pages
#: (both at least). Chosen with ``python -m benchmarks.site_memory_accuracy --grid`` on the
#: sites the neural model was trained on (best F1 with at most 0.5 points of recall lost),
#: then reported on the held-out sites: see README. 0.8 gives the same F1 with less recall
#: lost (0.46 against 0.55 points on the training sites, since pop-ups are dropped), but a
#: template is then at the threshold on sites with a few pages without it (the demo site: 9
#: of 11 pages), where the decision depends on the order pages arrive in: 0.7 stays.
DEFAULT_MIN_PAGES: int = default_of("SITE_MEMORY_MIN_PAGES")
DEFAULT_MIN_SHARE: float = default_of("SITE_MEMORY_MIN_SHARE")
#: Pages buffered per site before its first pages are decided (the crawl's cold start).
DEFAULT_WARMUP: int = default_of("SITE_MEMORY_WARMUP")
#: Signatures remembered per site. A page has 50 to 600 blocks, its template 30 to 300;
#: pruning keeps the most frequent (then most recent) half, so the template survives while
#: each page's own blocks are forgotten. 16 bytes each: 16 KB per site at most.
DEFAULT_MAX_BLOCKS: int = default_of("SITE_MEMORY_MAX_BLOCKS")
#: After a prune, this share of ``max_blocks`` is kept.
PRUNE_TO = 0.5
#: Ancestor tags in a signature: the block's own tag and two above it tell a heading from a
#: link in a list of other articles with the same words, while surviving layout changes
#: higher up the tree (an ad slot added around the content).
PATH_TAGS = 3
#: Characters of a block's text that go into its signature (long paragraphs are unique
#: long before this).
SIGNATURE_CHARS = 400

_DIGITS = re.compile(r"\d+")
_DTYPE = np.uint64


@dataclass(frozen=True)
class SiteMemoryOptions:
    """How a site's template is learnt and applied."""

    min_pages: int = DEFAULT_MIN_PAGES
    min_share: float = DEFAULT_MIN_SHARE
    max_blocks: int = DEFAULT_MAX_BLOCKS

    def __post_init__(self) -> None:
        if self.min_pages < 2:
            raise ValueError("min_pages must be at least 2 (one page is always unique)")
        if not 0.0 < self.min_share <= 1.0:
            raise ValueError("min_share must be in (0, 1]")
        if self.max_blocks < 10:
            raise ValueError("max_blocks must be at least 10")


@dataclass
class PageSignatures:
    """What the memory needs of one page: computed in the extraction worker, sent back."""

    #: Distinct block signatures of the whole page, sorted.
    page: np.ndarray
    #: Signature of each ``Document.body`` block (0 when no page block has its text).
    body: np.ndarray
    #: For the fingerprint of what is left after template blocks are removed.
    parts: FingerprintParts | None = None


def block_signature(path_tags: list[str], text: str) -> int:
    """64-bit signature of a block: its last ancestor tags and its text, digits folded.

    Digits are folded ("12 comments" == "3 comments") and case ignored: counters and
    dates in a template change from page to page, its words do not.
    """
    key = "/".join(path_tags[-PATH_TAGS:]) + "\n" + _DIGITS.sub("0", text[:SIGNATURE_CHARS].lower())
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    # 0 means "no signature" in PageSignatures.body.
    return int.from_bytes(digest, "big") or 1


def page_signatures(raw: list[RawBlock], body: list[Block]) -> PageSignatures:
    """Signatures of a segmented page and of the blocks an engine kept from it."""
    sigs = [block_signature([c.tag for c in b.path], b.text) for b in raw]
    positions: dict[str, list[int]] = defaultdict(list)
    for i, raw_block in enumerate(raw):
        positions[raw_block.text].append(i)
    body_sigs = np.zeros(len(body), dtype=_DTYPE)
    cursor = 0
    for j, block in enumerate(body):
        found = positions.get(" ".join(block.text.split())) or positions.get(block.text)
        if not found:
            continue
        # The next page block with this text in document order: the same words may stand
        # in the navigation above and in the content below.
        k = bisect.bisect_left(found, cursor)
        i = found[k] if k < len(found) else found[0]
        body_sigs[j] = sigs[i]
        cursor = i + 1
    page = np.unique(np.array(sigs, dtype=_DTYPE))
    return PageSignatures(page, body_sigs, fingerprint_parts(body))


@dataclass
class Outcome:
    """What the memory did to one page."""

    #: Blocks removed as template (0: the memory did not change the extraction).
    removed: int = 0
    #: Pages of the site in the memory when the page was decided.
    pages: int = 0


class SiteMemory:
    """Block signatures of one site and on how many of its pages each occurs."""

    def __init__(self, options: SiteMemoryOptions | None = None) -> None:
        self.options = options or SiteMemoryOptions()
        self.pages = 0
        self.sigs = np.zeros(0, dtype=_DTYPE)
        self.counts = np.zeros(0, dtype=np.uint32)
        #: Page number (1-based) at which each signature was last seen: prune ties.
        self.last = np.zeros(0, dtype=np.uint32)

    def __len__(self) -> int:
        return len(self.sigs)

    @property
    def nbytes(self) -> int:
        return self.sigs.nbytes + self.counts.nbytes + self.last.nbytes

    def add(self, page: PageSignatures) -> None:
        """Learn one page (its distinct signatures, sorted, as :func:`page_signatures` gives)."""
        self.pages += 1
        new = page.page
        idx = np.searchsorted(self.sigs, new)
        hit = idx < len(self.sigs)
        hit[hit] = self.sigs[idx[hit]] == new[hit]
        self.counts[idx[hit]] += 1
        self.last[idx[hit]] = self.pages
        fresh = ~hit
        if fresh.any():
            at = idx[fresh]
            self.sigs = np.insert(self.sigs, at, new[fresh])
            self.counts = np.insert(self.counts, at, 1)
            self.last = np.insert(self.last, at, self.pages)
        if len(self.sigs) > self.options.max_blocks:
            self._prune()

    def _prune(self) -> None:
        keep_n = int(self.options.max_blocks * PRUNE_TO)
        # Ascending by count, then by recency: the first ones go.
        order = np.lexsort((self.last, self.counts))
        keep = np.zeros(len(self.sigs), dtype=bool)
        keep[order[len(order) - keep_n :]] = True
        self.sigs, self.counts, self.last = self.sigs[keep], self.counts[keep], self.last[keep]

    @property
    def threshold(self) -> int:
        """Pages a block must occur on to be template, given the pages seen so far."""
        share = math.ceil(self.options.min_share * self.pages - 1e-9)
        return max(self.options.min_pages, share)

    def template_mask(self, body_sigs: np.ndarray) -> np.ndarray:
        """True for the body blocks that are template."""
        if self.pages < self.options.min_pages or not len(self.sigs) or not len(body_sigs):
            return np.zeros(len(body_sigs), dtype=bool)
        idx = np.minimum(np.searchsorted(self.sigs, body_sigs), len(self.sigs) - 1)
        known = (self.sigs[idx] == body_sigs) & (body_sigs != 0)
        return known & (self.counts[idx] >= self.threshold)

    def apply(self, doc: Document, page: PageSignatures) -> Outcome:
        """Remove the template blocks from ``doc`` (in place); never empties a page.

        A page whose every kept block is template (a tag page listing the same teasers as
        the home page) keeps its text: removing all of it would turn a page into a drop.
        """
        outcome = Outcome(pages=self.pages)
        if len(page.body) != len(doc.body):
            return outcome
        template = self.template_mask(page.body)
        if not template.any() or template.all():
            return outcome
        doc.body = [b for b, t in zip(doc.body, template, strict=True) if not t]
        doc.text = blocks_to_text(doc.body)
        parts = page.parts
        # The parts make this cheap enough for the crawl process (the reactor's thread).
        doc.fingerprint = parts.fingerprint(~template) if parts else fingerprint(doc.text)
        outcome.removed = int(template.sum())
        return outcome

    def to_dict(self) -> dict[str, Any]:
        """JSON-able state (arrays as base64 of little-endian bytes)."""
        return {
            "pages": self.pages,
            "sigs": encode_array(self.sigs, "<u8"),
            "counts": encode_array(self.counts, "<u4"),
            "last": encode_array(self.last, "<u4"),
        }

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], options: SiteMemoryOptions | None = None
    ) -> SiteMemory:
        memory = cls(options)
        memory.pages = int(data["pages"])
        memory.sigs = decode_array(data["sigs"], "<u8", _DTYPE)
        memory.counts = decode_array(data["counts"], "<u4", np.uint32)
        memory.last = decode_array(data["last"], "<u4", np.uint32)
        if not (len(memory.sigs) == len(memory.counts) == len(memory.last)):
            raise ValueError("site memory arrays differ in length")
        return memory


def encode_array(array: np.ndarray, dtype: str) -> str:
    return base64.b64encode(array.astype(dtype).tobytes()).decode("ascii")


def decode_array(text: str, dtype: str, out: Any) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype).astype(out)
