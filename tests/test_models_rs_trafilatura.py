"""rs-trafilatura in the judge (``models.rs_trafilatura``): its texts come from a Python that
has trafipy, cached per page; without one, the system is skipped with one line."""

from __future__ import annotations

import gzip
import json
import logging
import os
import sys
from pathlib import Path

import pytest
from scrapy_maintext.models.rs_trafilatura import PYTHON_ENV, python_of, rs_texts

PAGE = (
    "<html><body><nav><a href='/'>Home</a> <a href='/about'>About</a></nav><article>"
    "<h1>A headline</h1>"
    + "<p>A sentence of the article that says something. </p>" * 12
    + "</article><footer>Copyright</footer></body></html>"
)


def _data(folder: Path) -> Path:
    folder.mkdir()
    pages = [{"id": f"tiny/{i}", "url": f"https://example.org/{i}", "html": PAGE} for i in range(2)]
    with gzip.open(folder / "tiny.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(p) + "\n" for p in pages)
    return folder


def test_without_a_python_it_is_skipped_with_a_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PYTHON_ENV, raising=False)
    caplog.set_level(logging.WARNING)
    assert python_of("") == ""
    assert rs_texts(str(tmp_path), {"tiny/0"}, "", tmp_path / "cache.json") is None
    assert "rs-trafilatura skipped" in caplog.text
    missing = str(tmp_path / "no-python")
    assert rs_texts(str(tmp_path), {"tiny/0"}, missing, tmp_path / "cache.json") is None


def test_a_python_without_trafipy_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("scrapy_maintext")
    try:
        import trafipy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("this Python has trafipy")
    caplog.set_level(logging.WARNING)
    data = _data(tmp_path / "data")
    assert rs_texts(str(data), {"tiny/0"}, sys.executable, tmp_path / "cache.json") is None
    assert "could not run it" in caplog.text and not (tmp_path / "cache.json").exists()


@pytest.mark.skipif(not os.environ.get(PYTHON_ENV), reason=f"${PYTHON_ENV} (trafipy) not set")
def test_texts_come_from_trafipy_and_are_cached(tmp_path: Path) -> None:
    data = _data(tmp_path / "data")
    cache = tmp_path / "rs" / "cache.json"
    texts = rs_texts(str(data), {"tiny/0", "tiny/1"}, python_of(""), cache)
    assert texts is not None and set(texts) == {"tiny/0", "tiny/1"}
    assert "A sentence of the article" in texts["tiny/0"] and "Copyright" not in texts["tiny/0"]
    # A second call reads the cache: no Python is run (a missing one would be skipped).
    stored = json.loads(cache.read_text(encoding="utf-8"))
    assert stored["texts"] == texts and stored["version"]
    again = rs_texts(str(data), {"tiny/0"}, python_of(""), cache)
    assert again == {"tiny/0": texts["tiny/0"]}
