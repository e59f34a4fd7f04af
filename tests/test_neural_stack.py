"""Stacking inputs (``neural.stack``): trafilatura's decision per block, as v2 reads it."""

from __future__ import annotations

from pathlib import Path

import lxml.html
import numpy as np
from scrapy_maintext.neural.stack import covered_shares, stack_features, tokens, trafilatura_text

ARTICLE = Path(__file__).parent / "fixtures" / "extraction" / "site" / "article.html"


def test_covered_shares_need_a_shared_trigram() -> None:
    blocks = [tokens("Home News Sport"), tokens("The council approved the tidal lagoon"), ["home"]]
    reference = tokens("the council approved the tidal lagoon on monday. home")
    shares = covered_shares(blocks, reference)
    # The menu shares single words ("home") with the reference, never a 3-gram.
    assert shares.tolist() == [0.0, 1.0, 0.0]


def test_trigrams_span_block_boundaries() -> None:
    # A two-word heading followed by its paragraph still matches as one token stream.
    blocks = [tokens("Tidal lagoon"), tokens("approved on Monday")]
    shares = covered_shares(blocks, tokens("tidal lagoon approved on monday"))
    assert shares.tolist() == [1.0, 1.0]


def test_stack_features_columns() -> None:
    blocks = [tokens("a b c d"), tokens("x y")]
    feats = stack_features(blocks, "a b c d")
    assert feats.shape == (2, 3)
    assert feats[:, 0].tolist() == [1.0, 0.0]
    assert feats[:, 1].tolist() == [1.0, 1.0]
    np.testing.assert_allclose(feats[:, 2], 4 / 6)
    assert not stack_features(blocks, "").any()
    assert not stack_features(blocks, None).any()


def test_trafilatura_reference_leaves_the_tree_alone() -> None:
    tree = lxml.html.fromstring(ARTICLE.read_bytes())
    before = lxml.html.tostring(tree)
    text = trafilatura_text(tree, "https://gazette.example/news/tidal.html")
    assert "tidal lagoon" in text
    assert lxml.html.tostring(tree) == before
    assert "tidal lagoon" in trafilatura_text(tree, None, "trafilatura-fast")
