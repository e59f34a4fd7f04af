"""Feed exporters (tei, txt, Scrapy's json/jsonl) against golden files, TEI against the schema.

Regenerate the golden files with ``UPDATE_GOLDEN=1 pytest tests/test_exporters.py``.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trafilatura
from lxml import etree
from scrapy.exporters import BaseItemExporter, JsonItemExporter, JsonLinesItemExporter
from scrapy_maintext.document import Block, Document
from scrapy_maintext.exporters import TeiItemExporter, TxtItemExporter, build_tei
from scrapy_maintext.exporters.markdown import MarkdownItemExporter
from scrapy_maintext.exporters.tei import TEI_NS
from scrapy_maintext.exporters.txt import DOCUMENT_SEPARATOR

from tests.schema import tei_errors

FIXTURES = Path(__file__).parent / "fixtures" / "extraction"
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
#: Golden files hold this instead of the installed trafilatura version.
VERSION_PLACEHOLDER = b"TRAFILATURA_VERSION"


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((FIXTURES / "documents.json").read_text("utf-8"))
    return data


def export(exporter_class: Callable[..., BaseItemExporter], items: list[Any]) -> bytes:
    buffer = io.BytesIO()
    exporter = exporter_class(buffer)
    exporter.start_exporting()
    for item in items:
        exporter.export_item(item)
    exporter.finish_exporting()
    return buffer.getvalue()


def check_golden(name: str, output: bytes) -> None:
    version = f'version="{trafilatura.__version__}"'.encode()
    output = output.replace(version, b'version="' + VERSION_PLACEHOLDER + b'"')
    path = GOLDEN / name
    if UPDATE:
        path.write_bytes(output)
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1"
    assert output == path.read_bytes(), f"{name} differs from its golden file"


@pytest.mark.parametrize(
    ("exporter_class", "golden"),
    [
        (TeiItemExporter, "corpus.xml"),
        (TxtItemExporter, "corpus.txt"),
        (MarkdownItemExporter, "corpus.md"),
        (JsonLinesItemExporter, "corpus.jsonl"),
        (JsonItemExporter, "corpus.json"),
    ],
)
def test_exporter_matches_golden(
    records: list[dict[str, Any]], exporter_class: Callable[..., BaseItemExporter], golden: str
) -> None:
    check_golden(golden, export(exporter_class, records))


def test_tei_corpus_and_every_document_are_valid_tei(records: list[dict[str, Any]]) -> None:
    corpus = etree.fromstring(export(TeiItemExporter, records))
    assert corpus.tag == f"{{{TEI_NS}}}teiCorpus"
    documents = corpus.findall(f"{{{TEI_NS}}}TEI")
    assert len(documents) == len(records)
    assert tei_errors(corpus) == ""
    for record in records:
        assert tei_errors(build_tei(record)) == ""


def test_tei_keeps_header_fields_and_body_structure(records: list[dict[str, Any]]) -> None:
    tei = build_tei(records[0])
    ns = {"t": TEI_NS}
    assert tei.findtext(".//t:titleStmt/t:title", namespaces=ns) == records[0]["title"]
    assert tei.findtext(".//t:titleStmt/t:author", namespaces=ns) == "Mara Lindqvist"
    assert tei.find(".//t:publicationStmt/t:date", namespaces=ns).get("when") == "2024-03-05"
    assert (
        tei.findtext(".//t:publicationStmt/t:idno[@type='URL']", namespaces=ns)
        == (records[0]["url"])
    )
    assert tei.findtext(".//t:licence", namespaces=ns) == records[0]["license"]
    assert tei.findtext(".//t:publisher", namespaces=ns) == "Harbour Gazette"
    apps = tei.findall(".//t:appInfo/t:application", namespaces=ns)
    assert apps[1].get("ident") == "trafilatura"
    body = tei.find(".//t:body", namespaces=ns)
    # The headline is the header's title only (the text convention); the body's headings
    # are the article's own.
    assert [h.text for h in body.iterfind(".//t:head", namespaces=ns)] == [
        "What the lagoon involves",
        "Costs at a glance",
    ]
    assert len(body.findall(".//t:list/t:item", namespaces=ns)) == 3
    assert len(body.findall(".//t:table/t:row", namespaces=ns)) == 3
    assert body.find(".//t:quote", namespaces=ns) is not None
    code = body.find(".//t:ab[@type='code']", namespaces=ns)
    assert code.text.startswith("turbines = 16\n")
    comments = body.find("t:div[@type='comments']", namespaces=ns)
    assert [p.text for p in comments] == ["Great news for the town.", "What about the birds?"]


def test_tei_neural_document_names_model_version(records: list[dict[str, Any]]) -> None:
    tei = build_tei(records[1])
    app = tei.findall(f".//{{{TEI_NS}}}application")[1]
    assert (app.get("ident"), app.get("version")) == ("neural", "2024.1")
    assert app.findtext(f"{{{TEI_NS}}}desc[@type='version']") == "neural-2024.1"
    assert tei.get("{http://www.w3.org/XML/1998/namespace}lang") == "de"


@pytest.mark.parametrize(
    "item",
    [
        Document(url="https://x.example/", text="only text, no body"),
        Document(),
        {"url": "https://x.example/", "body": [Block("head", "Heading only", level=2)]},
        {"title": "\x00\x1b bad \ud800 chars", "text": "a\x0bb", "date": "yesterday"},
        {"body": [{"kind": "row", "text": "", "cells": []}], "categories": "single"},
    ],
    ids=["text-only", "empty", "heading-only", "control-chars", "odd-values"],
)
def test_tei_is_valid_for_sparse_and_hostile_items(item: Any) -> None:
    assert tei_errors(build_tei(item)) == ""


def test_txt_layout(records: list[dict[str, Any]]) -> None:
    text = export(TxtItemExporter, records).decode("utf-8")
    documents = text.split(DOCUMENT_SEPARATOR + "\n")[1:]
    assert len(documents) == len(records)
    header, body = documents[0].split("\n" + "-" * 72 + "\n", 1)
    assert header.splitlines()[0] == f"URL: {records[0]['url']}"
    assert "Date: 2024-03-05" in header.splitlines()
    assert "Tags: tidal power, estuary, council" in header.splitlines()
    assert body.rstrip("\n") == records[0]["text"]


def test_json_lines_serialise_blocks_and_documents() -> None:
    block = Block("row", "a | b", cells=("a", "b"))
    items: list[Any] = [{"url": "u", "body": [block]}, Document(url="v", body=[block])]
    lines = export(JsonLinesItemExporter, items).decode("utf-8").splitlines()
    first, second = (json.loads(line) for line in lines)
    assert first["body"] == [{"kind": "row", "text": "a | b", "level": 0, "cells": ["a", "b"]}]
    assert second["url"] == "v" and second["body"][0]["cells"] == ["a", "b"]


def test_document_to_dict_is_every_exported_field_as_plain_data() -> None:
    doc = Document(
        url="u",
        title="t",
        categories=["c"],
        tags=["x", "y"],
        text="h\np",
        body=[Block("head", "h", level=2), Block("p", "p")],
        extractor="neural",
        confidence=0.5,
        neural_error="boom",
        notes=["nesting-cut"],
    )
    data = doc.to_dict()
    expected = dataclasses.asdict(doc)
    internal_fields = ("neural_error", "notes", "escalated", "trafilatura_bounded")
    for internal in (*internal_fields, "needs_javascript", "render_failure"):
        del expected[internal]
    expected["body"] = [{"kind": "head", "text": "h", "level": 2}, {"kind": "p", "text": "p"}]
    assert list(data) == list(expected) and data == expected
    # Copies: changing the dict leaves the Document as it was.
    data["tags"].append("z")
    data["categories"].clear()
    assert doc.tags == ["x", "y"] and doc.categories == ["c"]
