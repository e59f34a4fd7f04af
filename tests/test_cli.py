"""``maintext``: crawl from any directory, offline extraction, clear errors and exit codes."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree
from scrapy_maintext.cli import check_spider_arguments
from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import Route, SiteOptions
from scrapy_maintext.spiders.args import ARGUMENT_FORMS, FEED_ARGUMENT_FORMS
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from tests.model_folders import STACKED_MODEL, damaged_model
from tests.schema import tei_errors
from tests.slow_page import slow_page

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "tests" / "fixtures" / "extraction" / "site"
#: Pages of SITE with main text (boilerplate.html has none).
TEXT_PAGES = {"article.html", "index.html", "nodate.html", "syndicated.html"}
BASE = "https://site.example"


def maintext(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """The console script as a user runs it, from ``cwd`` (never the checkout)."""
    return subprocess.run(
        [sys.executable, "-m", "scrapy_maintext", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=240,
        env={k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"},
    )


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_extract_directory_to_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    proc = maintext("extract", str(SITE), "--base-url", BASE, "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    records = jsonl(out)
    assert {r["url"] for r in records} == {f"{BASE}/{name}" for name in TEXT_PAGES}
    article = next(r for r in records if r["url"].endswith("/article.html"))
    assert article["title"] == "Tidal power plans approved for the estuary"
    assert "tidal lagoon" in article["text"]
    assert article["source"] == str(SITE / "article.html")
    summary = proc.stderr.decode().strip().splitlines()[-1]
    assert summary.startswith(f"4 of 5 documents written to {out}")
    assert "skipped: no-main-text 1" in summary


@pytest.mark.slow
def test_extract_with_a_model_of_ones_own(tmp_path: Path) -> None:
    model = shutil.copytree(STACKED_MODEL, tmp_path / "my-model")
    out = tmp_path / "out.jsonl"
    args = ("--engine", "neural", "--model", str(model), "--workers", "1")
    proc = maintext("extract", str(SITE), "--base-url", BASE, "-o", str(out), *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    records = jsonl(out)
    assert records and {r["model_version"] for r in records} == {"v2"}
    damaged = damaged_model(tmp_path)
    args = ("--model", str(damaged), "--workers", "2")
    proc = maintext("extract", str(SITE), "--base-url", BASE, "-o", str(out), *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert proc.stderr.decode().count("Neural extractor unavailable") == 1
    assert {r["extractor"] for r in jsonl(out)} == {"trafilatura"}
    missing = maintext("extract", str(SITE), "-o", str(out), "--model", "nope", cwd=tmp_path)
    assert missing.returncode == 2
    assert "--model 'nope': no model.onnx or config.json in" in missing.stderr.decode()


def _warc(path: Path) -> None:
    """Two HTML responses, an image, a 404 and a request record."""
    with path.open("wb") as handle:
        writer = WARCWriter(handle, gzip=True)

        def response(url: str, status: str, ctype: str, body: bytes) -> None:
            http = StatusAndHeaders(status, [("Content-Type", ctype)], protocol="HTTP/1.1")
            record = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), http_headers=http
            )
            writer.write_record(record)

        for name in ("article.html", "syndicated.html"):
            body = (SITE / name).read_bytes()
            response(f"{BASE}/news/{name}", "200 OK", "text/html; charset=utf-8", body)
        response(f"{BASE}/logo.png", "200 OK", "image/png", b"\x89PNG\r\n\x1a\n")
        response(f"{BASE}/gone.html", "404 Not Found", "text/html", b"<p>gone</p>")
        request = writer.create_warc_record(f"{BASE}/news/article.html", "request")
        writer.write_record(request)


@pytest.mark.slow
def test_extract_warc_takes_urls_from_records(tmp_path: Path) -> None:
    warc = tmp_path / "crawl.warc.gz"
    _warc(warc)
    out = tmp_path / "corpus.xml"
    proc = maintext("extract", str(warc), "-o", f"{out}:tei", "--workers", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    tree = etree.parse(str(out))
    assert not tei_errors(tree)
    ns = {"t": "http://www.tei-c.org/ns/1.0"}
    urls = {u.text for u in tree.iterfind(".//t:TEI//t:idno[@type='URL']", ns)}
    assert urls == {f"{BASE}/news/article.html", f"{BASE}/news/syndicated.html"}


def test_warc_source_names_the_record_without_angle_brackets(tmp_path: Path) -> None:
    warc = tmp_path / "one.warc.gz"
    with warc.open("wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        body = io.BytesIO((SITE / "article.html").read_bytes())
        record = writer.create_warc_record(f"{BASE}/a", "response", payload=body, http_headers=http)
        writer.write_record(record)
    record_id = record.rec_headers.get_header("WARC-Record-ID")
    assert record_id.startswith("<urn:uuid:") and record_id.endswith(">")
    out = tmp_path / "out.jsonl"
    proc = maintext("extract", str(warc), "-o", str(out), "--workers", "0", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    (extracted,) = jsonl(out)
    assert extracted["source"] == f"{warc}#{record_id[1:-1]}"


def test_damaged_inputs_are_reported_not_fatal(tmp_path: Path) -> None:
    whole = tmp_path / "whole.warc.gz"
    _warc(whole)
    data = whole.read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) // 2])  # ends inside a record
    fake = tmp_path / "fake.warc"
    fake.write_bytes(b"\x1f\x8b\x08\x00not a warc at all" * 10)
    out = tmp_path / "out.jsonl"
    proc = maintext("extract", str(fake), str(cut), str(SITE), "-o", str(out), cwd=tmp_path)
    stderr = proc.stderr.decode()
    assert proc.returncode == 1, stderr  # an input could not be read
    assert f"{fake}: not a readable WARC file" in stderr and "Traceback" not in stderr
    summary = stderr.strip().splitlines()[-1]
    assert "1 WARC records cut short" in summary and f"unreadable: {fake}" in summary
    urls = {record["url"] for record in jsonl(out)}
    assert f"{BASE}/news/article.html" in urls  # the whole record before the cut
    assert len([u for u in urls if u.startswith("file://")]) == len(TEXT_PAGES)


def test_warc_charset_from_the_http_header(tmp_path: Path) -> None:
    text = "Новости дня. " * 40
    body = f"<html><body><article><h1>Новости</h1><p>{text}</p></article></body></html>"
    warc = tmp_path / "cp1251.warc"
    with warc.open("wb") as handle:
        writer = WARCWriter(handle, gzip=False)
        headers = [("Content-Type", "text/html; charset=windows-1251")]
        http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
        payload = io.BytesIO(body.encode("cp1251"))
        record = writer.create_warc_record(
            f"{BASE}/ru", "response", payload=payload, http_headers=http
        )
        writer.write_record(record)
    out = tmp_path / "out.jsonl"
    assert maintext("extract", str(warc), "-o", str(out), cwd=tmp_path).returncode == 0
    (record,) = jsonl(out)
    assert "Новости дня." in record["text"]


@pytest.mark.slow
def test_odd_inputs_and_outputs(tmp_path: Path) -> None:
    odd = tmp_path / "odd"
    odd.mkdir()
    (
        odd / "caf\udce9.html".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
    ).write_bytes((SITE / "article.html").read_bytes())
    out = tmp_path / "odd.jsonl"
    proc = maintext("extract", str(odd), "--base-url", BASE, "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    (record,) = jsonl(out)
    assert record["url"] == f"{BASE}/caf%E9.html"
    assert record["source"].endswith("caf\\xe9.html")
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = maintext("extract", str(empty), "-o", str(tmp_path / "n.jsonl"), cwd=tmp_path)
    assert nothing.returncode == 1
    assert "no HTML or WARC files in this directory" in nothing.stderr.decode()
    page = tmp_path / "page.html"
    page.write_bytes((SITE / "article.html").read_bytes())
    itself = maintext("extract", str(page), "-o", f"{page}:txt", cwd=tmp_path)
    assert itself.returncode == 2 and "would overwrite this input" in itself.stderr.decode()
    assert page.read_bytes() == (SITE / "article.html").read_bytes()
    negative = maintext("extract", str(page), "-o", "x.jsonl", "--workers", "-3", cwd=tmp_path)
    assert negative.returncode == 2 and "not a count: -3" in negative.stderr.decode()


PAGES_TO_INTERRUPT = 3000


def _default_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_ctrl_c_on_extract_keeps_a_complete_output(tmp_path: Path) -> None:
    import signal
    import time

    many = tmp_path / "many"
    many.mkdir()
    # Enough pages that the interrupt lands mid-way: extraction ran 250+ pages a second on the
    # 2-core CI machine, and 400 were all written before the signal.
    for number in range(PAGES_TO_INTERRUPT):
        (many / f"p{number:04d}.html").write_bytes((SITE / "article.html").read_bytes())
    out = tmp_path / "out.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy_maintext", "extract", str(many), "-o", str(out)],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        # A foreground command, as a user's Ctrl-C meets it: a test worker that ignores SIGINT
        # would hand that on through exec, and Python then installs no KeyboardInterrupt.
        preexec_fn=_default_sigint,
    )
    deadline = time.monotonic() + 60
    while not (out.exists() and out.stat().st_size > 20_000) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr.decode()[-2000:]
    assert b"Traceback" not in stderr
    assert b"interrupted: the same command with --resume goes on" in stderr
    written = json.loads(out.read_text(encoding="utf-8"))  # a complete JSON array
    assert 0 < len(written) < PAGES_TO_INTERRUPT


def test_extract_stdin_with_base_url(tmp_path: Path) -> None:
    html = (SITE / "article.html").read_bytes()
    out = tmp_path / "page.txt"
    proc = maintext(
        "extract", "-", "--base-url", f"{BASE}/a", "-o", str(out), cwd=tmp_path, stdin=html
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    text = out.read_text(encoding="utf-8")
    assert f"URL: {BASE}/a\n" in text
    assert "tidal lagoon" in text


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["jsonl", "json", "tei", "txt"])
def test_resume_after_a_kill_writes_each_document_once(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"out.{fmt}"
    spec = f"{out}:{fmt}"
    first = maintext("extract", str(SITE), "--base-url", BASE, "-o", spec, cwd=tmp_path)
    assert first.returncode == 0, first.stderr.decode()[-2000:]
    complete = out.read_bytes()
    # A kill in the middle of the last document: the file ends half way through it.
    out.write_bytes(complete[: len(complete) - 400])
    again = maintext("extract", str(SITE), "--base-url", BASE, "-o", spec, "--resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    summary = again.stderr.decode().strip().splitlines()[-1]
    assert summary.startswith("1 of 5 documents written"), summary
    assert "3 already there (--resume)" in summary
    assert _urls(out, fmt) == sorted(f"{BASE}/{name}" for name in TEXT_PAGES)


def _urls(path: Path, fmt: str) -> list[str]:
    if fmt == "jsonl":
        return sorted(r["url"] for r in jsonl(path))
    if fmt == "json":
        return sorted(r["url"] for r in json.loads(path.read_text(encoding="utf-8")))
    if fmt == "tei":
        tree = etree.parse(str(path))
        assert not tei_errors(tree)
        ns = {"t": "http://www.tei-c.org/ns/1.0"}
        return sorted(
            u.text
            for u in tree.iterfind(
                ".//t:TEI/t:teiHeader//t:publicationStmt/t:idno[@type='URL']", ns
            )
        )
    lines = path.read_text(encoding="utf-8").splitlines()
    return sorted(line.removeprefix("URL: ") for line in lines if line.startswith("URL: "))


@pytest.mark.slow
def test_extract_one_file_per_document_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    args = ("extract", str(SITE), "--base-url", BASE, "-o", f"{out}/:json")
    assert maintext(*args, cwd=tmp_path).returncode == 0
    files = sorted(out.glob("*.json"))
    assert len(files) == 4
    assert {json.loads(f.read_text())["url"] for f in files} == {f"{BASE}/{n}" for n in TEXT_PAGES}
    again = maintext(*args, "--resume", cwd=tmp_path)
    assert "0 of 5 documents written" in again.stderr.decode()


@pytest.mark.slow
def test_per_document_timeout_is_counted_not_fatal(tmp_path: Path) -> None:
    pages = shutil.copytree(SITE, tmp_path / "site")
    (pages / "slow.html").write_text(slow_page(), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ("-o", str(out), "--base-url", BASE, "--timeout", "1.5", "--workers", "1")
    proc = maintext("extract", str(pages), *args, cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stderr.decode().count("Extraction timed out") == 1
    assert "timeout 1" in proc.stderr.decode().splitlines()[-1]
    assert {r["url"] for r in jsonl(out)} == {f"{BASE}/{name}" for name in TEXT_PAGES}


def test_extract_errors_are_one_line(tmp_path: Path) -> None:
    missing = maintext("extract", "nope/", "-o", "x.jsonl", cwd=tmp_path)
    assert missing.returncode == 2
    assert (
        missing.stderr.decode().strip()
        == "maintext extract: error: no such file or directory: nope/"
    )
    bad_format = maintext("extract", str(SITE), "-o", "x.doc", cwd=tmp_path)
    assert bad_format.returncode == 2
    assert "give a format, PATH:jsonl|json|tei|txt" in bad_format.stderr.decode()


@pytest.mark.parametrize("command", [[], ["crawl"], ["extract"], ["explain"], ["demo"]])
def test_help_of_every_command(tmp_path: Path, command: list[str]) -> None:
    proc = maintext(*command, "--help", cwd=tmp_path)
    assert proc.returncode == 0
    assert b"usage: maintext" in proc.stdout


def test_crawl_help_lists_spider_arguments(tmp_path: Path) -> None:
    out = maintext("crawl", "--help", cwd=tmp_path).stdout.decode()
    for name in ("domain", "domains_file", "since", "max_pages", "lang", "url", "urls_file"):
        assert f"\n  {name} " in out or f"\n  {name}\t" in out or f"  {name:<14}" in out


@pytest.mark.parametrize("spider", ["sitemap", "feed"])
def test_spider_help_names_its_own_arguments(tmp_path: Path, spider: str) -> None:
    proc = maintext("crawl", spider, "-h", cwd=tmp_path)
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert out.startswith(f"usage: maintext crawl {spider} -a NAME=VALUE")
    assert "  domains_file  " in out and "--overwrite-output" in out
    assert ("  urls_file  " in out) == (spider == "feed")


@pytest.fixture(scope="module")
def quick_site() -> Iterator[SiteServer]:
    with SiteServer(SiteOptions(articles=3, crawl_delay=None, feeds=False)) as server:
        yield server


#: No waits between requests (the 1 s politeness floor and AutoThrottle's 1 s start), for
#: crawls whose subject is not politeness: here, what a failed site prints.
NO_WAITS = ("-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False")


@pytest.mark.slow
def test_crawl_from_any_directory_with_progress_and_report(
    quick_site: SiteServer, tmp_path: Path
) -> None:
    out, report = tmp_path / "items.jsonl", tmp_path / "report.json"
    proc = maintext(
        "crawl",
        "sitemap",
        "-a",
        f"domain={quick_site.base_url}",
        "-O",
        str(out),
        "-s",
        "DOWNLOAD_DELAY=0.3",
        "-s",
        "AUTOTHROTTLE_ENABLED=False",
        "-s",
        "EXTRACT_WORKERS=0",
        "-s",
        f"CRAWL_REPORT={report}",
        "-s",
        "CRAWL_REPORT_INTERVAL=0.5",
        cwd=tmp_path,
    )
    log = proc.stderr.decode()
    assert proc.returncode == 0, log[-3000:]
    items = jsonl(out)
    assert items and all(item["text"] for item in items)
    assert all(item["url"].startswith(quick_site.base_url) for item in items)
    progress = [line for line in log.splitlines() if f"Progress {quick_site.base_url}:" in line]
    assert progress and "planned pages done" in progress[0] and "ETA" in progress[0]
    assert "Crawl report (1 sites, finished: finished)" in log
    (site,) = json.loads(report.read_text())["sites"]
    assert site["site"] == quick_site.base_url
    assert sum(site["extracted"].values()) == len(items)
    done = len(items) + sum(site["dropped"].values()) + sum(site["skipped"].values())
    assert site["planned"] == done
    assert site["fetched"] == len(items)  # pages only: no robots.txt, sitemap or feed
    assert site["mean_text_length"] == round(sum(len(i["text"]) for i in items) / len(items))


@pytest.mark.parametrize(
    ("spider", "arguments", "message"),
    [
        (
            "sitemap",
            ["domian=example.com"],
            "-a domian: not an argument of the sitemap spider (did you mean -a domain=...?",
        ),
        ("sitemap", ["domain=a.example", "since=yesterday"], "-a since=yesterday: expected an ISO"),
        ("sitemap", ["domain=a.example", "max_pages=many"], "-a max_pages=many: expected a whole"),
        ("feed", ["url=notaurl"], "-a url=notaurl: expected feed URLs (http:// or https://)"),
        ("sitemap", ["domain=exa{mple}.com"], "-a domain=exa{mple}.com: expected a host"),
        ("sitemap", ["domain=http://a.example:port"], "-a domain=http://a.example:port: expected"),
        ("feed", [], "the feed spider needs -a domain=... or -a url=..."),
    ],
)
def test_wrong_argument_is_one_line_exit_2_output_kept(
    tmp_path: Path, spider: str, arguments: list[str], message: str
) -> None:
    out = tmp_path / "items.jsonl"
    out.write_text('{"url": "earlier"}\n')
    args = [part for argument in arguments for part in ("-a", argument)]
    proc = maintext("crawl", spider, *args, "-O", str(out), cwd=tmp_path)
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"maintext crawl: error: {message}")
    assert out.read_text() == '{"url": "earlier"}\n'


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("EXTRACT_LANGUAGES=de,d3", "EXTRACT_LANGUAGES: 'd3' is no ISO 639-1 language code"),
        ("EXTRACT_ENGINE=bogus", "EXTRACT_ENGINE must be one of"),
    ],
)
def test_wrong_extraction_setting_is_one_line_exit_2(
    tmp_path: Path, setting: str, message: str
) -> None:
    proc = maintext("crawl", "sitemap", "-a", "domain=a.example", "-s", setting, cwd=tmp_path)
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"maintext crawl: error: {message}")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_unreachable_site_is_one_line_and_exit_1(tmp_path: Path) -> None:
    out = tmp_path / "items.jsonl"
    out.write_text('{"url": "earlier"}\n')
    refused = f"http://127.0.0.1:{_free_port()}"
    args = ("-a", f"domain={refused}", "-O", str(out), *NO_WAITS)
    proc = maintext("crawl", "sitemap", *args, cwd=tmp_path)
    stderr = proc.stderr.decode()
    assert proc.returncode == 1, stderr[-3000:]
    errors = [line for line in stderr.splitlines() if "] ERROR:" in line]
    assert len(errors) == 1, errors
    assert f"Cannot crawl {refused}: connection refused by {refused[7:]}" in errors[0]
    assert "robots_forbidden" not in stderr
    assert "explore=1" not in stderr
    assert out.read_text() == '{"url": "earlier"}\n'


@pytest.mark.slow
def test_unreachable_feed_site_is_one_line_and_exit_1(tmp_path: Path) -> None:
    refused = f"http://127.0.0.1:{_free_port()}"
    proc = maintext("crawl", "feed", "-a", f"url={refused}/feed.xml", *NO_WAITS, cwd=tmp_path)
    stderr = proc.stderr.decode()
    errors = [line for line in stderr.splitlines() if "] ERROR:" in line]
    assert proc.returncode == 1, stderr[-3000:]
    assert len(errors) == 1, errors
    assert "robots_forbidden" not in stderr and "No feed" not in stderr


@pytest.mark.slow
def test_tls_on_a_plain_http_server_hints_at_http(quick_site: SiteServer, tmp_path: Path) -> None:
    https = quick_site.base_url.replace("http://", "https://")
    proc = maintext("crawl", "sitemap", "-a", f"domain={https}", *NO_WAITS, cwd=tmp_path)
    errors = [line for line in proc.stderr.decode().splitlines() if "] ERROR:" in line]
    assert proc.returncode == 1
    assert len(errors) == 1, errors
    assert f"did you mean {quick_site.base_url}?" in errors[0]


@pytest.mark.slow
def test_one_reachable_site_is_success(quick_site: SiteServer, tmp_path: Path) -> None:
    refused = f"http://127.0.0.1:{_free_port()}"
    out = tmp_path / "items.jsonl"
    proc = maintext(
        "crawl",
        "sitemap",
        "-a",
        f"domain={refused},{quick_site.base_url}",
        "-O",
        str(out),
        "-s",
        "DOWNLOAD_DELAY=0",
        "-s",
        "AUTOTHROTTLE_ENABLED=False",
        "-s",
        "EXTRACT_WORKERS=0",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    assert jsonl(out)


@pytest.mark.slow
def test_ctrl_c_stops_quickly_and_the_same_command_resumes(tmp_path: Path) -> None:
    """16 requests queued behind a 1 s Crawl-delay used to take 16 s to drain after Ctrl-C;
    running the same command again (``-O`` included) completes the outputs."""
    import signal
    import time

    out, corpus = tmp_path / "items.jsonl", tmp_path / "corpus.xml"
    with SiteServer(SiteOptions(articles=20, crawl_delay=1.0, feeds=False)) as server:
        command = [
            *(sys.executable, "-m", "scrapy_maintext", "crawl", "sitemap"),
            *("-a", f"domain={server.base_url}", "-O", str(out), "-O", f"{corpus}:tei"),
            *("-s", f"JOBDIR={tmp_path / 'job'}", "-s", "EXTRACT_WORKERS=0"),
            # Below the Crawl-delay, which paces the first run; the resumed run's pace.
            *("-s", "DOWNLOAD_DELAY=0.1"),
        ]
        proc = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (out.exists() and out.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.2)
        stopped = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, log = proc.communicate(timeout=60)
        seconds = time.monotonic() - stopped
        first = jsonl(out)
        # How fast the rest is crawled is not the subject: the site drops its Crawl-delay.
        assert server.site is not None
        robots = server.site.routes["/robots.txt"]
        without = robots.body.replace(b"Crawl-delay: 1\n", b"")
        assert without != robots.body
        server.site.routes["/robots.txt"] = Route(without, robots.content_type)
        resumed = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        expected = server.site.expected_pages if server.site else set()
    assert proc.returncode == 0, log[-3000:]
    assert seconds < 8, f"Ctrl-C took {seconds:.1f} s"
    assert "queued requests left for a resumed crawl" in log
    kept = [line for line in log.splitlines() if "Stopped early:" in line]
    assert len(kept) == 1 and "kept in JOBDIR" in kept[0] and "run the same command" in kept[0]
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Resuming JOBDIR" in resumed.stderr
    items = jsonl(out)
    assert items[: len(first)] == first  # the first run's items are still there
    paths = sorted(item["url"].removeprefix(server.base_url) for item in items)
    assert paths == sorted(expected)
    tree = etree.parse(str(corpus))
    assert not tei_errors(tree)
    assert len(tree.getroot().findall("{http://www.tei-c.org/ns/1.0}TEI")) == len(items)


@pytest.mark.slow
def test_site_that_never_answers_is_one_timeout_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as silent:  # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        base = f"http://127.0.0.1:{silent.getsockname()[1]}"
        proc = maintext(
            "crawl", "sitemap", "-a", f"domain={base}",
            "-s", "DOWNLOAD_TIMEOUT=1", "-s", "RETRY_ENABLED=False", *NO_WAITS,
            cwd=tmp_path,
        )  # fmt: skip
    errors = [line for line in proc.stderr.decode().splitlines() if "] ERROR:" in line]
    assert proc.returncode == 1
    assert len(errors) == 1, errors
    assert f"Cannot crawl {base}: no answer from {base[7:]}" in errors[0]


@pytest.mark.parametrize(
    ("name", "spider", "bad"),
    [("domains_file", "sitemap", "not a host"), ("urls_file", "feed", "ftp://example.com/feed")],
)
def test_bad_line_of_a_list_file_is_named_by_its_number(
    tmp_path: Path, name: str, spider: str, bad: str
) -> None:
    listed = tmp_path / "list.txt"
    listed.write_text(f"# sites\nhttps://a.example/\n\n{bad}\nhttps://b.example/\n")
    error = check_spider_arguments(spider, ["-a", f"{name}={listed}"])
    assert error == (
        f"maintext crawl: error: -a {name}={listed}, line 4: {bad!r}: "
        f"expected {(ARGUMENT_FORMS | FEED_ARGUMENT_FORMS)[name]}"
    )
    listed.write_text("https://a.example/\n")
    assert check_spider_arguments(spider, ["-a", f"{name}={listed}"]) is None
