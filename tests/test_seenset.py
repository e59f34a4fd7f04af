"""The bounded duplicate filter: exact up to SEENSET_EXACT_MAX, then a scalable Bloom filter."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from scrapy import Request
from scrapy.utils.request import RequestFingerprinter
from scrapy_maintext.state.bloom import ScalableBloomFilter
from scrapy_maintext.state.seen_requests import BoundedDupeFilter, SeenSetSettings


def keys(count: int, salt: str) -> list[bytes]:
    return [hashlib.sha1(f"{salt}{i}".encode()).digest() for i in range(count)]


def test_bloom_filter_grows_without_false_negatives_and_keeps_its_error_rate() -> None:
    bloom = ScalableBloomFilter(1e-3, first_capacity=1000)
    seen = keys(10_000, "seen")
    assert all(bloom.add(key) for key in seen[:100])
    for key in seen[100:]:
        bloom.add(key)
    assert all(key in bloom for key in seen), "a key added was lost"
    assert len(bloom._stages) > 1, "the filter did not grow past its first stage"
    false = sum(1 for key in keys(20_000, "fresh") if key in bloom)
    # Expected at most 20 (1e-3 over all stages); 40 is over 4 standard deviations above.
    assert false <= 40, false
    assert not bloom.add(seen[0])


def test_bloom_filter_rejects_a_bad_rate() -> None:
    with pytest.raises(ValueError):
        ScalableBloomFilter(0)


def dupefilter(exact_max: int, path: Path | None = None) -> BoundedDupeFilter:
    config = SeenSetSettings(exact_max=exact_max, error_rate=1e-6)
    return BoundedDupeFilter(RequestFingerprinter(), config, str(path) if path else None)


def test_exact_until_the_threshold_then_bloom() -> None:
    seen = dupefilter(exact_max=3)
    requests = [Request(f"https://example.com/{i}") for i in range(10)]
    assert not any(seen.request_seen(r) for r in requests[:3])
    assert seen.bloom is None and len(seen.exact) == 3
    assert not seen.request_seen(requests[3])
    assert seen.bloom is not None and not seen.exact
    assert all(seen.request_seen(r) for r in requests[:4]), "switching forgot requests"
    assert not any(seen.request_seen(r) for r in requests[4:])
    assert seen.request_seen(Request("https://example.com/9"))
    assert len(seen) == 10


def test_jobdir_file_is_read_back(tmp_path: Path) -> None:
    first = dupefilter(exact_max=100, path=tmp_path)
    assert not first.request_seen(Request("https://example.com/a"))
    first.close("shutdown")
    again = dupefilter(exact_max=100, path=tmp_path)
    assert again.request_seen(Request("https://example.com/a"))
    assert not again.request_seen(Request("https://example.com/b"))


def test_packed_fingerprints_are_an_exact_set_through_their_splits() -> None:
    from scrapy_maintext.state.seen_requests import PackedFingerprints

    packed = PackedFingerprints()
    added = keys(20_000, "seen")
    for key in added:
        packed.add(key)
    packed.add(added[0])  # again: no change
    assert len(packed.buckets) > 64, "the buckets did not split"
    assert len(packed) == len(added) and set(packed) == set(added)
    assert all(key in packed for key in added)
    assert not any(key in packed for key in keys(20_000, "fresh"))
    # Another width (a custom fingerprinter) is kept exactly too.
    packed.add(b"short")
    assert b"short" in packed and b"shorter" not in packed and len(packed) == 20_001
