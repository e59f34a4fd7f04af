"""The site-fold protocol of ``models.folds``, its paired statistics and WCXB metric, the
clean recipe (issue 30) and the v5 candidate net (torch: training extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scrapy_maintext.models.dataset import Example, load_pack, save_pack  # noqa: E402
from scrapy_maintext.models.folds import LEGACY_TRAIN, fold_of, fold_sets  # noqa: E402
from scrapy_maintext.models.metrics import prf, tokens  # noqa: E402
from scrapy_maintext.models.net import NetConfig  # noqa: E402
from scrapy_maintext.models.paired import site_bootstrap  # noqa: E402
from scrapy_maintext.models.seqnet import SeqNet  # noqa: E402
from scrapy_maintext.models.systems import parse_html  # noqa: E402
from scrapy_maintext.models.train import Recipe, trains_on  # noqa: E402
from scrapy_maintext.models.wcxb import word_prf, words  # noqa: E402
from scrapy_maintext.neural.features import (  # noqa: E402
    DENSE_SIZE,
    HASH_SIZE,
    PageFeatures,
    featurize,
)
from scrapy_maintext.neural.segment import segment  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "neural"


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
    # Folds go by registered domain: a site's subdomains stay on one side.
    assert len({fold_of(s, 5) for s in ("forum.bbc.co.uk", "www2.bbc.co.uk", "bbc.co.uk")}) == 1


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


def test_a_pack_keeps_features_tree_labels_and_every_f1(tmp_path: Path) -> None:
    # Packs carry the folds to a machine without trafilatura: page-local token ids and bags
    # of the ground truth and the fallback must leave every token F1 as it was.
    html = (FIXTURES / "listing.html").read_text(encoding="utf-8")
    raw = segment(parse_html(html))
    toks = [tokens(b.text) for b in raw]
    gold = [t for block in toks[::2] for t in block] + ["unseen", "unseen"]
    fallback = toks[1] + ["elsewhere"] + gold[:5]
    feats = featurize(raw, tree=True)
    ex = Example("p", "wcxb-dev", "train", "s", feats, np.ones(len(raw)), toks, gold, "forum")
    ex.fallback_tokens = fallback
    save_pack([ex], tmp_path / "pack", xz=True)
    (back,) = load_pack(tmp_path / "pack")
    assert back.features.tree is not None
    assert back.features.tree.tolist() == feats.tree.tolist()  # type: ignore[union-attr]
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


def test_the_clean_recipe_trains_on_no_research_or_agpl_set() -> None:
    # Issue 30: Dragnet, L3S-GN1 and CleanEval stay in the evaluation only.
    sites = [f"site{i}.example" for i in range(40)]
    examples = [_example(s, "wcxb-dev") for s in sites]
    for name in ("cleaneval", "dragnet", "l3s-gn1", "readability"):
        examples += [_example(f"{name}{i}.example", name) for i in range(20)]
    for fold in range(3):
        every = fold_sets(examples, fold, 3, legacy_percent=100)
        clean = fold_sets(examples, fold, 3, 100, LEGACY_TRAIN["clean"])
        trained = {e.dataset for e in clean.train + clean.val}
        assert trained == {"wcxb-dev", "readability"}
        assert {e.dataset for e in every.train + every.val} == {
            "wcxb-dev",
            "cleaneval",
            "dragnet",
            "l3s-gn1",
            "readability",
        }
        # The same modern pages for both recipes: the comparison is paired page by page.
        assert [e.id for e in clean.test] == [e.id for e in every.test]
        modern = [e.id for e in every.train + every.val if e.dataset == "wcxb-dev"]
        assert [e.id for e in clean.train + clean.val if e.dataset == "wcxb-dev"] == modern


def test_the_shipped_clean_recipe_takes_every_wcxb_page_and_only_usable_sets() -> None:
    recipe = Recipe(datasets=("wcxb-dev", "readability"), whole=("wcxb-dev",))
    assert trains_on(_example("a.example", "wcxb-dev", "test"), recipe)
    assert trains_on(_example("b.example", "readability", "train"), recipe)
    assert not trains_on(_example("c.example", "readability", "test"), recipe)
    assert not trains_on(_example("d.example", "dragnet", "train"), recipe)
    assert trains_on(_example("d.example", "dragnet", "train"), Recipe())
    assert not trains_on(_example("e.example", "wcxb-dev", "test"), Recipe())


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


def test_paired_site_bootstrap_resamples_sites_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(1)
    pages = [
        (f"wcxb-dev/{'article' if i % 3 else 'forum'}", f"s{i // 2}", 0.02 + rng.normal(0, 0.01))
        for i in range(200)
    ]
    out = site_bootstrap(pages, draws=500)
    est, low, high = out["pages"]
    assert est == pytest.approx(np.mean([d for _, _, d in pages]))
    assert low < est < high and low > 0
    means = [
        np.mean([d for g, _, d in pages if g == t]) for t in ("wcxb-dev/article", "wcxb-dev/forum")
    ]
    assert out["macro"][0] == pytest.approx(np.mean(means))
    # All pages of one site move together: an interval from sites, not pages.
    same = [("wcxb-dev/article", f"s{i // 50}", float(i // 50)) for i in range(200)]
    low, high = site_bootstrap(same, draws=500)["pages"][1:]
    assert high - low > 1.0
