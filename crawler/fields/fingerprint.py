"""Near-duplicate fingerprints: a 64-bit simhash over word shingles, as 16 hex digits.

Two texts whose fingerprints differ in few bits (:func:`hamming`) are near-duplicates.
:class:`FingerprintIndex` answers "seen a near-duplicate before?" in constant time per
lookup by splitting fingerprints into bands (pigeonhole: within ``max_distance`` bits,
at least one of ``max_distance + 1`` bands is equal).
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scrapy_maintext.vocabulary.settings import default_of

BITS = 64
#: Words per shingle: 3 keeps boilerplate-free paraphrases apart but catches re-posts
#: that differ by a date line or a share button.
SHINGLE_WORDS = 3
#: Default distance under which two texts count as near-duplicates (of 64 bits).
DEFAULT_MAX_DISTANCE: int = default_of("EXTRACT_DEDUP_DISTANCE")

_WORD = re.compile(r"\w+", re.UNICODE)


def fingerprint(text: str) -> str:
    """Simhash of ``text`` as 16 lowercase hex digits; "" for text without words."""
    words = list(map(str.lower, _WORD.findall(text)))
    if not words:
        return ""
    n = min(SHINGLE_WORDS, len(words))
    shingles = (words[i:] for i in range(n))  # the shingles' first, second, ... words
    blake2b = hashlib.blake2b
    digests = b"".join(
        blake2b(" ".join(shingle).encode("utf-8"), digest_size=8).digest()
        for shingle in zip(*shingles, strict=False)
    )
    # One row of 64 bits per shingle (big-endian digests: bit 0 is the last column); a
    # Python loop over the bits cost ~20 ms on a long page, numpy well under 1 ms.
    bits = np.unpackbits(np.frombuffer(digests, dtype=np.uint8).reshape(-1, 8), axis=1)
    ones = bits.sum(axis=0, dtype=np.int64)
    weights = 2 * ones[::-1] - bits.shape[0]
    result = sum(1 << bit for bit in range(BITS) if weights[bit] > 0)
    return f"{result:016x}"


def hamming(a: str, b: str) -> int:
    """Number of differing bits between two fingerprints."""
    return (int(a, 16) ^ int(b, 16)).bit_count()


def near_duplicate(a: str, b: str, max_distance: int = DEFAULT_MAX_DISTANCE) -> bool:
    """Whether two fingerprints are within ``max_distance`` bits (empty ones never are)."""
    return bool(a and b) and hamming(a, b) <= max_distance


@dataclass
class FingerprintIndex:
    """The fingerprints seen so far, searchable for near-duplicates."""

    max_distance: int = DEFAULT_MAX_DISTANCE
    _bands: dict[tuple[int, int], list[int]] = field(default_factory=lambda: defaultdict(list))
    _count: int = 0

    def __len__(self) -> int:
        return self._count

    def _band_keys(self, value: int) -> list[tuple[int, int]]:
        bands = self.max_distance + 1
        width = -(-BITS // bands)
        mask = (1 << width) - 1
        return [(i, value >> (i * width) & mask) for i in range(bands)]

    def find(self, fp: str, ignore: str | None = None) -> str | None:
        """A stored fingerprint near ``fp`` other than ``ignore``, or None."""
        if not fp:
            return None
        value = int(fp, 16)
        skip = int(ignore, 16) if ignore else None
        for key in self._band_keys(value):
            for other in self._bands.get(key, ()):
                if other != skip and (value ^ other).bit_count() <= self.max_distance:
                    return f"{other:016x}"
        return None

    def add(self, fp: str) -> None:
        if not fp:
            return
        value = int(fp, 16)
        for key in self._band_keys(value):
            self._bands[key].append(value)
        self._count += 1

    def check_and_add(self, fp: str, ignore: str | None = None) -> str | None:
        """The near-duplicate already stored (``ignore`` aside), else None after storing
        ``fp`` (unless it is ``ignore``: stored already)."""
        found = self.find(fp, ignore)
        if found is None and fp != ignore:
            self.add(fp)
        return found
