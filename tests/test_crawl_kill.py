"""SIGKILL in the middle of a JOBDIR crawl: the resumed crawl exports what was lost."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree
from scrapy_maintext.demo.site import SiteOptions

from tests.crawl import NO_WAITS, kill_when, run_crawl
from tests.schema import tei_errors
from tests.sites import TestSiteServer

#: A crawl process killed, then resumed: seconds of crawling at a real pace.
pytestmark = pytest.mark.slow

#: Articles of the site: enough that most of the plan is still queued at the kill.
ARTICLES = 40
#: Pages the server has answered when the crawl is killed.
KILL_AFTER = 12
#: Pages that may be exported by both runs: those in the downloader or the extraction
#: pipeline at the kill (CONCURRENT_REQUESTS_PER_DOMAIN is 1, one extraction worker).
MAX_IN_FLIGHT = 4

SETTINGS = {
    "DOWNLOAD_DELAY": "0.2",
    "DOWNLOAD_TIMEOUT": "5",
    "EXTRACT_WORKERS": "1",
    "LOG_LEVEL": "INFO",
}


@pytest.fixture(scope="module")
def big_site() -> Iterator[TestSiteServer]:
    with TestSiteServer(SiteOptions(articles=ARTICLES, crawl_delay=None)) as server:
        yield server


def _crawl_cmd(base_url: str, jobdir: Path, outputs: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"domain={base_url}"]
    for out in outputs:
        cmd += ["-O", out]
    for key, value in {**SETTINGS, "JOBDIR": str(jobdir)}.items():
        cmd += ["-s", f"{key}={value}"]
    return cmd


def _pages_served(server: TestSiteServer, expected: set[str]) -> int:
    return sum(1 for path in server.paths() if path in expected)


def _exported(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _kill_point(server: TestSiteServer, expected: set[str], out: Path) -> bool:
    """KILL_AFTER pages served and some exported (or, should nothing reach the export
    file, all but a few pages served)."""
    served = _pages_served(server, expected)
    return served >= len(expected) - 6 or (served >= KILL_AFTER and _exported(out) >= 3)


def _kill_after(cmd: list[str], server: TestSiteServer, expected: set[str], out: Path) -> None:
    """Run ``cmd`` and SIGKILL it (the crawl process only) at the kill point."""
    kill_when(cmd, lambda: _kill_point(server, expected, out), out.with_suffix(".log"))


def _urls(path: Path, base_url: str) -> list[str]:
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    return [json.loads(line)["url"].removeprefix(base_url) for line in lines if line.strip()]


def _tei_urls(corpus: etree._ElementTree, base_url: str) -> list[str]:
    ns = {"t": "http://www.tei-c.org/ns/1.0"}
    idnos = corpus.getroot().findall("t:TEI/t:teiHeader//t:publicationStmt/t:idno[@type='URL']", ns)
    return [str(idno.text).removeprefix(base_url) for idno in idnos]


def test_sigkill_then_resume_exports_every_page(big_site: TestSiteServer, tmp_path: Path) -> None:
    site = big_site.site
    assert site is not None
    big_site.reset()
    expected = site.expected_pages
    jobdir = tmp_path / "job"
    first_out, first_tei = tmp_path / "first.jsonl", tmp_path / "first.tei.xml"
    cmd = _crawl_cmd(big_site.base_url, jobdir, [str(first_out), f"{first_tei}:tei"])
    _kill_after(cmd, big_site, expected, first_out)
    first = _urls(first_out, big_site.base_url)
    assert len(first) < len(expected)

    # The TEI corpus of the killed crawl is well-formed and holds every document of the
    # JSON lines feed but perhaps the last: an item goes to the feeds in turn, and the
    # kill may fall between the two writes (Scrapy creates feed files with their first
    # item). The TEI feed flushes per document; the JSON lines feed may lag behind it.
    if first:
        corpus = etree.parse(str(first_tei))
        assert tei_errors(corpus) == ""
        in_tei = _tei_urls(corpus, big_site.base_url)
        assert len(in_tei) == len(set(in_tei)) and set(in_tei) <= expected, in_tei
        assert set(first) - set(in_tei) <= {first[-1]}, (first, in_tei)
    else:
        assert not first_tei.exists()

    second_dir = tmp_path / "second"
    second_dir.mkdir()
    # The resumed crawl (in the test process) at no particular pace: what it exports is
    # the subject, not when.
    resumed = {**SETTINGS, **NO_WAITS, "JOBDIR": str(jobdir)}
    second = run_crawl("sitemap", second_dir, {"domain": big_site.base_url}, resumed)
    assert second.returncode == 0, second.log[-3000:]
    both = Counter(first + second.paths(big_site.base_url))
    assert set(both) == expected, sorted(expected - set(both))
    twice = [path for path, n in both.items() if n > 1]
    assert len(twice) <= MAX_IN_FLIGHT, twice
