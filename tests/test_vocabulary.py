"""The vocabulary is the one home of settings, and the docs are generated from it."""

from __future__ import annotations

import re
from pathlib import Path

from scrapy.settings import Settings
from scrapy_maintext.vocabulary.reasons import (
    DOWNLOAD_ERRORS,
    DropReason,
    NoMainText,
    PageDropped,
    PageIgnored,
    SiteStalled,
    SkipReason,
)
from scrapy_maintext.vocabulary.settings import SCRAPY_DEFAULTS, SETTINGS, markdown, setting

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [
    p
    for folder in ("crawler", "spiders", "middlewares")
    for p in (ROOT / folder).rglob("*.py")
    if "vocabulary" not in p.parts
]
_DIRECT_READ = re.compile(r"settings\.get\w*\(\s*\"([A-Z0-9_]+)\"")


def test_docs_settings_page_is_generated_from_the_registry() -> None:
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    regenerate = "python -m scrapy_maintext.vocabulary.settings > docs/settings.md"
    assert page == markdown(), regenerate


def test_our_settings_are_read_only_through_the_registry() -> None:
    direct = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in SOURCES
        for name in _DIRECT_READ.findall(path.read_text(encoding="utf-8"))
        if name in SETTINGS
    ]
    assert direct == []


def test_every_registered_setting_is_used() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in SOURCES)
    unused = [name for name in SETTINGS if f'"{name}"' not in text]
    assert unused == []


def test_registry_rows_are_complete_and_disjoint() -> None:
    assert not set(SETTINGS) & set(SCRAPY_DEFAULTS)
    for spec in [*SETTINGS.values(), *SCRAPY_DEFAULTS.values()]:
        assert spec.doc and spec.group
        assert spec.default is None or isinstance(spec.default, spec.type), spec.name


def test_setting_converts_command_line_strings_and_falls_back_to_defaults() -> None:
    given = Settings(
        {
            "EXTRACT_WORKERS": "0",
            "EXTRACT_DEDUP": "False",
            "STALL_BUDGET": "2.5",
            "RETRY_AFTER_HTTP_CODES": "429,503,502",
            "DOCDIR_PATH": "",
        }
    )
    assert setting(given, "EXTRACT_WORKERS") == 0
    assert setting(given, "EXTRACT_DEDUP") is False
    assert setting(given, "STALL_BUDGET") == 2.5
    assert setting(given, "RETRY_AFTER_HTTP_CODES") == ["429", "503", "502"]
    assert setting(given, "DOCDIR_PATH") == ""
    empty = Settings()
    assert setting(empty, "EXTRACT_WORKERS") is None
    assert setting(empty, "SITE_MEMORY_ENABLED") is False
    assert setting(empty, "EXTRACT_ENGINE") == "auto"


def test_reasons_are_carried_by_types() -> None:
    assert SiteStalled("site stalled: a").reason == SkipReason.SITE_STALLED
    assert isinstance(SiteStalled("x"), PageIgnored)
    assert NoMainText("whatever the message").reason == DropReason.NO_TEXT
    assert isinstance(NoMainText("x"), PageDropped)
    assert set(DOWNLOAD_ERRORS.values()) <= set(SkipReason)
