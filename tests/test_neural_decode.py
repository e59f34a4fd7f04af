"""Decoding (threshold, smoothing, fallback) and windowing of long pages."""

from __future__ import annotations

import numpy as np
from scrapy_maintext.neural.decision import DecodeParams, decide, page_confidence, smooth
from scrapy_maintext.neural.inference import windowed

PARAMS = DecodeParams(threshold=0.5, smooth_margin=0.1, min_confidence=0.5, min_chars=20)


def test_smoothing_flips_only_unsure_isolated_blocks() -> None:
    probs = np.array([0.9, 0.45, 0.9, 0.1, 0.95, 0.1])
    keep = smooth(probs, probs >= 0.5, 0.5, 0.1)
    # 0.45 sits between two kept blocks and is unsure: kept. 0.95 is sure: stays kept.
    assert keep.tolist() == [True, True, True, False, True, False]


def test_confidence_and_fallback() -> None:
    lengths = np.array([100.0, 100.0, 100.0])
    sure = decide(np.array([0.99, 0.98, 0.01]), lengths, PARAMS)
    assert sure.keep.tolist() == [True, True, False]
    assert sure.confidence > 0.9
    assert not sure.fallback
    unsure = decide(np.array([0.6, 0.4, 0.55]), lengths, PARAMS)
    assert unsure.fallback
    nothing = decide(np.array([0.01, 0.02, 0.01]), lengths, PARAMS)
    assert nothing.fallback
    assert page_confidence(np.array([]), np.array([])) == 0.0


def test_windowing_covers_every_block_with_context() -> None:
    n, size, overlap = 1000, 128, 16
    calls: list[tuple[int, int]] = []

    def run(lo: int, hi: int) -> np.ndarray:
        calls.append((lo, hi))
        assert hi - lo <= size
        # Each output says which window produced it: its start offset.
        return np.full(hi - lo, float(lo))

    logits = windowed(run, n, size, overlap)
    assert calls[0][0] == 0
    assert calls[-1][1] == n
    for i, start in enumerate(logits.astype(int)):
        # Taken from a window with >= overlap blocks of context on the left (or the first)...
        assert start == 0 or i - start >= overlap
        # ... and on the right, unless the window reaches the end of the page.
        assert min(start + size, n) == n or start + size - i >= overlap


def test_short_page_single_window() -> None:
    out = windowed(lambda lo, hi: np.arange(lo, hi, dtype=np.float32), 5, 512, 64)
    assert out.tolist() == [0, 1, 2, 3, 4]
    assert windowed(lambda lo, hi: np.zeros(0), 0, 512, 64).size == 0


def test_keeping_nothing_always_falls_back() -> None:
    # Tuning may choose min_chars=0 and min_confidence=0 (v2 does): a page where the model
    # keeps nothing must still go to the fallback engine.
    never = DecodeParams(threshold=0.5, smooth_margin=0.0, min_confidence=0.0, min_chars=0)
    lengths = np.array([100.0, 100.0])
    assert decide(np.array([0.01, 0.02]), lengths, never).fallback
    assert not decide(np.array([0.99, 0.02]), lengths, never).fallback
