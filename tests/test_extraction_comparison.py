"""Pages too big for trafilatura's readability/jusText comparison are extracted in time.

A page of 40,000 short paragraphs took 133 s in the stacked stage (jusText's paragraph
revision is quadratic in a run of short paragraphs) and hit the crawl's 30 s extraction
timeout, losing the article on it.
"""

from __future__ import annotations

import time

import lxml.html
from scrapy.utils.test import get_crawler
from scrapy_maintext import extract
from scrapy_maintext.document import Document
from scrapy_maintext.extraction.comparison import MAX_COMPARED_PARAGRAPHS, Bound, comparison_pays
from scrapy_maintext.extraction.engines import _Reference, run_neural
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.neural import REFERENCE_MAX_BLOCKS, NeuralExtractor
from scrapy_maintext.pipelines.extraction import ExtractionPipeline
from scrapy_maintext.vocabulary.names import Stat
from scrapy_maintext.vocabulary.settings import default_of

from tests.model_folders import STACKED_MODEL
from tests.slow_page import ARTICLE_ELEMENTS, ARTICLE_PHRASE
from tests.slow_page import short_paragraphs_page as _page

URL = "https://gazette.example/news/flood.html"
#: The crawl kills an extraction worker at EXTRACT_TIMEOUT; a page must cost well under it:
#: half of it in CPU seconds (before the bound: 133 s). CPU time, not wall time: on a loaded
#: machine the wall time of the same work grows with the load (4 s became 16 s with four
#: processes per core), which says nothing about the page.
WITHIN_SECONDS = default_of("EXTRACT_TIMEOUT") / 2


def _timed_extract(html: str, options: ExtractOptions | None = None) -> tuple[float, Document]:
    t0 = time.process_time()
    doc = extract(html, URL, options)
    return time.process_time() - t0, doc


def test_paragraphs_are_counted_up_to_the_bound() -> None:
    own = ARTICLE_ELEMENTS
    at_bound = lxml.html.fromstring(_page(MAX_COMPARED_PARAGRAPHS - own))
    assert sum(1 for _ in at_bound.iter("p", "div", "h1")) == MAX_COMPARED_PARAGRAPHS
    assert comparison_pays(at_bound)
    assert not comparison_pays(lxml.html.fromstring(_page(MAX_COMPARED_PARAGRAPHS - own + 1)))
    assert comparison_pays(None)


def test_page_of_40000_short_paragraphs_is_extracted_in_time() -> None:
    seconds, doc = _timed_extract(_page(40_000))
    assert seconds < WITHIN_SECONDS
    assert ARTICLE_PHRASE in doc.text


def test_trafilatura_engine_skips_the_comparison_and_says_so() -> None:
    options = ExtractOptions(engine="trafilatura")
    seconds, doc = _timed_extract(_page(40_000), options)
    assert seconds < WITHIN_SECONDS
    assert ARTICLE_PHRASE in doc.text
    assert doc.trafilatura_bounded == Bound.NO_COMPARISON
    crawler = get_crawler(settings_dict={"EXTRACT_WORKERS": 0})
    crawler.stats.open_spider()
    ExtractionPipeline(crawler)._count(doc)
    assert crawler.stats.get_value(Stat.EXTRACT_TRAFILATURA_BOUNDED + "no_comparison") == 1
    assert "trafilatura_bounded" not in doc.to_dict()


def test_small_pages_keep_the_comparison() -> None:
    _, doc = _timed_extract(_page(50), ExtractOptions(engine="trafilatura"))
    assert doc.trafilatura_bounded is None


def test_stacked_reference_skips_the_comparison_between_the_bounds() -> None:
    tree = lxml.html.fromstring(_page(MAX_COMPARED_PARAGRAPHS + 1_000))
    for options in (ExtractOptions(), ExtractOptions(favor_precision=True)):
        reference = _Reference(tree, URL, options, "trafilatura")
        t0 = time.process_time()
        assert ARTICLE_PHRASE in reference()
        assert time.process_time() - t0 < WITHIN_SECONDS
        assert reference.bounded == Bound.NO_COMPARISON


def test_stacked_model_reads_no_reference_on_giant_pages() -> None:
    stacked = NeuralExtractor.load(STACKED_MODEL)  # stacks trafilatura, no cascade
    assert stacked.needs_reference
    tree = lxml.html.fromstring(_page(REFERENCE_MAX_BLOCKS + 500))
    t0 = time.process_time()
    result = run_neural(stacked, tree, URL, ExtractOptions())
    assert time.process_time() - t0 < WITHIN_SECONDS
    assert result.trafilatura_bounded == Bound.NO_REFERENCE
