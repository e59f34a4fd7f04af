"""The simhash of a Document's text, recomputed cheaply after some blocks are removed.

:func:`~scrapy_maintext.fields.fingerprint.fingerprint` hashes every word 3-gram of the
text: milliseconds of pure Python per page. The site memory removes blocks in the crawl
process (the reactor's), so the extraction worker precomputes, per block, the bit weights of
the 3-grams inside the block and the few words at its edges; the crawl process then only
adds the weights of the kept blocks and hashes the 3-grams that cross their boundaries. The
result is bit for bit the fingerprint of the kept text (tests/test_site_memory.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from scrapy_maintext.document import Block
from scrapy_maintext.fields.fingerprint import _WORD, BITS, SHINGLE_WORDS

#: Words kept at each edge of a block: a 3-gram crossing a boundary takes at most two words
#: from either side.
EDGE = SHINGLE_WORDS - 1
_SHIFTS = np.arange(BITS, dtype=np.uint64)
#: Separates a long block's head from its tail in the edge sequence (never a word).
_GAP = ""


@dataclass
class FingerprintParts:
    """Per block: bit weights of its inner 3-grams, its edge words and its word count."""

    weights: np.ndarray
    edges: list[list[str]]
    counts: list[int]

    def fingerprint(self, keep: np.ndarray) -> str:
        """The fingerprint of the text of the blocks where ``keep`` is True."""
        kept = np.flatnonzero(keep)
        if not sum(self.counts[i] for i in kept):
            return ""
        if sum(self.counts[i] for i in kept) < SHINGLE_WORDS:
            # Every kept block has fewer than 3 words, so its edges are all of its words.
            words = [w for i in kept for w in self.edges[i]]
            return _to_hex(_weights([" ".join(words)]))
        total = self.weights[kept].sum(axis=0) + _weights(self._crossing(kept))
        return _to_hex(total)

    def _crossing(self, kept: np.ndarray) -> list[str]:
        """The 3-grams of the kept text that span two or more blocks."""
        seq: list[tuple[str, int]] = []
        for i in kept:
            edge = self.edges[i]
            if self.counts[i] > 2 * EDGE:
                seq += [(w, i) for w in edge[:EDGE]] + [(_GAP, -1)]
                seq += [(w, i) for w in edge[EDGE:]]
            else:
                seq += [(w, i) for w in edge]
        grams = []
        for j in range(len(seq) - SHINGLE_WORDS + 1):
            window = seq[j : j + SHINGLE_WORDS]
            owners = {owner for _, owner in window}
            if -1 not in owners and len(owners) > 1:
                grams.append(" ".join(w for w, _ in window))
        return grams


def fingerprint_parts(body: list[Block]) -> FingerprintParts:
    """What :meth:`FingerprintParts.fingerprint` needs, computed once in the worker."""
    weights = np.zeros((len(body), BITS), dtype=np.int32)
    edges, counts = [], []
    for i, block in enumerate(body):
        words = [w.lower() for w in _WORD.findall(block.text)]
        inner = [" ".join(words[k : k + SHINGLE_WORDS]) for k in range(len(words) - 2)]
        weights[i] = _weights(inner)
        edges.append(words if len(words) <= 2 * EDGE else words[:EDGE] + words[-EDGE:])
        counts.append(len(words))
    return FingerprintParts(weights, edges, counts)


def _weights(grams: list[str]) -> np.ndarray:
    """Sum over ``grams`` of +1 for each set bit of its hash and -1 for each clear one."""
    if not grams:
        return np.zeros(BITS, dtype=np.int32)
    hashes = np.fromiter(
        (
            int.from_bytes(hashlib.blake2b(g.encode("utf-8"), digest_size=8).digest(), "big")
            for g in grams
        ),
        dtype=np.uint64,
        count=len(grams),
    )
    ones = ((hashes[:, None] >> _SHIFTS) & np.uint64(1)).sum(axis=0).astype(np.int32)
    return 2 * ones - len(grams)


def _to_hex(weights: np.ndarray) -> str:
    value = sum(1 << bit for bit in range(BITS) if weights[bit] > 0)
    return f"{value:016x}"
