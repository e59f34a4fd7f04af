"""A scalable Bloom filter of request fingerprints: a seen set of bounded size per entry.

An exact set of 20-byte fingerprints costs about 90 bytes per request in CPython; this filter
costs ``-ln(p) / ln(2)^2`` bits per request for a false-positive rate ``p`` (29 bits, under
4 bytes, at one in a million). A false positive makes a request look seen when it was not:
that page is skipped. The filter grows as needed (Almeida et al., "Scalable Bloom Filters",
2007): each new stage holds twice as many entries at half the error rate of the one before,
so the rate over all stages stays below the rate asked for, however many entries come.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: Entries of the first stage; each further stage holds twice as many.
FIRST_STAGE_CAPACITY = 1 << 20
#: Each stage's error rate is this share of the previous one's; the stages' rates sum to
#: at most ``error_rate`` when the first stage gets ``error_rate * (1 - ERROR_RATIO)``.
ERROR_RATIO = 0.5


@dataclass
class _Stage:
    capacity: int
    error_rate: float
    bits: int = 0
    hashes: int = 0
    count: int = 0
    array: bytearray = field(default_factory=bytearray)

    def __post_init__(self) -> None:
        ln2 = math.log(2)
        self.bits = max(8, math.ceil(-self.capacity * math.log(self.error_rate) / ln2**2))
        self.hashes = max(1, round(self.bits / self.capacity * ln2))
        self.array = bytearray((self.bits + 7) // 8)

    def positions(self, key: bytes) -> list[int]:
        # The key is already a cryptographic hash: two 64-bit slices of it give every
        # position by double hashing (Kirsch and Mitzenmacher, 2006).
        h1 = int.from_bytes(key[:8], "big")
        h2 = int.from_bytes(key[8:16], "big") | 1
        return [(h1 + i * h2) % self.bits for i in range(self.hashes)]

    def __contains__(self, key: bytes) -> bool:
        array = self.array
        return all(array[p >> 3] >> (p & 7) & 1 for p in self.positions(key))

    def add(self, key: bytes) -> None:
        array = self.array
        for p in self.positions(key):
            array[p >> 3] |= 1 << (p & 7)
        self.count += 1


class ScalableBloomFilter:
    """Set of byte strings of at least 16 uniformly random bytes (fingerprints)."""

    def __init__(self, error_rate: float, first_capacity: int = FIRST_STAGE_CAPACITY) -> None:
        if not 0 < error_rate < 1:
            raise ValueError(f"error_rate must be between 0 and 1, not {error_rate}")
        self.error_rate = error_rate
        self._stages = [_Stage(first_capacity, error_rate * (1 - ERROR_RATIO))]

    def __len__(self) -> int:
        return sum(stage.count for stage in self._stages)

    def __contains__(self, key: bytes) -> bool:
        return any(key in stage for stage in self._stages)

    @property
    def nbytes(self) -> int:
        return sum(len(stage.array) for stage in self._stages)

    def add(self, key: bytes) -> bool:
        """Add ``key``; False when it was (or looks) already there."""
        if key in self:
            return False
        stage = self._stages[-1]
        if stage.count >= stage.capacity:
            stage = _Stage(stage.capacity * 2, stage.error_rate * ERROR_RATIO)
            self._stages.append(stage)
        stage.add(key)
        return True
