"""``maintext state PATH``: a real state file per site, as JSON, a site forgotten, and the
files it refuses in one line (exit status 2)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest
from scrapy_maintext.cli import main
from scrapy_maintext.state.crawl_state import CrawlState
from scrapy_maintext.state.schedule import DAY, Clock, Schedule, SchedulePolicy
from scrapy_maintext.state.validators import Validators

from tests.test_recrawl_schedule import T0

A = "https://a.example"
B = "http://127.0.0.1:8080"


def _state(path: Path) -> None:
    """Site A: 3 pages (one gone, one revised), its sitemap; site B: 1 page, a day old."""
    clock = Clock(T0 - DAY - 60)
    with CrawlState(path) as state:
        schedule = Schedule(state, SchedulePolicy(), clock)
        state.record_export(f"{B}/old.html", 9, clock.now(), Validators(), None, None)
        schedule.visited(f"{B}/old.html", True)
        clock.at = T0 - 60
        for name in ("x", "y", "z"):
            url = f"{A}/{name}.html"
            state.record_export(url, 1, clock.now(), Validators(), None, f"{A}/sitemap.xml")
            schedule.visited(url, True)
        state.record_export(f"{A}/y.html", 2, clock.now(), Validators(), None, None)
        state.mark_gone(f"{A}/z.html")
        state.record_seen(f"{A}/sitemap.xml", Validators('"s"', None), None, None, document=True)
        schedule.visited(f"{A}/sitemap.xml", False, digest=5)
        state.commit()


def test_state_per_site_and_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "state.sqlite"
    _state(path)
    assert main(["state", str(path), "--now", str(T0)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "site", "known", "sitemaps+feeds", "due", "now", "due", "24h", "changed", "24h",
        "gone", "revisions", "last", "visit", "(UTC)",
    ]  # fmt: skip
    # known, sitemaps+feeds, due now, due 24h, changed 24h, gone, revisions, last visit
    assert lines[1].split()[:8] == [B, "1", "0", "1", "0", "0", "0", "1"]
    # The sitemap, read for the first time, counts as changed.
    assert lines[2].split()[:8] == [A, "4", "1", "0", "3", "4", "1", "4"]
    assert lines[3].startswith("total (2 sites)") and lines[3].split()[3:10] == [
        "5", "1", "1", "3", "4", "1", "5",
    ]  # fmt: skip

    assert main(["state", str(path), "--json", "--now", str(T0 + DAY)]) == 0
    data = json.loads(capsys.readouterr().out)
    a = {s["site"]: s for s in data["sites"]}[A]
    assert (a["known"], a["due_now"], a["changed_24h"], a["revisions"]) == (4, 3, 0, 4)
    assert data["total"]["known"] == 5 and a["last_visit"].startswith("2027-01-15T07:")


def test_forget_a_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "state.sqlite"
    _state(path)
    assert main(["state", str(path), "--forget", "a.example"]) == 0
    assert f"Forgot 4 URLs of {A}" in capsys.readouterr().err
    assert main(["state", str(path), "--json"]) == 0
    assert [s["site"] for s in json.loads(capsys.readouterr().out)["sites"]] == [B]
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM schedule").fetchone()[0] == 1
    assert main(["state", str(path), "--forget", "nowhere.example"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"maintext state: error: no site nowhere.example in {path} (its sites: {B})"
    with CrawlState(path):  # a crawl holds the file
        assert main(["state", str(path), "--forget", B]) == 2
    assert "in use by another crawl" in capsys.readouterr().err


def _schema_2(path: Path) -> None:
    _state(path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript("DROP TABLE schedule; PRAGMA user_version=2;")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.write_bytes(b"not a database at all, just bytes"), "is not a crawl state"),
        (lambda p: sqlite3.connect(p).execute("CREATE TABLE t (x)").connection.commit(), "is not"),
        (_schema_2, "has schema 2, of an older scrapy-maintext: the next crawl"),
        (lambda p: None, "does not exist"),
        (lambda p: p.write_bytes(b""), "is empty (0 bytes)"),
        (lambda p: p.mkdir(), "is a folder"),
    ],
)
def test_bad_files_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, message: str
) -> None:
    path = tmp_path / "state.sqlite"
    make(path)  # type: ignore[operator]
    before = path.read_bytes() if path.is_file() else None
    for extra in ([], ["--json"], ["--forget", "a.example"]):
        assert main(["state", str(path), *extra]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        (line,) = captured.err.splitlines()
        assert line.startswith(f"maintext state: error: crawl state {path} ") and message in line
    assert (path.read_bytes() if path.is_file() else None) == before  # left untouched
