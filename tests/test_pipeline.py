"""ExtractionPipeline pieces: settings, item merging, fingerprints kept in JOBDIR.

The pipeline as a whole runs in ``test_pipeline_crawl.py`` (a real crawl).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import scrapy
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler
from scrapy_maintext import Addon
from scrapy_maintext.document import Block, Document
from scrapy_maintext.extraction import fingerprint
from scrapy_maintext.pipelines.config import ExtractConfig, takes_body_bytes
from scrapy_maintext.pipelines.extraction import ExtractionPipeline
from scrapy_maintext.pipelines.items import merge_document
from scrapy_maintext.state.fingerprints import FINGERPRINTS_FILE, SeenFingerprints

DOC = Document(
    url="https://news.example/a",
    title="A title",
    text="Some text",
    body=[Block("p", "Some text")],
    extractor="trafilatura",
    fingerprint="0123456789abcdef",
)


def test_config_defaults_and_overrides() -> None:
    default = ExtractConfig.from_settings(Settings())
    assert (default.engine, default.html_field, default.url_field) == ("auto", "html", "url")
    assert default.workers >= 1 and default.dedup and not default.keep_html
    config = ExtractConfig.from_settings(
        Settings(
            {
                "EXTRACT_ENGINE": "trafilatura",
                "EXTRACT_WORKERS": "0",
                "EXTRACT_TIMEOUT": "2.5",
                "EXTRACT_HTML_FIELD": "body_html",
                "EXTRACT_KEEP_HTML": "true",
                "EXTRACT_MIN_TEXT_LENGTH": 200,
                "EXTRACT_INCLUDE_TABLES": False,
                "JOBDIR": "/tmp/job",
            }
        )
    )
    assert (config.engine, config.workers, config.timeout) == ("trafilatura", 0, 2.5)
    assert (config.html_field, config.keep_html, config.min_text_length) == ("body_html", True, 200)
    assert config.jobdir == "/tmp/job"
    assert config.options.engine == "trafilatura"
    assert config.options.include_tables is False


def test_config_rejects_unknown_engine() -> None:
    with pytest.raises(ValueError, match="EXTRACT_ENGINE"):
        ExtractConfig.from_settings(Settings({"EXTRACT_ENGINE": "gpt"}))


def test_pipeline_disabled_by_setting() -> None:
    crawler = get_crawler(settings_dict={"EXTRACT_ENABLED": False})
    with pytest.raises(NotConfigured):
        ExtractionPipeline.from_crawler(crawler)


def test_merge_keeps_item_fields_and_drops_html() -> None:
    item = {"url": "https://news.example/a?utm=x", "html": "<p>", "extra": 1, "status": 200}
    merged = merge_document(item, DOC, ExtractConfig.with_defaults())
    assert merged["url"] == "https://news.example/a?utm=x"
    assert (merged["extra"], merged["status"], merged["title"]) == (1, 200, "A title")
    assert merged["body"] == [{"kind": "p", "text": "Some text"}]
    assert "html" not in merged
    kept = merge_document(
        {"url": "u", "html": "<p>"}, DOC, ExtractConfig.with_defaults(keep_html=True)
    )
    assert kept["html"] == "<p>"


def test_merge_uses_source_date_and_title_only_when_the_page_has_none() -> None:
    item = {"url": "u", "html": "", "source_date": "2023-05-06T07:08:09Z", "source_title": "T"}
    undated = Document(text="x", title=None)
    merged = merge_document(dict(item), undated, ExtractConfig.with_defaults())
    assert (merged["date"], merged["title"]) == ("2023-05-06", "T")
    dated = Document(text="x", date="2024-01-02", title="Page title")
    merged = merge_document(dict(item), dated, ExtractConfig.with_defaults())
    assert (merged["date"], merged["title"]) == ("2024-01-02", "Page title")
    bad = merge_document(
        {"url": "u", "source_date": "last week"}, undated, ExtractConfig.with_defaults()
    )
    assert bad["date"] is None


def test_merge_never_blanks_existing_fields() -> None:
    merged = merge_document({"url": "u", "author": "Desk"}, DOC, ExtractConfig.with_defaults())
    assert merged["author"] == "Desk"


class PageItem(scrapy.Item):
    url = scrapy.Field()
    html = scrapy.Field()
    extra = scrapy.Field()


class FullItem(PageItem):
    locals().update({name: scrapy.Field() for name in Document().to_dict()})


def test_merge_turns_narrow_items_into_dicts_and_keeps_wide_ones() -> None:
    narrow = merge_document(
        PageItem(url="u", html="<p>", extra=2), DOC, ExtractConfig.with_defaults()
    )
    assert isinstance(narrow, dict) and narrow["extra"] == 2 and narrow["text"] == "Some text"
    wide = merge_document(
        FullItem(url="u", html="<p>", extra=3), DOC, ExtractConfig.with_defaults()
    )
    assert isinstance(wide, FullItem) and wide["text"] == "Some text" and "html" not in wide


def test_seen_fingerprints_survive_a_resumed_crawl(tmp_path: Path) -> None:
    text = "a story about a tidal lagoon that will power twelve thousand homes " * 5
    first = SeenFingerprints(max_distance=3, jobdir=str(tmp_path))
    assert first.check_and_add(fingerprint(text)) is None
    assert first.check_and_add(fingerprint(text)) == fingerprint(text)
    first.confirm(fingerprint(text))
    first.close()
    assert (tmp_path / FINGERPRINTS_FILE).read_text().split() == [fingerprint(text)]
    resumed = SeenFingerprints(max_distance=3, jobdir=str(tmp_path))
    assert resumed.check_and_add(fingerprint(text.upper())) == fingerprint(text)
    other = fingerprint("something else entirely, a ferry")
    assert resumed.check_and_add(other) is None
    resumed.confirm(other)
    resumed.close()
    assert len((tmp_path / FINGERPRINTS_FILE).read_text().split()) == 2


def test_fingerprint_of_an_item_never_exported_is_forgotten(tmp_path: Path) -> None:
    # Killed between extraction and export: the resumed crawl fetches the page again,
    # which must not then be a duplicate of itself.
    text = "the ferry timetable changes on the first of may for the summer season " * 4
    killed = SeenFingerprints(max_distance=3, jobdir=str(tmp_path))
    assert killed.check_and_add(fingerprint(text)) is None
    resumed = SeenFingerprints(max_distance=3, jobdir=str(tmp_path))
    assert resumed.check_and_add(fingerprint(text)) is None


@pytest.mark.parametrize(
    ("project", "expected"),
    [
        pytest.param({}, True, id="add-on defaults"),
        pytest.param({"EXTRACT_ENABLED": False}, False, id="extraction off"),
        pytest.param({"EXTRACT_KEEP_HTML": True}, False, id="html kept"),
        pytest.param({"EXTRACT_HTML_FIELD": "body"}, False, id="another html field"),
        pytest.param({"DISCOVERY_HTML_BYTES": False}, False, id="switched off"),
        pytest.param(
            {"ITEM_PIPELINES": {"scrapy_maintext.pipelines.extraction.ExtractionPipeline": None}},
            False,
            id="pipeline disabled",
        ),
    ],
)
def test_spiders_send_body_bytes_only_to_an_extraction_that_removes_them(
    project: dict[str, object], expected: bool
) -> None:
    settings = get_crawler(settings_dict={"ADDONS": {Addon: 500}, **project}).settings
    assert takes_body_bytes(settings) is expected
