"""A model folder may decode some predicted page types their own way (``"by_type"``:
threshold, smoothing, repeated groups), chosen by ``models.typed_decoding``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lxml.html
import pytest
from scrapy_maintext import ExtractOptions
from scrapy_maintext.extraction.engines import run_engine
from scrapy_maintext.extraction.page_type import PageType
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.decision import DecodeParams, typed_decodings
from scrapy_maintext.neural.groups import GroupParams
from scrapy_maintext.neural.inference import MODELS_DIR

ROWS = "".join(
    f"<li class='result'><h3>Result number {i} of the search</h3>"
    f"<p>Snippet {i}: a few words of what this page says about the query.</p></li>"
    for i in range(6)
)
PAGE = (
    "<html><body><nav><a href='/'>Home</a> <a href='/a'>About</a></nav>"
    "<article><h1>A headline</h1>"
    + "<p>A sentence of the article that says something of note. </p>" * 6
    + f"</article><ul class='results'>{ROWS}</ul><footer>Copyright</footer></body></html>"
)


def _folder(tmp_path: Path, by_type: object) -> Path:
    folder = tmp_path / "typed"
    shutil.copytree(MODELS_DIR / "v6", folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["by_type"] = by_type
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def test_a_type_with_its_own_threshold_decodes_so_and_others_as_before(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"listing": {"threshold": 0.0, "smooth_margin": 0.0}})
    extractor = NeuralExtractor.load(folder)
    assert extractor.by_type["listing"].params.threshold == 0.0
    tree = lxml.html.fromstring(PAGE)
    plain = extractor.extract(tree, None)
    article = extractor.extract(tree, None, page_type="article")
    listing = extractor.extract(tree, None, page_type="listing")
    assert [b.text for b in article.blocks] == [b.text for b in plain.blocks]
    # Threshold 0 keeps every block the repeated-run rule leaves.
    assert len(listing.blocks) > len(plain.blocks)
    assert {"Copyright", "Home About"} & {b.text for b in listing.blocks}
    # Below the folder's least probability, the type is not read.
    extractor.by_type_min_probability = 0.6
    unsure = extractor.extract(tree, None, page_type="listing", page_type_probability=0.5)
    assert [b.text for b in unsure.blocks] == [b.text for b in plain.blocks]
    extractor.by_type_min_probability = 0.0
    # The extraction engine passes the predicted type on.
    options = ExtractOptions(engine="neural", model=str(folder))
    engine = run_engine(tree, None, options, PageType("listing", 0.9))
    assert [b.text for b in engine.blocks] == [b.text for b in listing.blocks]


def test_missing_keys_keep_the_folder_decoding_and_groups_are_read() -> None:
    base = DecodeParams(0.4, 0.1, 0.0, 0)
    spec = {"collection": {"groups": {"min_rows": 3, "keep_share": 0.3}}}
    typed = typed_decodings(spec, base, GroupParams.from_config)["collection"]
    assert typed.params == base and typed.groups == GroupParams(3, 0.3)


@pytest.mark.parametrize(
    "spec",
    [[], {"listing": 0.3}, {"listing": {"threshold": 1.5}}, {"listing": {"threshold": True}}],
)
def test_bad_type_decodings_are_refused(spec: object) -> None:
    with pytest.raises(ValueError):
        typed_decodings(spec, DecodeParams(0.4, 0.1, 0.0, 0), GroupParams.from_config)
