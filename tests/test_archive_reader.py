"""WARC files with a damaged record in the middle: the records after it are still read."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from scrapy_maintext.archive.reader import Damage, read_records
from scrapy_maintext.cli.inputs import InputProblems, warc_documents
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from tests.test_cli import maintext

PAGE = b"<html><body><article><h1>%s</h1><p>" + b"A paragraph of the page. " * 30 + b"</p>"
HTTP = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"


def _record(url: str, gz: bool) -> bytes:
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gz)
    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    body = PAGE % url.encode()
    record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http)
    writer.write_record(record)
    return out.getvalue()


def _no_target_uri(gz: bool) -> bytes:
    """A response record without WARC-Target-URI: warcio fails on it."""
    block = HTTP + PAGE % b"lost"
    head = (
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:0>\r\n"
        b"WARC-Date: 2026-01-01T00:00:00Z\r\n"
        b"Content-Type: application/http; msgtype=response\r\n"
        b"Content-Length: %d\r\n\r\n" % len(block)
    )
    record = head + block + b"\r\n\r\n"
    return gzip.compress(record) if gz else record


def _corrupt_member(at: int | None = None) -> bytes:
    """A gzip member with 28 bytes zeroed at ``at`` (None: in its middle)."""
    member = bytearray(_record("https://a.example/corrupt", gz=True))
    where = len(member) // 2 if at is None else at
    member[where : where + 28] = b"\x00" * 28
    return bytes(member)


def _urls(data: bytes) -> tuple[list[str], list[Damage]]:
    damaged: list[Damage] = []

    def url(record: object, offset: int) -> str | None:
        if record.rec_type != "response":  # type: ignore[attr-defined]
            return None
        record.content_stream().read()  # type: ignore[attr-defined]
        return str(record.rec_headers.get_header("WARC-Target-URI"))  # type: ignore[attr-defined]

    return list(read_records(io.BytesIO(data), url, damaged)), damaged


@pytest.mark.parametrize("gz", [True, False])
def test_a_record_without_target_uri_costs_that_record_only(gz: bool) -> None:
    first = _record("https://a.example/1", gz)
    urls, damaged = _urls(first + _no_target_uri(gz) + _record("https://a.example/2", gz))
    assert urls == ["https://a.example/1", "https://a.example/2"]
    assert [d.offset for d in damaged] == [len(first)]
    assert "AttributeError" in damaged[0].error


@pytest.mark.parametrize("where", [12, None], ids=["near-its-start", "in-its-middle"])
def test_a_corrupt_gzip_member_costs_that_record_only(where: int | None) -> None:
    first = _record("https://a.example/1", True)
    data = first + _corrupt_member(where)
    data += _record("https://a.example/2", True) + _record("https://a.example/3", True)
    urls, damaged = _urls(data)
    assert urls == ["https://a.example/1", "https://a.example/2", "https://a.example/3"]
    assert [(d.offset, d.skipped, d.rest) for d in damaged] == [(len(first), True, False)]


def test_a_whole_file_gzip_is_read_to_its_first_record_and_reported() -> None:
    plain = b"".join(_record(f"https://a.example/{i}", False) for i in range(3))
    data = gzip.compress(plain)
    urls, damaged = _urls(data)
    assert urls == ["https://a.example/0"]
    assert [(d.offset, d.rest) for d in damaged] == [(0, True)]
    problems = InputProblems()
    docs = list(warc_documents(io.BytesIO(data), "whole.warc.gz", problems, "whole.warc.gz"))
    assert len(docs) == 1 and problems.damaged == 0
    (why,) = problems.unreadable
    assert "non-chunked gzip" in why and "the rest of the file was not read" in why


@pytest.mark.parametrize("gz", [True, False])
def test_trailing_junk_is_reported_where_it_starts(gz: bool) -> None:
    first = _record("https://a.example/1", gz)
    urls, damaged = _urls(first + b"trailing junk, not a record\n" * 3)
    assert urls == ["https://a.example/1"]
    assert [(d.offset, d.rest) for d in damaged] == [(len(first), True)]


def test_damage_first_and_last() -> None:
    data = _no_target_uri(True) + _record("https://a.example/1", True) + _no_target_uri(True)
    urls, damaged = _urls(data)
    assert urls == ["https://a.example/1"]
    assert len(damaged) == 2


def test_offsets_after_a_damaged_record_point_at_the_record() -> None:
    data = _record("https://a.example/1", True) + _no_target_uri(True)
    data += _record("https://a.example/2", True)
    problems = InputProblems()
    docs = list(warc_documents(io.BytesIO(data), "x.warc.gz", problems, "x.warc.gz"))
    assert [d.url for d in docs] == ["https://a.example/1", "https://a.example/2"]
    assert problems.damaged == 1 and not problems.unreadable
    stream = io.BytesIO(data)
    stream.seek(docs[1].provenance["warc_offset"])
    record = next(iter(ArchiveIterator(stream)))
    assert record.rec_headers.get_header("WARC-Target-URI") == "https://a.example/2"


def test_maintext_extract_counts_the_damaged_record(tmp_path: Path) -> None:
    warc = tmp_path / "crawl.warc.gz"
    parts = [_record("https://a.example/1", True), _no_target_uri(True)]
    warc.write_bytes(b"".join([*parts, _record("https://a.example/2", True)]))
    out = tmp_path / "out.jsonl"
    proc = maintext("extract", str(warc), "-o", str(out), "--workers", "0", cwd=tmp_path)
    stderr = proc.stderr.decode()
    assert proc.returncode == 0, stderr[-2000:]
    assert "Traceback" not in stderr
    assert f"{warc}: damaged record at offset {len(parts[0])} skipped" in stderr
    assert "1 damaged WARC records skipped" in stderr.strip().splitlines()[-1]
    assert out.read_text(encoding="utf-8").count("\n") == 2


def test_datatrove_reader_reads_on_after_a_damaged_record(tmp_path: Path) -> None:
    pytest.importorskip("datatrove", reason='needs pip install "scrapy-maintext[datatrove]"')
    from scrapy_maintext.datatrove import WarcReader

    first = _record("https://a.example/1", True)
    data = first + _no_target_uri(True) + _record("https://a.example/2", True)
    (tmp_path / "crawl.warc.gz").write_bytes(data)
    documents = list(WarcReader(str(tmp_path)).read_file("crawl.warc.gz"))
    assert [d.metadata["url"] for d in documents] == ["https://a.example/1", "https://a.example/2"]
    assert documents[1].metadata["warc_offset"] == len(first) + len(_no_target_uri(True))


def _cuts(last: bytes) -> list[int]:
    """Offsets to cut the last record at: every byte of its first 400 (its header), then
    every 37th byte to its end."""
    return [*range(1, min(400, len(last))), *range(400, len(last), 37)]


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
def test_a_file_cut_anywhere_in_its_last_record_counts_it_cut_short(gz: bool) -> None:
    first = _record("https://a.example/1", gz)
    last = _record("https://a.example/2", gz)
    for cut in _cuts(last):
        problems = InputProblems()
        data = first + last[:cut]
        docs = list(warc_documents(io.BytesIO(data), "cut.warc", problems, "cut.warc"))
        state = ([d.url for d in docs], problems.truncated, problems.damaged, problems.unreadable)
        skipped = (["https://a.example/1"], 1, 0, [])
        # Cut in its last bytes (the blank lines after it, its gzip trailer), the whole page is
        # there: a document, not a cut record.
        whole = (["https://a.example/1", "https://a.example/2"], 0, 0, [])
        assert state == skipped or (cut > len(last) - 20 and state == whole), (cut, state)


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
def test_a_file_of_one_record_cut_in_its_header_is_cut_short_not_unreadable(gz: bool) -> None:
    problems = InputProblems()
    data = _record("https://a.example/1", gz)[:40]
    assert list(warc_documents(io.BytesIO(data), "cut.warc", problems, "cut.warc")) == []
    assert (problems.truncated, problems.unreadable) == (1, [])


def test_maintext_extract_counts_a_record_cut_in_its_header(tmp_path: Path) -> None:
    warc = tmp_path / "crawl.warc.gz"
    first = _record("https://a.example/1", True)
    warc.write_bytes(first + _record("https://a.example/2", True)[:30])
    out = tmp_path / "out.jsonl"
    proc = maintext("extract", str(warc), "-o", str(out), "--workers", "0", cwd=tmp_path)
    stderr = proc.stderr.decode()
    assert proc.returncode == 0, stderr[-2000:]
    assert f"{warc}: the record at offset {len(first)} is cut short" in stderr
    assert "1 WARC records cut short" in stderr.strip().splitlines()[-1]
    assert out.read_text(encoding="utf-8").count("\n") == 1


@pytest.mark.parametrize("cut", [30, 200, 0.5], ids=["gzip-header", "warc-header", "halfway"])
def test_datatrove_reader_skips_counts_and_logs_a_record_cut_short(
    tmp_path: Path, cut: float, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("datatrove", reason='needs pip install "scrapy-maintext[datatrove]"')
    from scrapy_maintext.datatrove import WarcReader

    first = _record("https://a.example/1", True)
    last = _record("https://a.example/2", True)
    (tmp_path / "crawl.warc.gz").write_bytes(
        first + last[: int(cut * len(last) if cut < 1 else cut)]
    )
    reader = WarcReader(str(tmp_path))
    documents = list(reader.read_file("crawl.warc.gz"))
    assert [d.metadata["url"] for d in documents] == ["https://a.example/1"]
    assert reader.stats["cut_short"].total == 1
    assert f"crawl.warc.gz: the record at offset {len(first)} is cut short" in caplog.text
