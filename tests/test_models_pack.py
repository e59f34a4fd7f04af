"""Packs (``models.pack``): the cached examples carried to a machine without trafilatura."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scrapy_maintext.models.dataset import Example
from scrapy_maintext.models.metrics import prf, tokens
from scrapy_maintext.models.pack import load_pack, save_pack
from scrapy_maintext.models.systems import parse_html
from scrapy_maintext.neural.features import featurize
from scrapy_maintext.neural.segment import segment

FIXTURES = Path(__file__).parent / "fixtures" / "neural"


def test_a_pack_keeps_features_labels_and_every_f1(tmp_path: Path) -> None:
    # Page-local token ids and bags of the ground truth and the fallback must leave every
    # token F1 as it was.
    html = (FIXTURES / "listing.html").read_text(encoding="utf-8")
    raw = segment(parse_html(html))
    toks = [tokens(b.text) for b in raw]
    gold = [t for block in toks[::2] for t in block] + ["unseen", "unseen"]
    fallback = toks[1] + ["elsewhere"] + gold[:5]
    feats = featurize(raw)
    ex = Example("p", "wcxb-dev", "train", "s", feats, np.ones(len(raw)), toks, gold, "forum")
    ex.fallback_tokens = fallback
    save_pack([ex], tmp_path / "pack", xz=True)
    (back,) = load_pack(tmp_path / "pack")
    assert back.features.struct_ids.tolist() == feats.struct_ids.tolist()
    np.testing.assert_allclose(back.features.dense, feats.dense, atol=1e-3)
    # The columns the block lengths determine are recomputed exactly.
    np.testing.assert_array_equal(
        back.features.dense[:, [0, 13, 14, 15]], feats.dense[:, [0, 13, 14, 15]]
    )
    assert [len(t) for t in back.block_tokens] == [len(t) for t in toks]
    assert back.page_type == "forum" and back.labels.tolist() == ex.labels.tolist()
    for keep in ([True] * len(raw), [i % 3 == 0 for i in range(len(raw))], [False] * len(raw)):
        pred = [
            [t for b, k in zip(blocks, keep, strict=True) if k for t in b]
            for blocks in (toks, back.block_tokens)
        ]
        assert prf(pred[0], gold) == prf(pred[1], back.gold_tokens)
    assert prf(fallback, gold) == prf(back.fallback_tokens, back.gold_tokens)
    assert 0 < prf(fallback, gold)[2] < 1
