"""The decision protocol (``models.protocol``): its metric, its intervals and its replay of
the run-time decoding on cached pages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scrapy_maintext.models.dataset import Page, registered_domain
from scrapy_maintext.models.metrics import wcxb_f1, wcxb_words
from scrapy_maintext.models.pagecache import page_record
from scrapy_maintext.models.protocol import GROUP_GRID, choice_texts, prepare, shipped_params
from scrapy_maintext.models.protocol_report import interval
from scrapy_maintext.neural import default_extractor

FIXTURES = Path(__file__).parent / "fixtures" / "neural"


def test_wcxb_metric_is_word_f1_of_lowercased_word_runs() -> None:
    assert wcxb_words("Hello, World! 東京タワー") == ["hello", "world", "東京タワー"]
    assert wcxb_f1("a b c d", "a b") == 2 * 0.5 * 1.0 / 1.5
    assert wcxb_f1("", "a") == 0.0


def test_registered_domain_groups_subdomains() -> None:
    assert registered_domain("forums.bbc.co.uk") == "bbc.co.uk"
    assert registered_domain("dragnet/123") == "dragnet/123"


def test_interval_resamples_whole_domains() -> None:
    diffs = np.array([0.1, 0.1, -0.1, 0.3])
    text = interval(diffs, ["a", "a", "b", "c"])
    assert text.startswith("+10.0 [")
    # One domain: no spread.
    assert interval(np.array([0.02, 0.04]), ["a", "a"]) == "+3.0 [+3.0, +3.0]"


def test_replayed_decoding_is_the_products(tmp_path: Path) -> None:
    # The protocol decides on cached blocks and probabilities; with the shipped folder's
    # groups it must give the auto engine's own text (v4 with its cascade is cached too).
    shipped = default_extractor()
    g = GROUP_GRID.index(shipped.groups)
    for path in sorted(FIXTURES.glob("*.html")):
        page = Page(path.stem, "wcxb-dev", "test", None, path.read_text("utf-8"), "x")
        rec = page_record(page, shipped, shipped)
        assert rec is not None
        assert choice_texts(prepare(rec), g, shipped_params())["neural"] == rec["v4.1"]
