"""The whole product on the fixture site: ``scrapy crawl sitemap`` → items, TEI and text."""

from __future__ import annotations

import statistics
from pathlib import Path

from lxml import etree
from scrapy_maintext.models.metrics import token_f1, tokens

from tests.crawl import NO_WAITS, run_crawl
from tests.schema import tei_errors
from tests.sites import TestSiteServer

TEI_NS = "{http://www.tei-c.org/ns/1.0}"
#: The issue's bar for the mean token F1 of ``text`` against the pages' real main content.
MIN_MEAN_F1 = 0.85


def test_sitemap_crawl_to_jsonl_tei_and_text(hostile_site: TestSiteServer, tmp_path: Path) -> None:
    site = hostile_site.site
    assert site is not None
    tei, txt = tmp_path / "corpus.xml", tmp_path / "corpus.txt"
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": hostile_site.base_url},
        {**NO_WAITS, "DOWNLOAD_TIMEOUT": "1"},
        extra_outputs=(f"{tei}:tei", f"{txt}:txt"),
    )
    assert result.returncode == 0, result.log[-3000:]
    by_path = {item["url"].removeprefix(hostile_site.base_url): item for item in result.items}
    assert set(by_path) == site.expected_pages

    # Every document has a language, read from its text (the demo site is English but for
    # its German "about" page).
    for item in result.items:
        expected = "de" if "/de/" in item["url"] else "en"
        assert item["language"] == expected, item["url"]
        assert 0.5 < item["language_confidence"] <= 1
    scores = []
    for article in site.articles:
        item = by_path[f"/articles/{article.slug}.html"]
        assert item["title"] == article.title
        assert item["extractor"] in ("neural", "trafilatura")
        assert "html" not in item
        scores.append(token_f1(tokens(item["text"]), tokens(article.main_text())))
    assert statistics.mean(scores) >= MIN_MEAN_F1, scores

    news = site.articles[6]  # listed in the news sitemap
    item = by_path[f"/articles/{news.slug}.html"]
    assert item["source_date"] == f"{news.date}T08:00:00+00:00"
    assert item["date"] == news.date

    corpus = etree.parse(str(tei)).getroot()
    documents = corpus.findall(f"{TEI_NS}TEI")
    assert len(documents) == len(result.items)
    assert tei_errors(corpus) == ""
    text = txt.read_text(encoding="utf-8")
    for item in result.items:
        assert f"URL: {item['url']}" in text
    assert result.stats["extract/items"] == len(result.items)
