"""``maintext state PATH``: a real state file per site, as JSON, a site forgotten, and the
files it refuses in one line (exit status 2)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from scrapy_maintext.cli import main
from scrapy_maintext.state.crawl_state import CrawlState
from scrapy_maintext.state.schedule import DAY, Clock, Schedule, SchedulePolicy, Visit
from scrapy_maintext.state.validators import Validators

from tests.permissions import maintext_bound
from tests.test_recrawl_schedule import HOUR, T0

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
        "site", "known", "listings", "due", "now", "due", "24h", "changed", "24h",
        "gone", "revisions", "last", "visit", "(UTC)",
    ]  # fmt: skip
    # known, listings, due now, due 24h, changed 24h, gone, revisions, last visit
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
        db.executescript("DROP TABLE schedule; DROP TABLE robots; PRAGMA user_version=2;")


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


def _sites(path: Path) -> dict[str, int]:
    """Known URLs per site, as ``maintext state --json`` gives them."""
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["state", str(path), "--json"]) == 0
    return {s["site"]: s["known"] for s in json.loads(out.getvalue())["sites"]}


def test_forget_names_one_site_ports_included(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two sites on one host, ports apart: each is forgotten alone; a port the state does
    not hold, or the host without its port, is one line and drops nothing."""
    path = tmp_path / "state.sqlite"
    _state(path)
    with CrawlState(path) as state:
        for port in (18515, 18516):
            state.record_export(f"http://127.0.0.1:{port}/p.html", 3, T0, Validators(), None, None)
        state.commit()
    before = _sites(path)
    wrong_ports = ("127.0.0.1:9999", "http://127.0.0.1:9999", "https://127.0.0.1:18515")
    for wrong in ("127.0.0.1", *wrong_ports):
        assert main(["state", str(path), "--forget", wrong]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"maintext state: error: no site {wrong} in {path} (its sites: ")
        assert _sites(path) == before
    assert main(["state", str(path), "--forget", "127.0.0.1:18515"]) == 0
    assert "Forgot 1 URLs of http://127.0.0.1:18515 in" in capsys.readouterr().err
    assert main(["state", str(path), "--forget", "http://127.0.0.1:18516/"]) == 0
    assert "Forgot 1 URLs of http://127.0.0.1:18516 in" in capsys.readouterr().err
    assert _sites(path) == {B: 1, A: 4}


def _one_line_error(done: subprocess.CompletedProcess[str], *phrases: str) -> str:
    assert done.returncode == 2 and done.stdout == "", done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("maintext state: error: crawl state "), line
    assert all(phrase in line for phrase in phrases), line
    return line


def test_a_folder_that_cannot_be_entered_is_one_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    path = locked / "state.sqlite"
    _state(path)
    locked.chmod(0)
    try:
        for extra in ([], ["--json"], ["--forget", "a.example"]):
            done = maintext_bound("state", str(path), *extra)
            _one_line_error(done, f"{path} cannot be read: Permission denied")
    finally:
        locked.chmod(0o755)
    assert _sites(path) == {B: 1, A: 4}


@pytest.mark.parametrize("read_only", ["folder", "file"])
def test_a_read_only_state_is_read_and_not_written(tmp_path: Path, read_only: str) -> None:
    """A state closed cleanly in a folder (or a file) that cannot be written: the overview
    works (read-only); --forget says in one line that it cannot write, the file intact."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "state.sqlite"
    _state(path)
    before = path.read_bytes()
    locked = folder if read_only == "folder" else path
    locked.chmod(0o555 if read_only == "folder" else 0o444)
    try:
        done = maintext_bound("state", str(path), "--json", "--now", str(T0))
        assert done.returncode == 0, done.stderr
        sites = {s["site"]: s["known"] for s in json.loads(done.stdout)["sites"]}
        assert sites == {B: 1, A: 4}
        line = _one_line_error(maintext_bound("state", str(path), "--forget", "a.example"))
        assert "cannot be written" in line and "corrupt" not in line
    finally:
        locked.chmod(0o755 if read_only == "folder" else 0o644)
    assert path.read_bytes() == before
    assert _sites(path) == {B: 1, A: 4}


def test_a_read_only_folder_with_a_crawls_log_left_is_one_line(tmp_path: Path) -> None:
    """A copy taken while a crawl held the file (its -wal not checkpointed) in a folder that
    cannot be written: SQLite cannot read the log there; one line says so, not corrupt."""
    folder = tmp_path / "ro"
    folder.mkdir()
    with CrawlState(tmp_path / "state.sqlite") as state:
        state.record_export(f"{A}/x.html", 1, T0, Validators(), None, None)
        state.commit()
        for suffix in ("", "-wal"):
            shutil.copy(tmp_path / f"state.sqlite{suffix}", folder / f"state.sqlite{suffix}")
    folder.chmod(0o555)
    try:
        done = maintext_bound("state", str(folder / "state.sqlite"))
    finally:
        folder.chmod(0o755)
    line = _one_line_error(done, f"its folder {folder} is read-only", "-wal holds writes")
    assert "corrupt" not in line


def _urls_visited(path: Path, count: int, at: int) -> list[str]:
    """``count`` undated pages of site A, each visited once at ``at``."""
    urls = [f"{A}/{n}.html" for n in range(count)]
    with CrawlState(path) as state:
        schedule = Schedule(state, SchedulePolicy(), Clock(at))
        for url in urls:
            state.record_export(url, 1, at, Validators(), None, None)
            schedule.visited(url, True)
        state.commit()
    return urls


def _due_now(path: Path, now: int, *settings: str) -> int:
    args = ["state", str(path), "--json", "--now", str(now)]
    for setting in settings:
        args += ["-s", setting]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(args) == 0
    return int(json.loads(out.getvalue())["total"]["due_now"])


def _requested(path: Path, urls: list[str], policy: SchedulePolicy, now: int) -> int:
    """How many of ``urls`` a run at ``now`` requests."""
    with CrawlState(path) as state:
        return len(urls) - len(Schedule(state, policy, Clock(now)).not_due(urls))


def test_due_now_is_what_a_run_then_requests(tmp_path: Path) -> None:
    """11 pages read an hour apart: half an hour before they are due, a run requests all
    11 (due by the middle of the next run), and the overview says 11 due now."""
    path = tmp_path / "state.sqlite"
    urls = _urls_visited(path, 11, T0)
    now = T0 + HOUR - HOUR // 2
    assert _requested(path, urls, SchedulePolicy(), now) == 11
    assert _due_now(path, now) == 11
    for at in range(T0, T0 + 2 * HOUR, 300):
        assert _due_now(path, at) == _requested(path, urls, SchedulePolicy(), at)
    runs_every_10_minutes = SchedulePolicy(min_interval=600)
    assert _requested(path, urls, runs_every_10_minutes, now) == 0
    assert _due_now(path, now, "RECRAWL_MIN_INTERVAL=600") == 0


def test_a_lowered_max_interval_applies_to_stored_due_times(tmp_path: Path) -> None:
    """Pages stored due a day after their last visit; RECRAWL_MAX_INTERVAL lowered to 6
    hours: due 6 hours after it, in the runs and in the overview, not after a day."""
    path = tmp_path / "state.sqlite"
    urls = _urls_visited(path, 5, T0)
    with CrawlState(path) as state:
        for url in urls:
            state.record_visit(url, Visit(T0 + DAY, DAY, T0, T0, None))
        state.commit()
    six_hours = SchedulePolicy(max_interval=6 * HOUR)
    assert _requested(path, urls, SchedulePolicy(), T0 + 6 * HOUR) == 0
    assert _requested(path, urls, six_hours, T0 + 6 * HOUR) == 5
    assert _requested(path, urls, six_hours, T0 + 5 * HOUR) == 0
    assert _due_now(path, T0 + 6 * HOUR) == 0
    assert _due_now(path, T0 + 6 * HOUR, f"RECRAWL_MAX_INTERVAL={6 * HOUR}") == 5
    with CrawlState(path) as state:  # the next visit is scheduled within the new bound
        visit = Schedule(state, six_hours, Clock(T0 + 6 * HOUR)).visited(urls[0], False)
    assert visit.due <= T0 + 12 * HOUR


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("RECRAWL_MIN_INTERVAL=7200", "RECRAWL_MIN_INTERVAL=7200 and RECRAWL_MAX_INTERVAL=3600"),
        ("RECRAWL_SCHEDULE=sometimes", "RECRAWL_SCHEDULE='sometimes'"),
    ],
)
def test_schedule_settings_that_do_not_fit_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setting: str, message: str
) -> None:
    path = tmp_path / "state.sqlite"
    _state(path)
    assert main(["state", str(path), "-s", "RECRAWL_MAX_INTERVAL=3600", "-s", setting]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("maintext state: error: ") and message in line
