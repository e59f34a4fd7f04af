"""The shipped model loads and runs from an installed wheel (package data included)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from scrapy_maintext.neural.inference import DEFAULT_VERSION, MODELS_DIR, OFFERED_VERSIONS

#: Builds the wheel (and installs it).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "fixtures" / "neural" / "article.html"
MODEL_FILES = ("model.onnx", "config.json", "MODEL_CARD.md")

RUN = """
import sys
sys.path.insert(0, sys.argv[1])
import lxml.html
import scrapy_maintext.neural as neural
assert neural.__file__.startswith(sys.argv[1]), neural.__file__
tree = lxml.html.fromstring(open(sys.argv[2], encoding="utf-8").read())
result = neural.default_extractor().extract(tree)
print(neural.default_extractor().version, len(result.blocks))
"""


def loaded_versions() -> set[str]:
    """The default model, the model its cascade hands unsure pages to, if any, and the
    folders offered beside it (``EXTRACT_MODEL``)."""
    config = json.loads((MODELS_DIR / DEFAULT_VERSION / "config.json").read_text())
    following = (config.get("cascade") or {}).get("next")
    return {DEFAULT_VERSION, *OFFERED_VERSIONS} | ({following} if following else set())


def test_shipped_model_files_stay_under_10_mb() -> None:
    # Issue 30's budget: model file(s) under 10 MB in the wheel, all shipped folders together.
    size = sum((MODELS_DIR / v / "model.onnx").stat().st_size for v in loaded_versions())
    assert size < 10_000_000


def test_wheel_ships_model_files(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in MODEL_FILES:
        for version in sorted(loaded_versions()):
            assert f"scrapy_maintext/neural/models/{version}/{name}" in names


def test_wheel_ships_the_convention_furniture_lines(wheel: Path) -> None:
    # extraction/phrases.py reads an empty list when its file is missing: the wheel must
    # carry the lines, or an installed package would keep share bars and notices.
    with zipfile.ZipFile(wheel) as archive:
        data = json.loads(archive.read("scrapy_maintext/extraction/phrases.json"))
    assert len(data["lines"]) > 100 and len(data["leads"]) > 10


def test_wheel_ships_the_page_type_weights(wheel: Path) -> None:
    from scrapy_maintext.extraction.page_type import TypeModel

    with zipfile.ZipFile(wheel) as archive:
        data = json.loads(archive.read("scrapy_maintext/extraction/page_type.json"))
    assert len(TypeModel.from_json(data).types) == 7


def test_wheel_ships_only_loaded_models(wheel: Path) -> None:
    prefix = "scrapy_maintext/neural/models/"
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n.removeprefix(prefix).split("/")[0] for n in names if n.startswith(prefix)}
    assert shipped == loaded_versions()


def test_wheel_installs_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"scrapy_maintext"}


def test_wheel_ships_every_source_package(wheel: Path) -> None:
    # pyproject.toml lists packages explicitly (package-dir mapping): a new subpackage
    # that is not listed would silently be missing from the wheel.
    names = set(zipfile.ZipFile(wheel).namelist())
    mapping = {"crawler": "scrapy_maintext", "spiders": "scrapy_maintext/spiders"}
    mapping |= {"middlewares": "scrapy_maintext/middlewares", "models": "scrapy_maintext/models"}
    for folder, target in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.relative_to(ROOT / folder).as_posix()
            assert f"{target}/{relative}" in names, relative


def test_model_runs_from_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "-q",
        "--target",
        str(target),
        str(wheel),
    ]
    subprocess.run(cmd, check=True, timeout=300, capture_output=True)
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(target), str(FIXTURE)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    version, kept = proc.stdout.split()
    assert version == DEFAULT_VERSION
    assert int(kept) > 0
