"""The page type (issue 39): predicted on every page, in every output, and the text
convention's article rules gated by it: a listing keeps its items' bylines and dates, an
article loses them. Fixture pages written for these tests (tests/fixtures/convention)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import numpy as np
import pytest
from scrapy_maintext.cli import main as maintext_main
from scrapy_maintext.document import Block
from scrapy_maintext.exporters import build_tei
from scrapy_maintext.exporters.tei import TEI_NS
from scrapy_maintext.extraction import ExtractOptions, extract
from scrapy_maintext.extraction import page_type as pt
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.convention import Convention, PageFacts, judge
from scrapy_maintext.extraction.page_declared import DECLARED_PRODUCTS, declares_a_product
from scrapy_maintext.extraction.second_opinion import (
    THIN_CHARS,
    prefers_other,
    wants_second_opinion,
)
from scrapy_maintext.report.sites import SiteReport

from tests.schema import tei_errors

FIXTURES = Path(__file__).parent / "fixtures" / "convention"
LISTING = (FIXTURES / "listing.html").read_text("utf-8")
LISTING_URL = "https://ferries.example/category/crew/"
NEWS = (FIXTURES / "news.html").read_text("utf-8")
NEWS_URL = "https://courier.example/news/ferry.html"
MEMBERS = ("Anna Berg", "Carl Dahl", "Karl Lund", "Petra Quist")


def test_the_shipped_weights_load_and_read_the_features_of_a_page() -> None:
    model = pt.shipped_model()
    assert model.types == pt.PAGE_TYPES
    tree = parse_page(LISTING, ExtractOptions()).tree
    features = pt.page_features(tree, LISTING_URL)
    assert features.shape == (len(pt.feature_names()),)
    probs = model.probabilities(features)
    assert probs.shape == (len(pt.PAGE_TYPES),) and abs(probs.sum() - 1) < 1e-9
    data = json.loads(pt.WEIGHTS.read_text("utf-8"))
    data["features"] = data["features"][:-1]
    with pytest.raises(ValueError, match="other features"):
        pt.TypeModel.from_json(data)


@pytest.mark.parametrize("engine", ["auto", "trafilatura"])
def test_a_listing_keeps_its_items_and_an_article_loses_its_byline(engine: str) -> None:
    options = ExtractOptions(engine=engine)
    listing = extract(LISTING, LISTING_URL, options)
    assert listing.page_type is not None and listing.page_type != "article"
    assert listing.page_type_probability is not None
    assert 0 < listing.page_type_probability <= 1
    for name in MEMBERS:
        assert name in listing.text, name
    news = extract(NEWS, NEWS_URL, options)
    assert news.page_type == "article"
    assert "Jane Doe" not in news.text
    assert "Updated: 12 March 2025" not in news.text


def test_the_listings_bylines_and_dates_are_its_text() -> None:
    """The neural engine keeps every member's "By ..." and "Updated ..." line on the
    listing; without the page type (EXTRACT_PAGE_TYPES off) the article rules take them."""
    typed = extract(LISTING, LISTING_URL)
    untyped = extract(LISTING, LISTING_URL, ExtractOptions(page_types=False))
    assert untyped.page_type is None and untyped.page_type_probability is None
    for name in MEMBERS:
        assert f"By {name}" in typed.text
        assert f"By {name}" not in untyped.text
    assert typed.text.count("Updated ") == 10
    assert "Updated " not in untyped.text


def test_the_gate_is_one_switch_in_judge() -> None:
    blocks = [
        Block("head", "Crew", level=1),
        Block("p", "By Anna Berg"),
        Block("p", "Updated 12 March 2025"),
        Block("p", "Share on"),
    ]
    facts = PageFacts.of("Crew", None)
    article = judge(blocks, facts)
    listing = judge(blocks, facts, article=False)
    assert article == [Convention.TITLE, Convention.BYLINE, Convention.DATELINE, None]
    # The headline and furniture lines leave every page; the rest stays on a listing.
    assert listing[:3] == [Convention.TITLE, None, None]
    assert article[3] == listing[3]


def test_article_rules_follow_the_type_and_its_threshold() -> None:
    assert pt.article_rules(pt.PageType("article", 0.3), 0.9)
    assert not pt.article_rules(pt.PageType("listing", 0.8), 0.5)
    assert pt.article_rules(pt.PageType("listing", 0.4), 0.5)
    assert "article rules off" in pt.describe("listing", 0.99) or pt.ARTICLE_THRESHOLD > 0.99
    assert "article rules on" in pt.describe("article", 0.99)
    assert "not predicted" in pt.describe(None, None)


def test_page_type_is_a_json_field_and_a_tei_class_code() -> None:
    doc = extract(LISTING, LISTING_URL)
    record = doc.to_dict()
    assert record["page_type"] == doc.page_type
    assert record["page_type_probability"] == doc.page_type_probability
    json.dumps(record)
    tei = build_tei(record)
    assert tei_errors(tei) == ""
    (code,) = tei.iter(f"{{{TEI_NS}}}classCode")
    assert code.get("scheme") == "#page-type" and code.text == doc.page_type
    assert float(code.get("cert")) == pytest.approx(doc.page_type_probability, abs=1e-3)


def test_the_report_counts_page_types_per_site() -> None:
    site = SiteReport("https://ferries.example")
    site.add_document("neural", "text", "en", None, "listing")
    site.add_document("neural", "text", "en", None, "article")
    site.add_document("neural", "text", "en", None, None)
    assert site.to_dict()["page_types"] == {"article": 1, "listing": 1, "unknown": 1}


def test_maintext_explain_shows_the_type_and_the_rules_it_turned_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "listing.html"
    page.write_text(LISTING, encoding="utf-8")
    out = tmp_path / "explained.html"
    assert maintext_main(["explain", str(page), "-o", str(out)]) == 0
    shown = out.read_text("utf-8")
    doc = extract(LISTING, page.as_uri())
    assert "page type" in shown
    assert escape(pt.describe(doc.page_type, doc.page_type_probability)) in shown
    assert "page type" in capsys.readouterr().err


def test_a_thin_text_asks_for_a_second_opinion_and_keeps_the_longer() -> None:
    assert wants_second_opinion(0, 5000)
    assert not wants_second_opinion(0, 0)
    assert wants_second_opinion(THIN_CHARS - 1, 100 * THIN_CHARS)
    assert not wants_second_opinion(THIN_CHARS - 1, THIN_CHARS)  # most of a small page
    assert not wants_second_opinion(THIN_CHARS + 1, 100 * THIN_CHARS)
    assert prefers_other("", "some text")
    assert not prefers_other("a longer text here", "short")


def test_features_of_an_empty_page_are_finite() -> None:
    tree = parse_page("<html><body></body></html>", ExtractOptions()).tree
    assert np.isfinite(pt.page_features(tree, None)).all()
    assert pt.predict(tree, None).name in pt.PAGE_TYPES


def test_a_product_page_goes_to_trafilatura_in_auto() -> None:
    """Shop pages are trafilatura's (``page_type.TRAFILATURA_TYPES``): the neural model is not
    asked; ``engine="neural"`` still asks it, and without page types ``auto`` does."""
    html = (FIXTURES / "product.html").read_text("utf-8")
    url = "https://shop.ferries.example/products/harbour-wool-socks"
    routed = extract(html, url)
    assert routed.page_type == "product"
    assert routed.extractor == "trafilatura" and routed.model_version is None
    assert "Warm socks knitted" in routed.text
    assert extract(html, url, ExtractOptions(engine="neural")).extractor == "neural"
    assert extract(html, url, ExtractOptions(page_types=False)).model_version is not None


def _shop_page(declared: int, also: str = "") -> str:
    """A page whose structure is a brand's marketing page (sections of running text, no
    price list), declaring ``declared`` products in its JSON-LD (and ``also``'s type)."""
    ld = ", ".join(f'{{"@type": "Product", "name": "Ferry {i}"}}' for i in range(declared))
    ld += f', {{"@type": "{also}"}}' if also else ""
    sections = "".join(
        f"<section><h2>Part {i}</h2><p>{'Quiet engines and wide decks for every crossing. ' * 6}"
        "</p></section>"
        for i in range(6)
    )
    return (
        f'<html><head><script type="application/ld+json">[{ld}]</script></head><body>'
        "<nav><a href='/'>Home</a><a href='/about'>About</a><a href='/contact'>Contact</a></nav>"
        f"<h1>Harbour Ferry</h1>{sections}</body></html>"
    )


@pytest.mark.parametrize("declared", [1, 2])
def test_a_page_that_declares_one_product_is_a_product_page(declared: int) -> None:
    """A declared product makes a product page (``declares_a_product``), whatever its
    structure says, with the model's probability of the product type."""
    url = "https://ferries.example/harbour-ferry/"
    tree = parse_page(_shop_page(declared), ExtractOptions()).tree
    inputs = pt.page_inputs(tree, url)
    assert inputs.products == declared
    model = pt.shipped_model()
    probs = model.probabilities(inputs.features)
    assert model.types[int(np.argmax(probs))] != "product"  # the structure alone says other
    found = pt.predict(tree, url)
    assert found.name == "product"
    assert found.probability == round(float(probs[pt.PAGE_TYPES.index("product")]), 3)
    assert pt.routes_to_trafilatura(found)


def test_a_list_of_declared_products_is_left_to_the_model() -> None:
    tree = parse_page(_shop_page(DECLARED_PRODUCTS + 1), ExtractOptions()).tree
    inputs = pt.page_inputs(tree, "https://ferries.example/harbour-ferry/")
    assert inputs.products == DECLARED_PRODUCTS + 1
    assert not declares_a_product(inputs.products)
    assert declares_a_product(1) and not declares_a_product(0)
    model = pt.shipped_model()
    expected = model.predict(inputs.features)
    assert pt.predict(tree, "https://ferries.example/harbour-ferry/") == expected


def test_microdata_products_count_as_declared() -> None:
    html = (
        '<html><body><div itemscope itemtype="https://schema.org/Product">'
        "<h1 itemprop='name'>Socks</h1><span itemprop='price'>12.00</span></div></body></html>"
    )
    tree = parse_page(html, ExtractOptions()).tree
    assert pt.page_inputs(tree, None).products == 1


def test_an_article_that_declares_the_product_it_reviews_is_left_to_the_model() -> None:
    url = "https://ferries.example/harbour-ferry/"
    tree = parse_page(_shop_page(1, also="Review"), ExtractOptions()).tree
    assert pt.page_inputs(tree, url).products == 1  # a review is no article
    tree = parse_page(_shop_page(1, also="NewsArticle"), ExtractOptions()).tree
    inputs = pt.page_inputs(tree, url)
    assert inputs.products == 0
    assert pt.predict(tree, url) == pt.shipped_model().predict(inputs.features)
