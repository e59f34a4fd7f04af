"""The HTML crawl report: a crawl's numbers in the page, the plots, without the extra, size."""

from __future__ import annotations

import json
import re
import signal
import struct
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lxml_html
from scrapy_maintext.cli import main as maintext
from scrapy_maintext.demo.content import make_articles
from scrapy_maintext.report.broad import binned
from scrapy_maintext.report.files import load_report, write_report
from scrapy_maintext.report.html import PLOTS_HINT, SITE_COLUMNS, embedded_data, site_values
from scrapy_maintext.report.sites import bin_labels, month_of

from benchmarks.report_fixture import fixture_report
from tests.crawl import NO_WAITS, ROOT, run_crawl
from tests.sites import SiteOptions, TestSiteServer, page_html
from tests.test_cli import maintext as run_maintext

#: The plots the issue names, by their figure's id (``plot-<key>``).
PLOTS = (
    "funnel",
    "engines",
    "text-lengths",
    "languages",
    "page-types",
    "dates",
    "statuses",
    "requests",
)
#: The issue's bar for the report of a 2,000-page, 50-site crawl.
MAX_BYTES = 2_000_000


def _site_rows(page: Any) -> dict[str, dict[str, str]]:
    rows = page.xpath('//table[@id="site-table"]/tbody/tr')
    return {
        row.get("data-site"): {
            td.get("data-key"): td.text_content() for td in row.xpath("td[@data-key]")
        }
        for row in rows
    }


def _shown(value: Any) -> str:
    return "-" if value is None else f"{value:g}"


def _check_page_against_json(page_text: str, data: dict[str, Any]) -> Any:
    """Every site's numbers in the site table and in its own section equal the JSON's."""
    page = lxml_html.fromstring(page_text)
    rows = _site_rows(page)
    assert set(rows) == {site["site"] for site in data["sites"]}
    for site in data["sites"]:
        values = site_values(site)
        assert rows[site["site"]] == {name: _shown(values[name]) for name, _ in SITE_COLUMNS}
        (section,) = page.xpath(f'//details[@data-site="{site["site"]}"]')
        details = {
            tr.get("data-key"): tr.xpath("td")[1].text_content() for tr in section.xpath(".//tr")
        }
        # Long lists binned: rare values as "other", months by year past two years.
        for key in ("skipped", "dropped", "not_planned", "extracted", "languages"):
            expected = Counter(dict(binned(site[key])))
            shown = Counter(_parse_counts(details[key])) if key in details else Counter()
            assert shown == expected, (site["site"], key)
        for key in ("months", "statuses"):
            shown = Counter(_parse_counts(details.get(key, "")))
            assert shown == Counter(dict(binned(site[key], "key"))), (site["site"], key)
        lengths = zip(bin_labels(data["text_length_bins"]), site["text_lengths"], strict=True)
        assert _parse_counts(details.get("text_lengths", "")) == {k: n for k, n in lengths if n}
    (funnel,) = page.xpath('//table[@id="run-totals"]//tr[td[1]="funnel"]/td[2]')
    totals = [sum(site_values(site)[step] for site in data["sites"]) for step in _FUNNEL]
    assert funnel.text_content() == " → ".join(
        f"{s} {n}" for s, n in zip(_FUNNEL, totals, strict=False)
    )
    return page


_FUNNEL = ("planned", "fetched", "exported")


def _parse_counts(text: str) -> dict[str, int]:
    """``a 3, b 1`` as shown in a site's section."""
    pairs = [part.rsplit(" ", 1) for part in text.split(", ") if part and part != "-"]
    return {key: int(count) for key, count in pairs}


@pytest.fixture(scope="module")
def small_site() -> Iterator[TestSiteServer]:
    """A second site (its own host) of four articles with a Crawl-delay of 0.3 s."""
    with TestSiteServer(SiteOptions(articles=4, crawl_delay=0.3), host="127.0.0.2") as server:
        yield server


def test_html_report_of_a_crawl_holds_the_json_numbers_and_every_plot(
    hostile_site: TestSiteServer, small_site: TestSiteServer, tmp_path: Path
) -> None:
    domains = tmp_path / "sites.txt"
    domains.write_text(f"{hostile_site.base_url}\n{small_site.base_url}\n")
    report = tmp_path / "report.html"
    result = run_crawl(
        "sitemap",
        tmp_path,
        {"domains_file": str(domains)},
        {**NO_WAITS, "DOWNLOAD_TIMEOUT": "1", "EXTRACT_WORKERS": "0", "CRAWL_REPORT": str(report)},
    )
    assert result.returncode == 0, result.log[-3000:]
    page_text = report.read_text("utf-8")
    data = embedded_data(page_text)
    assert data is not None and data["reason"] == "finished"

    # The JSON report is the crawl's: its counts are the items'.
    by_site = {site["site"]: site for site in data["sites"]}
    assert set(by_site) == {hostile_site.base_url, small_site.base_url}
    for base, site in by_site.items():
        items = [item for item in result.items if item["url"].startswith(base)]
        assert sum(site["extracted"].values()) == len(items)
        assert sum(site["text_lengths"]) == len(items)
        chars = sum(len(item["text"]) for item in items)
        assert site["mean_text_length"] == (round(chars / len(items)) if items else 0)
        languages = Counter(item.get("language") or "unknown" for item in items)
        assert Counter(site["languages"]) == languages
        page_types = Counter(item.get("page_type") or "unknown" for item in items)
        assert Counter(site["page_types"]) == page_types
        assert Counter(site["months"]) == Counter(month_of(item.get("date")) for item in items)
        assert sum(site["statuses"].values()) == site["fetched"]
        assert site["requests"] > site["fetched"]  # robots.txt and sitemaps too
        assert sum(site["requests_per_bucket"]) == site["requests"]
        assert site["delay"] is not None and site["min_gap"] is not None
    # Politeness as the report shows it: the Crawl-delay is the site's delay. Single gaps
    # are estimates on both clocks (the report: a response's arrival less its latency; the
    # server: when its thread got to the request), each off by tens of milliseconds on a
    # loaded machine; the mean gap is not (only its two ends' lateness, up to 0.1 s together
    # here, spread over the gaps), and the report's shortest gap shows the delay's order.
    small = by_site[small_site.base_url]
    starts = sorted(hit.time for hit in small_site.hits if hit.path != "/robots.txt")
    mean_gap = (starts[-1] - starts[0]) / (len(starts) - 1)
    assert small["delay"] == 0.3 and mean_gap >= 0.3 - 0.1 / (len(starts) - 1)
    assert small["min_gap"] >= 0.3 * 0.5
    hostile = by_site[hostile_site.base_url]
    assert sum(hostile["extracted"].values()) > 0
    assert hostile["skipped"] and hostile["statuses"].get("404")
    # The same articles again on the second site: dropped as near-duplicates.
    assert by_site[small_site.base_url]["dropped"].get("duplicate")

    page = _check_page_against_json(page_text, data)
    for key in PLOTS:
        (figure,) = page.xpath(f'//figure[@id="plot-{key}"]')
        assert len(figure.xpath(".//*[local-name()='svg']")) == 1, key
    assert not page.xpath('//figure[@id="plot-recrawl"]')  # no recurring crawl: no section
    assert PLOTS_HINT not in page_text
    # Nothing to fetch: no network needed to view it.
    assert not page.xpath("//*[@src] | //link | //iframe | //object")
    assert all(href.startswith("#") for href in page.xpath("//a/@href"))
    assert not re.search(r"url\((?!#)", page_text) and "@import" not in page_text

    # maintext report draws the saved report again, and the JSON it writes is the same.
    again = tmp_path / "again.json"
    assert maintext(["report", str(report), "-o", str(again)]) == 0
    assert json.loads(again.read_text("utf-8")) == data


def test_a_crawl_stopped_early_writes_its_report(
    hostile_site: TestSiteServer, tmp_path: Path
) -> None:
    report = tmp_path / "report.html"
    settings = {**NO_WAITS, "CLOSESPIDER_ITEMCOUNT": "2", "CRAWL_REPORT": str(report)}
    result = run_crawl("sitemap", tmp_path, {"domain": hostile_site.base_url}, settings)
    assert result.returncode == 0, result.log[-3000:]
    data = embedded_data(report.read_text("utf-8"))
    assert data is not None and data["reason"] == "closespider_itemcount"
    assert data["run"]["settings"]["CLOSESPIDER_ITEMCOUNT"] in (2, "2")
    (site,) = data["sites"]
    assert sum(site["extracted"].values()) == len(result.items) >= 2


def test_without_the_extra_the_page_has_its_tables_and_one_line_hint(tmp_path: Path) -> None:
    source = tmp_path / "report.json"
    data = fixture_report(sites=5, pages=100)
    source.write_text(json.dumps(data), "utf-8")
    out = tmp_path / "report.html"
    # A real run of `maintext report` in a Python where matplotlib cannot be imported.
    block = "import sys; sys.modules['matplotlib'] = None; from scrapy_maintext.cli import main; "
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            block + f"sys.exit(main(['report', {str(source)!r}, '-o', {str(out)!r}]))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    page_text = out.read_text("utf-8")
    page = _check_page_against_json(page_text, load_report(source))
    assert page.text_content().count(PLOTS_HINT) == 1
    assert page.xpath('//p[@id="plots-hint"]')[0].text_content() == PLOTS_HINT
    assert not page.xpath("//figure") and "<svg" not in page_text


def test_recrawl_outcomes_show_only_when_present(tmp_path: Path) -> None:
    data = fixture_report(sites=3, pages=30)
    plain = tmp_path / "plain.html"
    write_report(data, plain)
    assert "recurring crawl" not in plain.read_text("utf-8")
    data["recrawl"] = {"new": 4, "changed": 2, "unchanged": 20, "gone": 1}
    recrawl = tmp_path / "recrawl.html"
    write_report(data, recrawl)
    page = lxml_html.fromstring(recrawl.read_text("utf-8"))
    (row,) = page.xpath('//table[@id="run-totals"]//tr[td[1]="recurring crawl"]')
    assert row.xpath("td")[1].text_content() == "changed 2, gone 1, new 4, unchanged 20"
    assert len(page.xpath('//figure[@id="plot-recrawl"]//*[local-name()="svg"]')) == 1


def test_report_of_2000_pages_on_50_sites_weighs_under_2_mb(tmp_path: Path) -> None:
    # Its time is measured by benchmarks/report_render.py, not here.
    out = tmp_path / "report.html"
    write_report(fixture_report(sites=50, pages=2000), out)
    page_text = out.read_text("utf-8")
    assert len(page_text.encode()) < MAX_BYTES
    data = embedded_data(page_text)
    assert data is not None and len(data["sites"]) == 50
    assert sum(site["planned"] for site in data["sites"]) == 2000
    _check_page_against_json(page_text, data)


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "not a crawl report"), ('{"sites": 3}', "no list of sites")],
)
def test_maintext_report_says_what_is_wrong_with_its_input(
    tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "report.json"
    source.write_text(content)
    assert maintext(["report", str(source), "-o", str(tmp_path / "out.html")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out.html").exists()


def test_extract_report_counts_the_offline_run(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    articles = make_articles(3, seed=24)
    for article in articles:
        page = page_html(article, articles)
        (pages / f"{article.slug}.html").write_text(page, "utf-8")
    (pages / "empty.html").write_text("<html><body></body></html>", "utf-8")
    report = tmp_path / "report.html"
    command = ["extract", str(pages), "-o", str(tmp_path / "out.jsonl"), "--workers", "0"]
    assert maintext([*command, "--base-url", "https://a.example/", "--report", str(report)]) == 0
    data = embedded_data(report.read_text("utf-8"))
    assert data is not None
    (only,) = data["sites"]
    assert only["site"] == "https://a.example"
    assert (only["planned"], only["fetched"]) == (4, 4)
    assert sum(only["extracted"].values()) == 3 and sum(only["dropped"].values()) == 1
    assert data["run"]["settings"] == {"engine": "auto", "workers": 0, "timeout": 30.0}
    assert data["run"]["model_version"] and data["run"]["versions"]["scrapy-maintext"]


def _unsorted(page: Path) -> list[str]:
    tree = lxml_html.fromstring(page.read_text("utf-8"))
    return tree.xpath('//table[@id="site-table"]/tbody/tr/td[@data-key="planned"]/text()')


@pytest.mark.slow
def test_the_page_in_headless_chromium_and_printed(tmp_path: Path) -> None:
    from scrapy_maintext.report.screenshot import (
        find_chromium,
        print_to_pdf,
        rendered_dom,
        screenshot,
    )

    if find_chromium() is None:
        pytest.skip("no chromium on PATH: apt-get install chromium (Debian's package)")
    page = tmp_path / "report.html"
    write_report(fixture_report(sites=50, pages=2000), page)
    png = screenshot(page, tmp_path / "report.png", window=(1280, 900))
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (1280, 900)
    # A blank or unstyled page compresses to a few KB; text, tables and plots do not.
    assert png.stat().st_size > 50_000
    # The table's script ran: sorted by planned pages, ascending, as the link asks.
    dom = lxml_html.fromstring(rendered_dom(page, "sort=planned"))
    cells = dom.xpath('//table[@id="site-table"]/tbody/tr/td[@data-key="planned"]/text()')
    planned = [int(cell) for cell in cells]
    assert len(planned) == 50 and planned == sorted(planned) != [int(c) for c in _unsorted(page)]
    pdf = print_to_pdf(page, tmp_path / "report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page>") > 1


@pytest.mark.slow
def test_maintext_crawl_stopped_by_ctrl_c_writes_its_report(tmp_path: Path) -> None:
    out, report = tmp_path / "items.jsonl", tmp_path / "report.html"
    with TestSiteServer(SiteOptions(articles=20, crawl_delay=1.0, feeds=False)) as server:
        command = [
            *(sys.executable, "-m", "scrapy_maintext", "crawl", "sitemap"),
            *("-a", f"domain={server.base_url}", "-O", str(out)),
            *("-s", "EXTRACT_WORKERS=0", "-s", f"CRAWL_REPORT={report}"),
        ]
        proc = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (out.exists() and out.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, log = proc.communicate(timeout=60)
    assert proc.returncode == 0, log[-3000:]
    data = embedded_data(report.read_text("utf-8"))
    assert data is not None and data["reason"] == "shutdown"
    assert data["run"]["command"].startswith("python -m scrapy_maintext crawl sitemap -a domain=")
    (site,) = data["sites"]
    items = out.read_text("utf-8").splitlines()
    assert sum(site["extracted"].values()) == len(items) < site["planned"]
    assert site["delay"] >= 1.0 and site["min_gap"] >= 0.5  # an estimate: see above


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("sites", 0, "planned"), "abc", 'sites[0].planned is "abc", not a whole number'),
        (("sites", 1, "fetched"), None, "sites[1].fetched is null, not a whole number"),
        (("sites", 0, "dropped"), {"Empty": "2"}, "sites[0].dropped is"),
        (("sites", 0, "text_lengths"), [1, 2], "sites[0].text_lengths has 2 counts for 9 bins"),
        (("sites", 1, "delay"), "slow", 'sites[1].delay is "slow", not a number or null'),
        (("sites", 1), "a.example", "sites[1] is not a site with its name"),
        (("bucket_seconds",), 0, "bucket_seconds is 0, not a number above 0"),
        (("run",), [], "run is [], not an object"),
        (("recrawl",), {"new": -1}, "recrawl is"),
    ],
)
def test_maintext_report_names_a_field_of_the_wrong_type(
    tmp_path: Path,
    path: tuple[str | int, ...],
    value: Any,
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = fixture_report(sites=2, pages=10)
    *parents, last = path
    target: Any = data
    for key in parents:
        target = target[key]
    target[last] = value
    source = tmp_path / "report.json"
    source.write_text(json.dumps(data))
    assert maintext(["report", str(source), "-o", str(tmp_path / "out.html")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"maintext report: error: {source}: not a crawl report (")
    assert message in line
    assert not (tmp_path / "out.html").exists()


def test_maintext_report_on_wrong_types_is_one_line_and_exit_2(tmp_path: Path) -> None:
    data = fixture_report(sites=1, pages=3)
    data["sites"][0] |= {"planned": "abc", "fetched": None}
    source = tmp_path / "report.json"
    source.write_text(json.dumps(data))
    out = tmp_path / "out.json"
    proc = run_maintext("report", str(source), "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.decode().splitlines() == [
        f'maintext report: error: {source}: not a crawl report (sites[0].planned is "abc", '
        "not a whole number)"
    ]
    assert not out.exists()
