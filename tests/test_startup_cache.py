"""The start-up cache (``fields.startup_cache``): dateparser's compiled patterns and the
decompressed language model are read back instead of built again, give the same answers,
and a cache that is missing, off or foreign costs time, never an error."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
import regex
from regex import _main
from scrapy_maintext.fields import startup_cache
from scrapy_maintext.fields.language import _from_cache
from scrapy_maintext.fields.startup_cache import CACHE_ENV, compiled_patterns

TEXTS = ["Dies ist ein deutscher Satz über das Wetter.", "The weather is fine today.", "x"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    return tmp_path


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The patterns ``regex`` really compiles from now on (parsing them in Python)."""
    seen: list[str] = []
    compile_ = _main._compile

    def counted(pattern, flags, ignore_unused, kwargs, cache_it):  # type: ignore[no-untyped-def]
        seen.append(pattern)
        return compile_(pattern, flags, ignore_unused, kwargs, cache_it)

    monkeypatch.setattr(_main, "_compile", counted)
    return seen


def test_patterns_compiled_once_for_all_processes(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = r"(?:startup|cache)-test-\d{3}-[^\W\d_]+"
    regex.purge()
    with compiled_patterns("test"):
        first = regex.compile(text, regex.I)
    assert len(list(cache.glob("test-regex-*.pickle"))) == 1
    regex.purge()  # as a fresh process: regex's own cache empty
    seen = _compiles(monkeypatch)
    with compiled_patterns("test"):
        again = regex.compile(text, regex.I)
    assert text not in seen
    assert again.findall("Startup-test-123-abc cache-test-4") == first.findall(
        "Startup-test-123-abc cache-test-4"
    )
    with compiled_patterns("test"):
        assert regex.compile(text) is not again  # other flags, another pattern


def test_warm_date_parser_reads_the_cache(cache: Path) -> None:
    from htmldate.extractors import get_external_parser
    from scrapy_maintext.fields.metadata import warm_date_parser

    warm_date_parser()
    assert list(cache.glob("dateparser-regex-*.pickle")) or get_external_parser.cache_info().hits
    parsed = get_external_parser().get_date_data("12 marzo 2021")["date_obj"]
    assert (parsed.year, parsed.month, parsed.day) == (2021, 3, 12)


def test_a_foreign_pickle_runs_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = cache / "ran"

    class Evil:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, (f"touch {marker}",))

    name = startup_cache._patterns_name("test")
    (cache / name).write_bytes(pickle.dumps({("str", "a", 0, 0): Evil()}))
    with compiled_patterns("test"):
        assert regex.compile(r"foreign-\d").match("foreign-1")
    assert not marker.exists()


def test_no_cache_when_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "")
    monkeypatch.chdir(tmp_path)
    assert startup_cache.cache_dir() is None
    with compiled_patterns("test"):
        regex.compile(r"off-\d")
    assert list(tmp_path.iterdir()) == []


def test_unwritable_cache_is_left_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "cache"))
    with compiled_patterns("test"):
        assert regex.compile(r"unwritable-\d").match("unwritable-1")


def test_language_model_from_the_cache_is_py3langids(cache: Path) -> None:
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    own = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    built = _from_cache(MODEL_DIR / MODEL_FILE)  # decompresses and writes the cache
    assert len(list(cache.glob("py3langid-model.npz-*"))) == 1
    read = _from_cache(MODEL_DIR / MODEL_FILE)  # reads it
    for text in TEXTS:
        assert built.rank(text) == own.rank(text) == read.rank(text)
