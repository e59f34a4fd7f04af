"""A cascade (v4's, with the shipped model first): a plain first model decides confident
pages without running trafilatura; unsure pages go to the stacked model, from the same blocks
and features."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lxml.html
import pytest
from scrapy.utils.test import get_crawler
from scrapy_maintext import extract
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.engines import _Reference, run_neural
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.neural import NeuralExtractor
from scrapy_maintext.neural.stack import trafilatura_text
from scrapy_maintext.pipelines.extraction import ExtractionPipeline

from tests.model_folders import STACKED_MODEL, cascade_model

FIXTURES = Path(__file__).parent / "fixtures" / "neural"
URL = "https://gazette.example/news/article.html"


class CountingReference:
    """trafilatura's text of a page, counting how often a model asked for it."""

    def __init__(self, tree: lxml.html.HtmlElement) -> None:
        self.tree, self.calls = tree, 0

    def __call__(self) -> str:
        self.calls += 1
        return trafilatura_text(self.tree, URL)


def _tree(name: str) -> lxml.html.HtmlElement:
    return lxml.html.fromstring((FIXTURES / name).read_text(encoding="utf-8"))


NEXT = str(STACKED_MODEL)


def test_confident_page_never_runs_trafilatura(tmp_path: Path) -> None:
    tree = _tree("article.html")
    reference = CountingReference(tree)
    cascade = NeuralExtractor.load(cascade_model(tmp_path, {"next": NEXT, "gate": 0.8}))
    result = cascade.extract(tree, URL, reference)
    assert not result.escalated and not result.fallback
    assert reference.calls == 0
    assert "four hundred volunteers" in "\n".join(b.text for b in result.blocks)


@pytest.mark.parametrize("name", ["article.html", "docs.html", "listing.html"])
def test_unsure_page_is_decided_by_the_next_model(tmp_path: Path, name: str) -> None:
    # Gate above any confidence: every page is escalated.
    next_dir = NEXT
    always = NeuralExtractor.load(cascade_model(tmp_path, {"next": next_dir, "gate": 1.01}))
    tree = _tree(name)
    reference = CountingReference(tree)
    result = always.extract(tree, URL, reference)
    assert result.escalated
    assert reference.calls == 1
    alone = NeuralExtractor.load(next_dir).extract(tree, URL, trafilatura_text(tree, URL))
    assert [b.to_dict() for b in result.blocks] == [b.to_dict() for b in alone.blocks]
    assert result.confidence == alone.confidence


@pytest.mark.parametrize(
    "spec",
    [
        {"gate": 0.5},
        {"next": "v2", "gate": 2.0},
        {"next": "v2", "gate": "high"},
        {"next": "v2", "gate": True},
        "v2",
    ],
    ids=["no-next", "gate-too-high", "gate-not-a-number", "gate-a-bool", "not-an-object"],
)
def test_bad_cascade_entries_are_refused_at_load(tmp_path: Path, spec: object) -> None:
    with pytest.raises(ValueError, match="cascade"):
        NeuralExtractor.load(cascade_model(tmp_path, spec))


def test_next_model_may_not_cascade_again(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    cascade = str(cascade_model(tmp_path / "a", {"next": NEXT, "gate": 0.8}))
    with pytest.raises(ValueError, match="cannot cascade"):
        NeuralExtractor.load(cascade_model(tmp_path, {"next": cascade, "gate": 0.5}))


def test_cascade_into_itself_is_refused(tmp_path: Path) -> None:
    # "next" names the model's own folder: refused before anything more is loaded.
    with pytest.raises(ValueError, match="cannot cascade"):
        NeuralExtractor.load(cascade_model(tmp_path, {"next": "first", "gate": 0.5}))


def test_reference_of_a_stacking_model_ignores_the_callers_options() -> None:
    # The stacking model was trained on trafilatura's defaults: favor_precision or no tables
    # change the fallback's text, not what the model reads.
    tree = _tree("listing.html")
    default = _Reference(tree, URL, ExtractOptions(), "trafilatura")
    precise = _Reference(tree, URL, ExtractOptions(favor_precision=True), "trafilatura")
    assert default() == precise() == trafilatura_text(tree, URL)
    assert default.stacked is not None and precise.stacked is None


def test_escalation_reaches_the_document_and_the_crawl_stats(tmp_path: Path) -> None:
    html = (FIXTURES / "article.html").read_text(encoding="utf-8")
    assert not extract(html, URL).escalated
    next_dir = NEXT
    always = NeuralExtractor.load(cascade_model(tmp_path, {"next": next_dir, "gate": 1.01}))
    tree = parse_page(html, ExtractOptions()).tree
    assert run_neural(always, tree, URL, ExtractOptions()).escalated
    crawler = get_crawler(settings_dict={"EXTRACT_WORKERS": 0})
    crawler.stats.open_spider()
    pipeline = ExtractionPipeline(crawler)
    doc = extract(html, URL)
    doc.escalated = True
    pipeline._count(doc)
    assert crawler.stats.get_value("extract/neural_escalated") == 1
    assert "escalated" not in doc.to_dict()


def test_models_that_segment_differently_cannot_cascade(tmp_path: Path) -> None:
    # The next model reuses the first one's blocks: one trained with hidden blocks kept
    # (config "segment": {"keep_hidden": true}) cannot follow one trained without.
    next_dir = NEXT
    folder = cascade_model(tmp_path, {"next": next_dir, "gate": 0.8})
    NeuralExtractor.load(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["segment"] = {"keep_hidden": True}
    hidden = tmp_path / "hidden"
    shutil.copytree(folder, hidden)
    (hidden / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match="keep_hidden"):
        NeuralExtractor.load(hidden)
