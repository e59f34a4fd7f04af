"""The site-fold protocol of ``models.folds`` and the v5 candidate net (torch: training extra)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scrapy_maintext.models.dataset import Example  # noqa: E402
from scrapy_maintext.models.folds import fold_of, fold_sets  # noqa: E402
from scrapy_maintext.models.net import NetConfig  # noqa: E402
from scrapy_maintext.models.seqnet import SeqNet  # noqa: E402
from scrapy_maintext.neural.features import DENSE_SIZE, HASH_SIZE, PageFeatures  # noqa: E402


def _example(site: str, dataset: str, split: str = "train") -> Example:
    dense = np.zeros((1, DENSE_SIZE), np.float32)
    feats = PageFeatures(dense, np.zeros((1, 32)), np.zeros((1, 16)))
    return Example(f"{dataset}/{site}", dataset, split, site, feats, np.zeros(1), [[]], [])


def test_every_modern_site_is_held_out_exactly_once() -> None:
    sites = [f"shop{i}.example" for i in range(60)]
    examples = [_example(s, "wcxb-dev", "train" if i % 3 else "test") for i, s in enumerate(sites)]
    splits = ("train", "test")
    examples += [_example(f"news{i}.example", "dragnet", splits[i % 2]) for i in range(40)]
    held_out: list[str] = []
    for fold in range(3):
        sets = fold_sets(examples, fold, 3, legacy_percent=100)
        tested = {e.site for e in sets.test}
        trained = {e.site for e in sets.train + sets.val}
        assert not tested & trained
        assert all(e.dataset == "wcxb-dev" for e in sets.test)
        # The 2007-2013 sets' held-out sites are never trained on.
        assert all(e.split == "train" for e in sets.train + sets.val if e.dataset == "dragnet")
        held_out += sorted(tested)
    assert sorted(held_out) == sorted(sites)
    assert {fold_of(s, 3) for s in sites} == {0, 1, 2}


@pytest.mark.parametrize("recurrent", [True, False])
def test_a_padded_page_gets_the_logits_of_the_page_alone(recurrent: bool) -> None:
    # Training pads pages to a batch; the exported graph sees one page without padding.
    torch.manual_seed(0)
    cfg = NetConfig(DENSE_SIZE, HASH_SIZE, d_model=32, heads=4, ff_dim=64)
    net = SeqNet(cfg, recurrent).eval()
    dense = torch.rand(2, 20, DENSE_SIZE)
    struct = torch.randint(0, HASH_SIZE, (2, 20, 32))
    words = torch.randint(0, HASH_SIZE, (2, 20, 16))
    pad = torch.zeros(2, 20, dtype=torch.bool)
    pad[1, 12:] = True
    with torch.no_grad():
        batch, types = net.with_page_type(dense, struct, words, pad)
        alone = net(dense[1:, :12], struct[1:, :12], words[1:, :12])
    assert types.shape == (2, 7)
    assert torch.allclose(batch[1, :12], alone[0], atol=1e-5)
