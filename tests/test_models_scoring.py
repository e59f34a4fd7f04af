"""What the release path scores with (no torch needed): WCXB's metric beside our token F1,
registered domains, and the paired intervals of ``models.sources_report``."""

from __future__ import annotations

import numpy as np
import pytest
from scrapy_maintext.models.dataset import registered_domain
from scrapy_maintext.models.metrics import tokens, wcxb_f1, wcxb_words
from scrapy_maintext.models.sources_report import interval
from scrapy_maintext.models.wcxb import word_prf, words


def test_wcxb_metric_is_word_f1_of_lowercased_word_runs() -> None:
    assert wcxb_words("Hello, World! 東京タワー") == ["hello", "world", "東京タワー"]
    assert wcxb_f1("a b c d", "a b") == 2 * 0.5 * 1.0 / 1.5
    assert wcxb_f1("", "a") == 0.0


def test_wcxb_metric_is_its_word_f1() -> None:
    # WCXB's evaluate.py: bags of re.findall(r"\w+", text.lower()); an empty ground truth
    # scores 1 only against an empty extraction.
    assert word_prf("The cat, the CAT sat", "the cat sat on the mat") == pytest.approx(
        (4 / 5, 4 / 6, 2 * (4 / 5) * (4 / 6) / (4 / 5 + 4 / 6))
    )
    assert word_prf("", "") == (1.0, 1.0, 1.0)
    assert word_prf("x", "") == (0.0, 0.0, 0.0)
    assert word_prf("", "x") == (0.0, 0.0, 0.0)
    # A CJK run is one word for WCXB, one token per character for our token F1.
    assert words("東京タワー abc") == ["東京タワー", "abc"]
    assert tokens("東京 abc") == ["東", "京", "abc"]


def test_registered_domain_groups_subdomains() -> None:
    assert registered_domain("forums.bbc.co.uk") == "bbc.co.uk"
    assert registered_domain("dragnet/123") == "dragnet/123"


def test_interval_resamples_whole_domains() -> None:
    diffs = np.array([0.1, 0.1, -0.1, 0.3])
    text = interval(diffs, ["a", "a", "b", "c"])
    assert text.startswith("+10.0 [")
    # One domain: no spread.
    assert interval(np.array([0.02, 0.04]), ["a", "a"]) == "+3.0 [+3.0, +3.0]"
    # All pages of one domain move together: the interval comes from domains, not pages.
    same = np.repeat([0.0, 1.0, 2.0, 3.0], 50)
    low, high = (float(x) for x in interval(same, [f"d{i // 50}" for i in range(200)])
                 .split("[")[1].rstrip("]").split(","))  # fmt: skip
    assert high - low > 50
