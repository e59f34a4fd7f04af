"""The tree candidate of issue 23 (``models.treenet``): masks, padding, ONNX export, int8.

torch is the training extra: the module skips without it, as ``test_models_folds.py`` does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from scrapy_maintext.models.net import NetConfig  # noqa: E402
from scrapy_maintext.models.systems import parse_html  # noqa: E402
from scrapy_maintext.models.treenet import TreeNet, export_tree, tree_bias  # noqa: E402
from scrapy_maintext.neural.features import (  # noqa: E402
    DENSE_SIZE,
    HASH_SIZE,
    TREE_LEVELS,
    featurize,
)
from scrapy_maintext.neural.inference import _session  # noqa: E402
from scrapy_maintext.neural.segment import segment  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "neural"


def _net(window: bool = True) -> TreeNet:
    torch.manual_seed(0)
    cfg = NetConfig(DENSE_SIZE, HASH_SIZE, d_model=48, heads=4, ff_dim=96)
    return TreeNet(cfg, window=window).eval()


def _page(name: str) -> tuple[np.ndarray, ...]:
    feats = featurize(segment(parse_html((FIXTURES / name).read_text("utf-8"))), tree=True)
    assert feats.tree is not None
    return feats.dense, feats.struct_ids, feats.word_ids, feats.tree


def test_a_head_sees_only_the_blocks_of_its_subtree() -> None:
    ids = torch.tensor([[[5, 1], [5, 1], [7, 1], [-1, -1]]])
    bias = tree_bias(ids)
    assert bias.shape == (1, 2, 4, 4)
    assert bias[0, 0, 0].tolist() == [0.0, 0.0, -1e4, -1e4]
    assert bias[0, 1, 2].tolist() == [0.0, 0.0, 0.0, -1e4]


def test_messages_do_not_cross_subtrees_in_the_tree_layers() -> None:
    # With one level, two sibling groups and no sequence layers after, a change in one group
    # must leave the other's states alone.
    net = _net()
    dense = torch.rand(1, 6, DENSE_SIZE)
    struct = torch.randint(1, HASH_SIZE, (1, 6, 32))
    words = torch.randint(1, HASH_SIZE, (1, 6, 16))
    tree = torch.tensor([[[0] * len(TREE_LEVELS)] * 3 + [[1] * len(TREE_LEVELS)] * 3])
    from scrapy_maintext.models.net import block_embeddings

    def states(d: torch.Tensor) -> torch.Tensor:
        x = block_embeddings(net, d, struct, words)
        for layer in net.tree_layers:
            x = layer(x, tree_bias(tree))
        return x

    changed = dense.clone()
    changed[0, 4] += 1.0
    with torch.no_grad():
        a, b = states(dense), states(changed)
    assert torch.allclose(a[0, :3], b[0, :3], atol=1e-6)
    assert not torch.allclose(a[0, 3:], b[0, 3:], atol=1e-4)


@pytest.mark.parametrize("window", [True, False])
def test_a_padded_page_gets_the_logits_of_the_page_alone(window: bool) -> None:
    net = _net(window)
    arrays = [torch.from_numpy(a[None, :12]) for a in _page("article.html")]
    pad_to = 20
    padded = [
        torch.cat(
            [a, torch.full((1, pad_to - 12, *a.shape[2:]), -1 if i == 3 else 0).to(a.dtype)], 1
        )
        for i, a in enumerate(arrays)
    ]
    pad = torch.zeros(1, pad_to, dtype=torch.bool)
    pad[0, 12:] = True
    with torch.no_grad():
        alone = net(*arrays)
        batch = net(*padded, pad_mask=pad)
    assert torch.allclose(batch[0, :12], alone[0], atol=1e-5)


def test_exports_to_int8_onnx_that_runs_on_one_thread_and_follows_the_float_net(
    tmp_path: Path,
) -> None:
    net = _net()
    export_tree(net, tmp_path / "float.onnx", tmp_path / "model.onnx")
    page = _page("listing.html")
    names = ("dense", "struct_ids", "word_ids", "tree_ids")
    inputs = {n: a[None] for n, a in zip(names, page, strict=True)}
    with torch.no_grad():
        torch_logits = net(*(torch.from_numpy(a[None]) for a in page))[0].numpy()
    outputs = {}
    for name in ("float", "model"):
        session = _session(tmp_path / f"{name}.onnx")
        assert [i.name for i in session.get_inputs()] == list(names)
        (logits,) = session.run(["logits"], inputs)
        outputs[name] = 1 / (1 + np.exp(-logits[0]))
    np.testing.assert_allclose(outputs["float"], 1 / (1 + np.exp(-torch_logits)), atol=1e-4)
    assert float(np.abs(outputs["float"] - outputs["model"]).max()) < 0.05
    assert (tmp_path / "model.onnx").stat().st_size < (tmp_path / "float.onnx").stat().st_size
