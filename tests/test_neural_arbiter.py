"""The page-level arbiter (``neural.arbiter``): its file, and the ``auto`` engine using it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scrapy_maintext import ExtractOptions
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.engines import run_neural, run_trafilatura
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.arbiter import CHOICES, STAGE1, STAGE2, Arbiter, Linear
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR

FIXTURES = Path(__file__).parent / "fixtures" / "neural"


def _linear(inputs: int, bias: list[float]) -> Linear:
    return Linear(np.zeros(inputs), np.ones(inputs), np.zeros((len(bias), inputs)), np.array(bias))


def _arbiter(run: bool, choice: str) -> Arbiter:
    scores = [10.0 if c == choice else 0.0 for c in CHOICES]
    return Arbiter(
        _linear(len(STAGE1), [10.0 if run else -10.0]),
        0.5,
        _linear(len(STAGE1) + len(STAGE2), scores),
    )


def _folder(tmp_path: Path, arbiter: Arbiter | None) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(MODELS_DIR / DEFAULT_VERSION, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config.pop("arbiter", None)
    (folder / "arbiter.json").unlink(missing_ok=True)
    if arbiter is not None:
        config["arbiter"] = "arbiter.json"
        (folder / "arbiter.json").write_text(json.dumps(arbiter.to_json()), encoding="utf-8")
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_arbiter_file_round_trips() -> None:
    arbiter = _arbiter(True, "union")
    again = Arbiter.from_json(json.loads(json.dumps(arbiter.to_json())))
    stats, pair = np.ones(len(STAGE1)), np.ones(len(STAGE2))
    assert again.worth_running(stats) and again.choose(stats, pair) == "union"


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: s.update(stage1_features=["x"]),
        lambda s: s.update(choices=["neural"]),
        lambda s: s.update(gate=2),
        lambda s: s["stage2"].update(bias=[0.0]),
        lambda s: s["stage1"].update(scale=[0.0] * len(STAGE1)),
        lambda s: s["stage1"].update(mean=[float("nan")] * len(STAGE1)),
    ],
)
def test_damaged_arbiter_file_is_refused(damage: object) -> None:
    spec = _arbiter(True, "neural").to_json()
    damage(spec)  # type: ignore[operator]
    with pytest.raises(ValueError):
        Arbiter.from_json(spec)


def _auto(folder: Path, page: str) -> tuple[list[str], str]:
    options = ExtractOptions(engine="auto", with_metadata=False)
    tree = parse_page((FIXTURES / page).read_text(encoding="utf-8"), options).tree
    result = run_neural(NeuralExtractor.load(folder), tree, None, options)
    return [b.text for b in result.blocks], result.extractor


def test_auto_engine_follows_the_arbiter(tmp_path: Path) -> None:
    plain = _auto(_folder(tmp_path / "a", None), "article.html")
    assert plain[1] == "neural"
    # Stage 1 says trafilatura is not worth running: the neural output, as without arbiter.
    assert _auto(_folder(tmp_path / "b", _arbiter(False, "trafilatura")), "article.html") == plain
    assert _auto(_folder(tmp_path / "c", _arbiter(True, "neural")), "article.html") == plain
    options = ExtractOptions(engine="auto", with_metadata=False)
    tree = parse_page((FIXTURES / "article.html").read_text(encoding="utf-8"), options).tree
    traf = [b.text for b in run_trafilatura(tree, None, options).blocks]
    chosen = _auto(_folder(tmp_path / "d", _arbiter(True, "trafilatura")), "article.html")
    assert chosen == (traf, "trafilatura")
    union, extractor = _auto(_folder(tmp_path / "e", _arbiter(True, "union")), "article.html")
    assert extractor == "neural" and set(plain[0]) <= set(union)


def test_arbiter_must_name_a_file_in_the_folder(tmp_path: Path) -> None:
    folder = _folder(tmp_path, None)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["arbiter"] = "../elsewhere.json"
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError):
        NeuralExtractor.load(folder)
