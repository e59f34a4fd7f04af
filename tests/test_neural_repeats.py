"""A second rendition of kept content is dropped; other repeats stay."""

from __future__ import annotations

import lxml.html
import numpy as np
from scrapy_maintext import extract
from scrapy_maintext.neural import default_extractor
from scrapy_maintext.neural.repeats import drop_repeated_runs
from scrapy_maintext.neural.segment import segment

DESCRIPTION = (
    "<p>Each mug is thrown on the wheel by hand and glazed in small batches in our studio.</p>"
    "<p>Stoneware, about 350 ml, safe in the dishwasher and the microwave oven.</p>"
    "<p>Every piece differs a little in its speckles, so yours will be unique.</p>"
)


def _kept_texts(html: str, keep: list[bool] | None = None) -> list[str]:
    raw = segment(lxml.html.fromstring(html))
    mask = np.array(keep if keep is not None else [True] * len(raw))
    out = drop_repeated_runs(raw, mask)
    return [b.text for b, k in zip(raw, out, strict=True) if k]


def test_run_repeated_from_another_container_is_dropped() -> None:
    html = (
        f"<html><body><h1>White mug</h1><div class='desktop'>{DESCRIPTION}</div>"
        f"<div class='mobile'>{DESCRIPTION}</div><p>Shipping in 3 days.</p></body></html>"
    )
    texts = _kept_texts(html)
    assert len(texts) == 5
    assert texts[0] == "White mug" and texts[-1] == "Shipping in 3 days."
    assert len(set(texts)) == 5


def test_repeats_match_across_case_and_whitespace_and_min_run_is_honoured() -> None:
    second = DESCRIPTION.upper().replace(" ", "  ")
    html = f"<html><body><div>{DESCRIPTION}</div><div>{second}</div></body></html>"
    assert len(_kept_texts(html)) == 3
    raw = segment(lxml.html.fromstring(html))
    assert drop_repeated_runs(raw, np.ones(6, dtype=bool), min_run=4).all()


def test_repeats_under_one_parent_stay() -> None:
    html = (
        "<html><body><div><p>No answer.</p><p>No answer.</p><p>No answer.</p></div></body></html>"
    )
    assert _kept_texts(html) == ["No answer."] * 3


def test_a_lone_repeated_line_stays() -> None:
    html = (
        "<html><body><ul><li>Setting up</li><li>Usage</li></ul>"
        "<h2>Setting up</h2><p>Install it.</p><h2>Usage</h2><p>Run it.</p></body></html>"
    )
    assert _kept_texts(html) == [
        "Setting up",
        "Usage",
        "Setting up",
        "Install it.",
        "Usage",
        "Run it.",
    ]


def test_only_kept_blocks_count_as_first_copies() -> None:
    html = f"<html><body><div>{DESCRIPTION}</div><div>{DESCRIPTION}</div></body></html>"
    # The model dropped the first rendition: the second is the only one kept and stays.
    assert len(_kept_texts(html, [False] * 3 + [True] * 3)) == 3


def test_extract_keeps_a_duplicated_description_once() -> None:
    page = (
        "<html><head><title>White mug</title></head><body><nav><a href='/'>Shop</a></nav>"
        f"<main><h1>White speckle mug</h1><div class='d-none d-md-block'>{DESCRIPTION}</div>"
        f"<div class='d-md-none'>{DESCRIPTION}</div></main><footer>(c) Ghost Shop</footer>"
        "</body></html>"
    )
    result = default_extractor().extract(lxml.html.fromstring(page))
    assert result.decided is not None and result.segments is not None
    decided = [b.text for b, k in zip(result.segments, result.decided, strict=True) if k]
    # The model keeps both renditions; the rule leaves one.
    assert (
        decided.count("Stoneware, about 350 ml, safe in the dishwasher and the microwave oven.")
        == 2
    )
    # Where nothing repeats, the result keeps exactly what the model decided.
    plain = default_extractor().extract(lxml.html.fromstring(page.replace(DESCRIPTION, "", 1)))
    assert plain.decided is not None and plain.segments is not None
    assert [b.text for b in plain.blocks] == [
        b.text for b, k in zip(plain.segments, plain.decided, strict=True) if k
    ]
    doc = extract(page, url="https://shop.example/mug")
    assert doc.extractor == "neural"
    assert doc.text.count("Stoneware, about 350 ml") == 1
    assert doc.text.count("thrown on the wheel by hand") == 1
