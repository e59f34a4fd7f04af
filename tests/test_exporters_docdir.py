"""One file per document: DOCDIR_* settings, names and formats."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from lxml import etree
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler
from scrapy_maintext.document import Block, Document
from scrapy_maintext.exporters.docdir import DocDirPipeline, file_name, render

from tests.schema import tei_errors

ITEM = Document(
    url="https://news.example/a",
    title="A title",
    text="Heading\nSome text",
    body=[Block("head", "Heading", level=2), Block("p", "Some text")],
    extractor="trafilatura",
    fingerprint="0123456789abcdef",
).to_dict()


def pipeline(tmp_path: Path, **settings: str) -> DocDirPipeline:
    values = {"DOCDIR_PATH": str(tmp_path / "docs"), **settings}
    instance = DocDirPipeline.from_crawler(get_crawler(settings_dict=values))
    instance.open_spider()
    return instance


def test_disabled_without_path() -> None:
    with pytest.raises(NotConfigured):
        DocDirPipeline.from_crawler(get_crawler(settings_dict={}))


def test_rejects_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="DOCDIR_FORMAT"):
        pipeline(tmp_path, DOCDIR_FORMAT="pdf")


@pytest.mark.parametrize("fmt", ["tei", "txt", "json"])
def test_writes_one_file_named_by_url_hash(tmp_path: Path, fmt: str) -> None:
    instance = pipeline(tmp_path, DOCDIR_FORMAT=fmt)
    assert instance.process_item(ITEM) is ITEM
    (path,) = (tmp_path / "docs").iterdir()
    digest = hashlib.sha256(b"https://news.example/a").hexdigest()[:32]
    assert path.name == digest + {"tei": ".xml", "txt": ".txt", "json": ".json"}[fmt]
    assert path.read_bytes() == render(ITEM, fmt)
    if fmt == "tei":
        assert tei_errors(etree.parse(str(path)).getroot()) == ""
    if fmt == "json":
        assert json.loads(path.read_text("utf-8"))["body"][0] == {
            "kind": "head",
            "text": "Heading",
            "level": 2,
        }


def test_fingerprint_naming_and_items_without_url() -> None:
    assert file_name(ITEM, "fingerprint", "txt") == "0123456789abcdef.txt"
    assert file_name({"text": "x"}, "url", "tei") is None
