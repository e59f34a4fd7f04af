"""The crawl state file (``CRAWL_STATE``): what it remembers, and the files it refuses."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from scrapy_maintext.state.crawl_state import (
    CrawlState,
    CrawlStateError,
    check_state_file,
    url_key,
)
from scrapy_maintext.state.fingerprints import SeenFingerprints
from scrapy_maintext.state.sqlite_schema import APPLICATION_ID, SCHEMA_VERSION
from scrapy_maintext.state.validators import Validators, http_date_to_epoch, text_hash

from tests.crawl import QUICK_DISCOVERY, run_crawl
from tests.sites import TestSiteServer
from tests.state_backends import (  # noqa: F401 (fixtures)
    OpenState,
    open_state_fixture,
    redis_server_fixture,
)

URL = "https://example.org/a.html"


def test_export_revisions_and_validators(open_state: OpenState) -> None:
    with open_state() as state:
        assert state.get(URL) is None
        state.record_export(URL, text_hash("one"), 100, Validators('"x"', 50), 7, "https://s/1")
        state.commit()
    with open_state() as state:
        record = state.get(URL)
        assert record is not None
        assert (record.revision, record.first_export, record.last_export) == (1, 100, 100)
        assert record.validators == Validators('"x"', 50) and record.listed == 7
        state.record_seen(URL, Validators(None, 60), 9, None)
        state.record_export(URL, text_hash("two"), 200, Validators('"y"', 70), 9, None)
        state.commit()  # Redis reads see what is committed
        record = state.get(URL)
        assert record is not None
        assert (record.revision, record.first_export, record.last_export) == (2, 100, 200)
        assert record.text_hash == text_hash("two") and record.etag == '"y"'
        assert state.listed_by("https://s/1") == [URL]
        state.mark_gone(URL)
        state.mark_gone("https://example.org/never-seen")  # not remembered: nothing written
        state.commit()
        assert state.get(URL).gone  # type: ignore[union-attr]
        assert state.get("https://example.org/never-seen") is None
        assert state.listed_by("https://s/1") == []
        assert state.known_pages() == 1


def test_fingerprints_of_exports_are_kept_for_the_next_run(open_state: OpenState) -> None:
    other = "https://example.org/b.html"
    with open_state() as state:
        state.record_export(URL, 1, 100, Validators(), None, None, "ffffffffffffff01")
        state.record_export(other, 2, 100, Validators(), None, None, "00000000000000a0")
        state.record_seen(other, Validators('"z"', 5), None, None)  # keeps its fingerprint
        state.commit()
    with open_state() as state:
        assert sorted(state.fingerprints()) == ["00000000000000a0", "ffffffffffffff01"]
        state.record_export(URL, 3, 200, Validators(), None, None, "0f0f0f0f0f0f0f0f")
        state.commit()
        assert state.get(URL).fingerprint == "0f0f0f0f0f0f0f0f"  # type: ignore[union-attr]
        assert state.get(other).fingerprint == "00000000000000a0"  # type: ignore[union-attr]


def test_near_duplicates_of_earlier_runs_but_not_of_a_page_itself() -> None:
    earlier = {URL: "ffffffffffffff01", "https://example.org/b.html": "00000000000000a0"}
    seen = SeenFingerprints(3, None, earlier=earlier.values(), own=earlier.get)
    assert len(seen) == 2
    # Another URL with (nearly) the text of an earlier export: a duplicate.
    assert seen.check_and_add("ffffffffffffff03", "https://example.org/c.html") is not None
    # The page itself, unchanged or slightly changed: judged by the recrawl stage instead.
    assert seen.check_and_add("ffffffffffffff01", URL) is None
    assert seen.check_and_add("ffffffffffffff00", URL) is None
    # ...but still a duplicate of another page's earlier export.
    assert seen.check_and_add("00000000000000a1", URL) == "00000000000000a0"


#: The schema of the first release (user_version 1): no fingerprint column.
SCHEMA_1 = """
CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE urls (key INTEGER PRIMARY KEY, host INTEGER NOT NULL, path TEXT NOT NULL,
    etag TEXT, last_modified INTEGER, listed INTEGER, text_hash INTEGER, first_export INTEGER,
    last_export INTEGER, revision INTEGER NOT NULL DEFAULT 0, gone INTEGER NOT NULL DEFAULT 0,
    document INTEGER NOT NULL DEFAULT 0, source INTEGER);
CREATE INDEX urls_source ON urls(source) WHERE source IS NOT NULL;
"""


def test_a_state_of_schema_1_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA_1)
        db.execute("INSERT INTO names VALUES (1, 'https://example.org')")
        db.execute(
            "INSERT INTO urls (key, host, path, text_hash, revision)"
            " VALUES (?, 1, '/a.html', 5, 1)",
            (url_key(URL),),
        )
        db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        db.execute("PRAGMA user_version=1")
        db.commit()
    check_state_file(path)
    with CrawlState(path) as state:
        record = state.get(URL)
        assert record is not None and record.revision == 1 and record.fingerprint is None
        assert list(state.fingerprints()) == []
        state.record_export(URL, 6, 100, Validators(), None, None, "00000000000000ff")
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    with CrawlState(path) as state:
        assert list(state.fingerprints()) == ["00000000000000ff"]
        assert state.get(URL).revision == 2  # type: ignore[union-attr]


def test_text_hash_folds_white_space_only() -> None:
    assert text_hash("a  b\n c") == text_hash("a b c")
    assert text_hash("a b c") != text_hash("a b d")


def test_http_dates() -> None:
    assert http_date_to_epoch(b"Thu, 01 Jan 1970 00:01:00 GMT") == 60
    assert http_date_to_epoch(b"yesterday") is None
    # The obsolete forms (RFC 9110 5.6.7) too.
    for form in ("Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT"):
        assert http_date_to_epoch(form) == 784111777
    assert http_date_to_epoch("Sun Nov  6 08:49:37 1994") == 784111777
    assert Validators(None, 60).if_modified_since() == "Thu, 01 Jan 1970 00:01:00 GMT"


def test_get_many(open_state: OpenState) -> None:
    with open_state() as state:
        urls = [f"https://example.org/{i}" for i in range(1200)]
        for url in urls[::2]:
            state.record_seen(url, None, 1, None)
        state.commit()
        found = state.get_many(urls)
        assert set(found) == set(urls[::2])


def test_second_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    with CrawlState(path), pytest.raises(CrawlStateError, match="in use by another crawl"):
        CrawlState(path)
    with CrawlState(path):
        pass  # free again once closed


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    text = tmp_path / "notes.txt"
    text.write_text("my notes, not a database\n")
    foreign = tmp_path / "foreign.sqlite"
    with contextlib.closing(sqlite3.connect(foreign)) as db:
        db.execute("CREATE TABLE t (x)")
        db.commit()
    newer = tmp_path / "newer.sqlite"
    CrawlState(newer).close()
    with contextlib.closing(sqlite3.connect(newer)) as db:
        db.execute("PRAGMA user_version=99")  # closed: the WAL goes into the file
    unknown = tmp_path / "unknown.sqlite"
    CrawlState(unknown).close()
    with contextlib.closing(sqlite3.connect(unknown)) as db:
        db.execute("PRAGMA user_version=0")  # older than any release: nothing to migrate from
    corrupt = tmp_path / "corrupt.sqlite"
    with CrawlState(corrupt) as state:
        for i in range(2000):
            state.record_seen(f"https://example.org/{i}", None, i, None)
    data = bytearray(corrupt.read_bytes())
    data[4096:12288] = b"\xff" * 8192  # pages after the header page
    corrupt.write_bytes(bytes(data))
    return {
        "not SQLite": text,
        "not a crawl state": foreign,
        "newer": newer,
        "cannot migrate": unknown,
        "corrupt": corrupt,
    }


def test_bad_files_are_refused_and_left_alone(tmp_path: Path) -> None:
    for expected, path in _bad_files(tmp_path).items():
        before = path.read_bytes()
        with pytest.raises(CrawlStateError) as raised:
            check_state_file(path)
        message = str(raised.value)
        assert "\n" not in message and str(path) in message
        assert expected.split()[-1] in message, message
        assert path.read_bytes() == before, expected


@pytest.mark.parametrize("case", ["not SQLite", "not a crawl state", "newer", "corrupt"])
def test_crawl_with_a_bad_state_file_exits_2(
    case: str, hostile_site: TestSiteServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _bad_files(tmp_path)[case]
    before = path.read_bytes()
    settings = {**QUICK_DISCOVERY, "CRAWL_STATE": str(path)}
    result = run_crawl("sitemap", tmp_path / "out", {"domain": hostile_site.base_url}, settings)
    assert result.returncode == 2
    assert "Traceback" not in result.log
    assert capsys.readouterr().err.strip().startswith(f"scrapy crawl: error: crawl state {path}")
    assert not hostile_site.paths()
    assert path.read_bytes() == before


def test_crawl_while_another_holds_the_state_exits_2(
    hostile_site: TestSiteServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "state.sqlite"
    settings = {**QUICK_DISCOVERY, "CRAWL_STATE": str(path)}
    with CrawlState(path):
        result = run_crawl("sitemap", tmp_path / "out", {"domain": hostile_site.base_url}, settings)
    assert result.returncode == 2
    assert "in use by another crawl" in capsys.readouterr().err
    assert "Traceback" not in result.log


def test_maintext_crawl_says_it_in_one_line(tmp_path: Path) -> None:
    from scrapy_maintext.cli import check_settings

    notes = _bad_files(tmp_path)["not SQLite"]
    error = check_settings(["-s", f"CRAWL_STATE={notes}", "-O", "out.jsonl"])
    assert (
        error
        == f"maintext crawl: error: crawl state {notes} is not a crawl state file (not SQLite)"
    )
    assert check_settings(["-s", f"CRAWL_STATE={tmp_path / 'new.sqlite'}"]) is None
    assert not (tmp_path / "new.sqlite").exists()


def test_report_shows_recrawl_outcomes() -> None:
    from scrapy_maintext.report.extension import SiteReport, format_report

    report = SiteReport("https://example.org")
    report.recrawl.update({"new": 2, "changed": 3, "unchanged": 15, "gone": 1})
    text = format_report({report.site: report}, "finished")
    assert "recrawl unchanged 15, changed 3, new 2, gone 1" in text
    assert report.to_dict()["recrawl"] == {"changed": 3, "gone": 1, "new": 2, "unchanged": 15}


def _unusable_paths(tmp_path: Path) -> dict[str, Path]:
    """State paths that cannot be used, by a phrase of the one line that says why."""
    (tmp_path / "afile").write_text("not a folder")
    emptied = tmp_path / "emptied.sqlite"
    emptied.write_bytes(b"")
    (tmp_path / "afolder.sqlite").mkdir()
    return {
        "afile is not a folder": tmp_path / "afile" / "state.sqlite",
        "is not a regular file": Path("/dev/null"),
        "is a folder": tmp_path / "afolder.sqlite",
        "is empty (0 bytes)": emptied,
    }


@pytest.mark.parametrize("hold", [False, True])
def test_paths_that_cannot_hold_a_state_are_named_in_one_line(tmp_path: Path, hold: bool) -> None:
    for phrase, path in _unusable_paths(tmp_path).items():
        with pytest.raises(CrawlStateError) as raised:
            check_state_file(path, hold=hold)
        message = str(raised.value)
        assert "\n" not in message and phrase in message and "corrupt" not in message, message
    assert (tmp_path / "emptied.sqlite").read_bytes() == b""  # left for the user to look at


def test_a_read_only_folder_is_not_called_corrupt(tmp_path: Path) -> None:
    from tests.tmpfs import Tmpfs

    with Tmpfs.mounted(tmp_path / "ro", "1m") as disk:
        state = disk.path / "state.sqlite"
        with CrawlState(state) as opened:
            opened.record_export(URL, 1, 100, Validators(), None, None)
        disk.remount_read_only()
        for path, phrase in ((state, "ead-only"), (disk.path / "new/s.sqlite", "not writable")):
            with pytest.raises(CrawlStateError) as raised:
                check_state_file(path, hold=True)
            assert phrase in str(raised.value) and "corrupt" not in str(raised.value)


def test_a_state_that_cannot_be_created_leaves_no_file(tmp_path: Path) -> None:
    from tests.tmpfs import Tmpfs

    with Tmpfs.mounted(tmp_path / "tiny", "16k") as disk:
        state = disk.path / "state.sqlite"
        with pytest.raises(CrawlStateError, match="cannot be created: database or disk is full"):
            check_state_file(state, hold=True)
        assert list(disk.path.iterdir()) == []


def test_a_checked_state_is_held_until_the_crawl_takes_it(tmp_path: Path) -> None:
    from scrapy_maintext.state.crawl_state import open_state

    path = tmp_path / "state.sqlite"
    check_state_file(path, hold=True)
    # Another crawl started meanwhile is refused: the lock is held from the check on.
    with pytest.raises(CrawlStateError, match="in use by another crawl"):
        CrawlState(path)
    with open_state(path) as state:
        assert state.known_pages() == 0


@pytest.mark.slow
def test_two_crawls_started_at_once_one_is_refused_in_one_line(
    hostile_site: TestSiteServer, tmp_path: Path
) -> None:
    import subprocess
    import sys

    from tests.crawl import ROOT

    state = tmp_path / "state.sqlite"
    cmd = [
        sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a",
        f"domain={hostile_site.base_url}", "-s", f"CRAWL_STATE={state}",
        *[f"-s{k}={v}" for k, v in QUICK_DISCOVERY.items()],
    ]  # fmt: skip
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    results = [(p.wait(120), p.stderr.read().decode() if p.stderr else "") for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    refused = next(err for code, err in results if code == 2)
    assert refused.strip().count("\n") == 0 and "in use by another crawl" in refused


def test_a_state_in_a_folder_that_cannot_be_entered_is_one_line(tmp_path: Path) -> None:
    from tests.permissions import maintext_bound

    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        done = maintext_bound(
            *("crawl", "sitemap", "-a", "domain=http://127.0.0.1:9"),
            *("-s", f"CRAWL_STATE={locked}/state.sqlite", "-O", str(tmp_path / "out.jsonl")),
        )
    finally:
        locked.chmod(0o755)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [
        f"maintext crawl: error: crawl state {locked}/state.sqlite cannot be read: "
        "Permission denied"
    ]


def test_a_state_file_being_created_is_never_seen_empty_and_unlocked(tmp_path: Path) -> None:
    import threading

    def take(path: Path, barrier: threading.Barrier, errors: list[str]) -> None:
        barrier.wait()
        try:
            CrawlState(path).close()
        except CrawlStateError as exc:
            errors.append(str(exc))

    errors: list[str] = []
    for round_ in range(150):
        path = tmp_path / f"state-{round_}.sqlite"
        barrier = threading.Barrier(2)
        threads = [threading.Thread(target=take, args=(path, barrier, errors)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert all("in use by another crawl" in error for error in errors), errors[:3]
    assert not list(tmp_path.glob(".*.creating"))
