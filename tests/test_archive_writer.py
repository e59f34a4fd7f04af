"""The WARC writer alone (Scrapy-free): records, digests, rotation, names, damage."""

from __future__ import annotations

import datetime
import gzip
import io
from pathlib import Path

import pytest
from scrapy_maintext.archive import writer as writer_module
from scrapy_maintext.archive.records import Exchange
from scrapy_maintext.archive.writer import ArchiveConfig, WarcArchive
from scrapy_maintext.cli.inputs import InputProblems, warc_documents
from warcio.archiveiterator import ArchiveIterator

from tests.warc_checks import decoded_payload, read_warc, sha1_digest

MOMENT = datetime.datetime(2026, 1, 31, 12, 0, 0, 123456, tzinfo=datetime.UTC)


def _page(number: int, size: int = 400) -> bytes:
    words = " ".join(f"word{number}-{i}" for i in range(size // 10))
    head = f"<html><head><title>Page {number}</title></head>"
    return f"{head}<body><p>{words}</p></body></html>".encode()


def _exchange(number: int, **changes: object) -> Exchange:
    values: dict[str, object] = {
        "url": f"http://127.0.0.1:8000/p{number}.html",
        "status": 200,
        "headers": [("Content-Type", "text/html; charset=utf-8")],
        "payload": _page(number),
        "date": MOMENT + datetime.timedelta(seconds=number),
        "request_headers": [("User-Agent", "test")],
    }
    values.update(changes)
    return Exchange(**values)  # type: ignore[arg-type]


def _archive(directory: Path, max_size: int = 1_000_000, **kwargs: object) -> WarcArchive:
    return WarcArchive(ArchiveConfig(directory, max_size, "test", {"software": "tests"}), **kwargs)  # type: ignore[arg-type]


def test_records_digests_and_locations(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    futures = [archive.submit(_exchange(n)) for n in range(5)]
    archive.close()
    locations = [f.result() for f in futures]
    (path,) = tmp_path.glob("*.warc.gz")
    records = read_warc(path)
    assert [r.type for r in records] == ["warcinfo"] + ["response", "request"] * 5
    assert records[0].headers["WARC-Filename"] == path.name
    warcinfo_id = records[0].record_id
    for n, location in enumerate(locations):
        headers, payload = decoded_payload(path, location.offset)
        assert headers["WARC-Type"] == "response"
        assert headers["WARC-Record-ID"] == location.record_id
        assert headers["WARC-Date"] == f"2026-01-31T12:00:0{n}.123456Z"
        assert headers["WARC-Warcinfo-ID"] == warcinfo_id
        assert headers["WARC-Identified-Payload-Type"] == "text/html"
        assert payload == _page(n)
        assert location.payload_digest == sha1_digest(_page(n))
    requests = [r for r in records if r.type == "request"]
    assert [r.headers["WARC-Concurrent-To"] for r in requests] == [
        loc.record_id for loc in locations
    ]


def test_content_encoded_payload_is_stored_as_received(tmp_path: Path) -> None:
    """gzip on the wire stays gzip in the record (digest of what the server sent); readers
    decode it, and ``maintext extract`` reads the page."""
    compressed = gzip.compress(_page(1))
    headers = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Content-Encoding", "gzip"),
        ("Transfer-Encoding", "chunked"),
    ]
    archive = _archive(tmp_path)
    location = archive.submit(_exchange(1, headers=headers, payload=compressed)).result()
    archive.close()
    (path,) = tmp_path.glob("*.warc.gz")
    response = read_warc(path)[1]
    assert response.raw_payload == compressed
    assert response.headers["WARC-Payload-Digest"] == sha1_digest(compressed)
    assert response.http_headers["Content-Encoding"] == "gzip"
    # The payload is no longer chunked: the header is kept under another name.
    assert "Transfer-Encoding" not in response.http_headers
    assert response.http_headers["X-Crawler-Transfer-Encoding"] == "chunked"
    assert decoded_payload(path, location.offset)[1] == _page(1)
    with path.open("rb") as handle:
        (document,) = warc_documents(handle, path.name, InputProblems(), path.name)
    assert "Page 1" in str(document.html)
    assert document.provenance["warc_offset"] == location.offset


def test_rotation_at_max_size_with_time_sorted_names(tmp_path: Path) -> None:
    archive = _archive(tmp_path, max_size=2_000)
    futures = [archive.submit(_exchange(n, payload=_page(n, 2_000))) for n in range(8)]
    archive.close()
    files = sorted(tmp_path.glob("*.warc.gz"))
    assert len(files) >= 4
    # Name order is write order: each file's first response is later than the last one's.
    assert [p.name for p in files] == archive.names
    seen = []
    for path in files:
        records = read_warc(path)
        assert records[0].type == "warcinfo"
        # A file is closed once it reaches the size: it holds at most one pair beyond it.
        assert path.stat().st_size < 2_000 + 2 * len(gzip.compress(_page(0, 2_000))) + 2_000
        seen += [r.url for r in records if r.type == "response"]
    assert seen == [f"http://127.0.0.1:8000/p{n}.html" for n in range(8)]
    for future in futures:
        location = future.result()
        headers, _ = decoded_payload(tmp_path / location.file, location.offset)
        assert headers["WARC-Record-ID"] == location.record_id


def test_names_never_collide_even_with_the_same_clock_and_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers (two workers on one shared folder) opening a file in the same
    microsecond with the same random token: the second draws another name."""
    tokens = iter(["aaaaaa", "aaaaaa", "bbbbbb"])
    monkeypatch.setattr(writer_module.secrets, "token_hex", lambda _: next(tokens))
    first, second = (_archive(tmp_path, clock=lambda: MOMENT) for _ in range(2))
    first.submit(_exchange(1)).result()
    second.submit(_exchange(2)).result()
    first.close()
    second.close()
    assert first.names != second.names
    assert second.names[0].endswith("-bbbbbb.warc.gz")
    assert len(list(tmp_path.glob("*.warc.gz"))) == 2
    for path in tmp_path.glob("*.warc.gz"):
        assert [r.type for r in read_warc(path)] == ["warcinfo", "response", "request"]


def test_a_cut_file_keeps_every_record_before_the_cut(tmp_path: Path) -> None:
    archive = _archive(tmp_path)
    futures = [archive.submit(_exchange(n)) for n in range(6)]
    archive.close()
    (path,) = tmp_path.glob("*.warc.gz")
    last = futures[-1].result()
    # A kill in the middle of the last response record.
    data = path.read_bytes()[: last.offset + 100]
    path.write_bytes(data)
    whole = []
    for record in ArchiveIterator(io.BytesIO(data)):
        if record.rec_type == "response":
            payload = record.raw_stream.read()
            if record.rec_headers.get_header("WARC-Payload-Digest") == sha1_digest(payload):
                whole.append(record.rec_headers.get_header("WARC-Target-URI"))
    assert whole == [f"http://127.0.0.1:8000/p{n}.html" for n in range(5)]
    problems = InputProblems()
    with path.open("rb") as handle:
        documents = list(warc_documents(handle, path.name, problems, path.name))
    assert [d.url for d in documents] == [f"http://127.0.0.1:8000/p{n}.html" for n in range(5)]
    assert not problems.unreadable


def test_a_failing_disk_is_counted_and_the_writer_goes_on(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "out")
    ok = archive.submit(_exchange(1)).result()
    # The folder disappears under the writer: the next file cannot be opened.
    for path in (tmp_path / "out").iterdir():
        path.unlink()
    (tmp_path / "out").rmdir()
    archive._size = archive.config.max_size  # the next record starts a new file
    failed = archive.submit(_exchange(2))
    with pytest.raises(OSError):
        failed.result()
    archive.close()
    assert archive.counts.errors == 1
    assert ok.offset > 0


@pytest.mark.parametrize(
    ("setting", "line"),
    [
        ("WARC_OUTPUT={file}/sub", "WARC_OUTPUT {file}/sub: Not a directory"),
        ("WARC_MAX_SIZE=0", "WARC_MAX_SIZE must be a positive size, not 0"),
        ("WARC_COMPRESSION_LEVEL=12", "WARC_COMPRESSION_LEVEL must be 1 to 9, not 12"),
    ],
)
def test_a_wrong_archive_setting_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setting: str, line: str
) -> None:
    from scrapy_maintext.cli import main as maintext

    file = tmp_path / "file"
    file.write_text("")
    args = ["crawl", "sitemap", "-a", "domain=http://127.0.0.1:9", "-O", str(tmp_path / "x.jsonl")]
    args += ["-s", f"WARC_OUTPUT={tmp_path / 'warc'}", "-s", setting.format(file=file)]
    assert maintext(args) == 2
    assert capsys.readouterr().err == f"maintext crawl: error: {line.format(file=file)}\n"
    assert not (tmp_path / "x.jsonl").exists()


def test_a_wrong_archive_setting_is_one_line_from_scrapy_crawl_too(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.crawl import ROOT

    args = ["-a", "domain=http://127.0.0.1:9", "-O", str(tmp_path / "x.jsonl")]
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "sitemap", *args, "-s", "WARC_MAX_SIZE=0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "error: WARC_MAX_SIZE must be a positive size, not 0" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "x.jsonl").exists()
