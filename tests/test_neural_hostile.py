"""The neural extractor never raises or hangs on hostile input."""

from __future__ import annotations

import random
import time
from typing import Any

import lxml.html
import pytest
from lxml import etree
from scrapy_maintext.neural import NeuralResult, default_extractor

#: Generous bound of CPU time per hostile page on a slow CI core (CPU time: a machine
#: loaded by other work stretches the wall clock, not the work done).
MAX_SECONDS = 20.0


def _parse(html: str | bytes) -> Any:
    try:
        return lxml.html.fromstring(html)
    except (etree.ParserError, ValueError):
        return None


def _extract(tree: Any) -> NeuralResult:
    t0 = time.process_time()
    result = default_extractor().extract(tree)
    assert time.process_time() - t0 < MAX_SECONDS
    assert isinstance(result, NeuralResult)
    assert 0.0 <= result.confidence <= 1.0
    return result


def _deep_tree(depth: int) -> Any:
    """A tree nested ``depth`` levels deep (the HTML parser itself stops at 256 levels)."""
    builder = etree.TreeBuilder()
    builder.start("html", {})
    builder.start("body", {})
    tags = ["div" if i % 2 else "span" for i in range(depth)]
    for tag in tags:
        builder.start(tag, {})
        builder.data("deep ")
    for tag in reversed(tags):
        builder.end(tag)
    builder.end("body")
    builder.end("html")
    return builder.close()


def test_deep_nesting_parsed_and_built() -> None:
    _extract(_parse("<div>" * 100_000 + "text" + "</div>" * 100_000))
    _extract(_deep_tree(100_000))


def test_huge_page() -> None:
    paragraph = "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>"
    html = "<html><body>" + paragraph * (20_000_000 // len(paragraph)) + "</body></html>"
    _extract(_parse(html))
    _extract(_parse("<html><body><p>" + "word " * 4_000_000 + "</p></body></html>"))


def test_binary_garbage() -> None:
    rng = random.Random(7)
    data = bytes(rng.randrange(256) for _ in range(200_000))
    tree = _parse(data)
    if tree is not None:
        _extract(tree)
    _extract(_parse(data.decode("latin-1")))


@pytest.mark.parametrize(
    "html",
    [
        "<html></html>",
        "<html><head><script>var a = 1;</script></head><body>"
        "<script>document.write('x')</script><style>p{}</style><noscript>no</noscript></body></html>",
    ],
)
def test_nothing_to_find_falls_back(html: str) -> None:
    result = _extract(_parse(html))
    assert result.blocks == []
    assert result.fallback


def test_not_a_tree() -> None:
    assert _extract(None).fallback
    assert _extract(_parse("")).fallback
    assert _extract("<p>a string, not a tree</p>").fallback
