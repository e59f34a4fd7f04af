"""Simhash fingerprints and the near-duplicate index."""

from __future__ import annotations

from scrapy_maintext.extraction import FingerprintIndex, fingerprint, hamming, near_duplicate

BASE = (
    "The borough council voted on Tuesday evening to approve a tidal lagoon across the "
    "northern mouth of the estuary, ending almost a decade of consultation, surveys and legal "
    "challenges. Engineers expect the lagoon to generate enough electricity for roughly twelve "
    "thousand homes once its sixteen turbines are installed, which the developer hopes to "
    "finish by 2029. Opponents say they will consider a judicial review of the decision once "
    "the full minutes of the meeting have been published later this month. "
) * 3
OTHER = (
    "Nach drei Monaten Reparatur hat die kleine Fähre zwischen den beiden Ufern ihren Betrieb "
    "wieder aufgenommen. Die ersten Fahrgäste wurden am Morgen von der Bürgermeisterin begrüßt."
)


def test_fingerprint_is_stable_hex() -> None:
    fp = fingerprint(BASE)
    assert fp == fingerprint(BASE)
    assert len(fp) == 16 and int(fp, 16) >= 0
    # Case, punctuation and spacing do not matter; only the words do.
    assert fingerprint(BASE.upper().replace(",", " ;  ")) == fp


def test_fingerprint_of_text_without_words_is_empty() -> None:
    assert fingerprint("") == ""
    assert fingerprint(" -- ... !! ") == ""
    assert fingerprint("one") != ""


def test_small_edit_is_near_large_change_is_far() -> None:
    fp = fingerprint(BASE)
    edited = fingerprint(BASE.replace("Tuesday", "Wednesday", 1))
    assert hamming(fp, edited) <= 3
    assert near_duplicate(fp, edited)
    assert hamming(fp, fingerprint(OTHER)) > 10
    assert not near_duplicate(fp, fingerprint(OTHER))
    assert not near_duplicate("", "")


def test_index_finds_near_duplicates_and_stores_new_ones() -> None:
    index = FingerprintIndex(max_distance=3)
    fp = fingerprint(BASE)
    assert index.check_and_add(fp) is None
    assert index.check_and_add(fingerprint(BASE.replace("Tuesday", "Wednesday", 1))) == fp
    assert index.check_and_add(fingerprint(OTHER)) is None
    assert len(index) == 2
    assert index.find("") is None


def test_index_respects_distance_bound() -> None:
    value = 0x0123456789ABCDEF
    index = FingerprintIndex(max_distance=2)
    index.add(f"{value:016x}")
    two_bits = value ^ (1 << 3) ^ (1 << 60)
    three_bits = two_bits ^ (1 << 33)
    assert index.find(f"{two_bits:016x}") == f"{value:016x}"
    assert index.find(f"{three_bits:016x}") is None
