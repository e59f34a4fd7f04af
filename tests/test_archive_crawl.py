"""WARC_OUTPUT on a real crawl of the fixture site: every response archived, every document
leading to its own record, and ``maintext extract`` on the archive giving the same documents."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from scrapy_maintext.cli import main as maintext

from tests.crawl import NO_WAITS, run_crawl
from tests.schema import tei_errors
from tests.sites import Route, SiteOptions, TestSiteServer
from tests.warc_checks import decoded_payload, read_warc, sha1_digest

TEI = "{http://www.tei-c.org/ns/1.0}"


def _crawl(
    site: TestSiteServer, tmp_path: Path, outputs: tuple[str, ...] = (), **settings: str
) -> tuple[Any, Path]:
    warc_dir = tmp_path / "warc"
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domain": site.base_url},
        {**NO_WAITS, "DOWNLOAD_TIMEOUT": "1", "WARC_OUTPUT": str(warc_dir), **settings},
        extra_outputs=outputs,
    )
    assert result.returncode == 0, result.log[-3000:]
    return result, warc_dir


def test_crawl_archives_every_response_and_documents_lead_to_their_record(
    hostile_site: TestSiteServer, tmp_path: Path
) -> None:
    tei = tmp_path / "corpus.xml"
    result, warc_dir = _crawl(hostile_site, tmp_path, (f"{tei}:tei",))
    files = sorted(warc_dir.glob("*.warc.gz"))
    assert files
    records = [record for path in files for record in read_warc(path)]
    for path in files:
        assert read_warc(path)[0].type == "warcinfo"
    responses = {r.record_id: r for r in records if r.type == "response"}
    requests = [r for r in records if r.type == "request"]
    # A request record for every response, pointing at it.
    assert sorted(r.headers["WARC-Concurrent-To"] for r in requests) == sorted(responses)
    for response in responses.values():
        digest = sha1_digest(response.raw_payload)
        assert response.headers["WARC-Payload-Digest"] == digest, response.url
        assert response.headers["WARC-Date"]
    base = hostile_site.base_url
    archived = {r.url.removeprefix(base) for r in responses.values()}
    answered = {hit.path for hit in hostile_site.hits if hit.path != "/slow.html"}
    # robots.txt, every sitemap and feed, every page and every error answer the server gave.
    assert "/robots.txt" in archived
    assert answered <= archived, answered - archived
    statuses = {r.status for r in responses.values()}
    assert {200, 302, 404, 500, 429} <= statuses

    assert result.items
    assert result.stats["warc/documents"] == len(result.items)
    for item in result.items:
        headers, payload = decoded_payload(warc_dir / item["warc_file"], item["warc_offset"])
        assert headers["WARC-Type"] == "response"
        assert headers["WARC-Target-URI"] == item["final_url"]
        assert headers["WARC-Record-ID"] == f"<{item['warc_record_id']}>"
        assert headers["WARC-Payload-Digest"] == item["payload_digest"]
        assert item["status"] == 200
        assert item["fetched_at"].endswith("+00:00")
        assert payload

    # The TEI header holds the same provenance, and stays valid TEI.
    corpus = etree.parse(str(tei)).getroot()
    assert tei_errors(corpus) == ""
    by_url = {item["url"]: item for item in result.items}
    for document in corpus.iterfind(f"{TEI}TEI"):
        bibl = document.find(f"{TEI}teiHeader/{TEI}fileDesc/{TEI}sourceDesc/{TEI}bibl")
        assert bibl is not None
        idnos = {idno.get("type"): idno.text for idno in bibl.iterfind(f"{TEI}idno")}
        item = by_url[str(idnos["URL"])]
        assert idnos["WARC-file"] == item["warc_file"]
        assert idnos["WARC-offset"] == str(item["warc_offset"])
        assert idnos["WARC-Payload-Digest"] == item["payload_digest"]
        fetched = bibl.find(f"{TEI}date[@type='fetched']")
        assert fetched is not None and fetched.get("when") == item["fetched_at"]
        assert bibl.findtext(f"{TEI}note[@type='http-status']") == "200"


def test_extract_on_the_archive_reproduces_the_crawl(
    hostile_site: TestSiteServer, tmp_path: Path
) -> None:
    result, warc_dir = _crawl(hostile_site, tmp_path)
    out = tmp_path / "again.jsonl"
    status = maintext(["extract", str(warc_dir), "-o", str(out), "--workers", "0", "--no-progress"])
    assert status == 0
    again = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        again[record["url"]] = record
    fields = ("text", "body", "title", "author", "date", "sitename", "hostname", "description")
    fields += ("categories", "tags", "language", "license", "image", "extractor", "fingerprint")
    provenance = ("warc_file", "warc_offset", "warc_record_id", "payload_digest", "status")
    crawled = {item["final_url"] for item in result.items}
    # The same documents: those the crawl dropped as near-duplicates come back (extract has
    # no dedup), nothing else.
    assert crawled <= set(again)
    assert len(set(again) - crawled) == result.stats.get("extract/dropped/duplicate", 0)
    for item in result.items:
        document = again[item["final_url"]]
        for name in (*fields, *provenance, "fetched_at"):
            assert document[name] == item[name], (item["final_url"], name)


@pytest.fixture(scope="module")
def gzip_site() -> Iterator[TestSiteServer]:
    """A small site whose first article is sent gzip-encoded (Content-Encoding)."""
    with TestSiteServer(SiteOptions(articles=6, crawl_delay=None), host="127.0.0.3") as server:
        site = server.site
        assert site is not None
        path = f"/articles/{site.articles[0].slug}.html"
        route = site.routes[path]
        site.routes[path] = Route(
            gzip.compress(route.body),
            route.content_type,
            headers={"Content-Encoding": "gzip"},
        )
        yield server


def test_rotated_archive_with_a_content_encoded_page(
    gzip_site: TestSiteServer, tmp_path: Path
) -> None:
    gzip_site.reset()
    result, warc_dir = _crawl(gzip_site, tmp_path, WARC_MAX_SIZE="4000")
    files = sorted(warc_dir.glob("*.warc.gz"))
    assert len(files) >= 3
    # Stats as they stood when the spider closed (the last records may be written after).
    assert 3 <= result.stats["warc/files"] <= len(files)
    # Name order is time order: the warcinfo dates ascend with the names.
    dates = [read_warc(path)[0].headers["WARC-Date"] for path in files]
    assert dates == sorted(dates)
    for path in files:
        for record in read_warc(path):
            if record.type == "response":
                assert record.headers["WARC-Payload-Digest"] == sha1_digest(record.raw_payload)
    assert gzip_site.site is not None
    slug = gzip_site.site.articles[0].slug
    (encoded,) = [item for item in result.items if slug in item["final_url"]]
    record = next(
        r for r in read_warc(warc_dir / encoded["warc_file"]) if r.offset == encoded["warc_offset"]
    )
    # Stored as the server sent it: gzip, with its header; readers decode it.
    assert record.http_headers["Content-Encoding"] == "gzip"
    assert record.raw_payload.startswith(b"\x1f\x8b")
    assert encoded["text"]
    out = tmp_path / "again.jsonl"
    status = maintext(["extract", str(warc_dir), "-o", str(out), "--workers", "0", "--no-progress"])
    assert status == 0
    again = {d["url"]: d for d in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    for item in result.items:
        document = again[item["final_url"]]
        assert (document["text"], document["warc_file"], document["warc_offset"]) == (
            item["text"],
            item["warc_file"],
            item["warc_offset"],
        )


def test_round_trip_with_the_site_memory_on(hostile_site: TestSiteServer, tmp_path: Path) -> None:
    """A crawl with SITE_MEMORY_ENABLED and ``maintext extract --site-memory`` on its WARC
    files remove the same template blocks from the same pages."""
    result, warc_dir = _crawl(hostile_site, tmp_path, SITE_MEMORY_ENABLED="True")
    assert result.stats.get("extract/site_memory/blocks_removed", 0) > 0
    out = tmp_path / "again.jsonl"
    args = ["extract", str(warc_dir), "-o", str(out), "--workers", "0", "--no-progress"]
    assert maintext([*args, "--site-memory"]) == 0
    again = {d["url"]: d for d in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    for item in result.items:
        document = again[item["final_url"]]
        for name in ("text", "body", "fingerprint", "site_memory_removed", "warc_offset"):
            assert document[name] == item[name], (item["final_url"], name)
