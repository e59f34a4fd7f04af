"""The report's header: the command, versions and the settings that shape a run (Scrapy-free)."""

from __future__ import annotations

import platform
import shlex
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy_maintext.vocabulary.settings import setting

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

#: Distributions whose versions the header names.
DISTRIBUTIONS = ("scrapy-maintext", "scrapy", "trafilatura", "onnxruntime")


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def command_line(argv: Sequence[str] | None = None, spider: str = "") -> str:
    """The command as typed: the program's name, then its arguments, shell-quoted.

    ``scrapy crawl`` takes its command's name out of ``sys.argv``: it is put back before
    the ``spider``'s name."""
    argv = list(sys.argv if argv is None else argv)
    if not argv:
        return ""
    program = Path(argv[0])
    name = program.name
    if name == "__main__.py":
        name = f"python -m {_main_module() or program.parent.name}"
    rest = argv[1:]
    if spider and rest[:1] == [spider]:
        rest.insert(0, "crawl")
    return shlex.join([name, *rest]).replace(f"'{name}'", name, 1)


def _main_module() -> str | None:
    """The package ``python -m`` ran (its folder's name may differ: an editable install)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = getattr(spec, "name", None)
    return name.removesuffix(".__main__") if isinstance(name, str) else None


def run_header(
    settings: dict[str, Any], model_version: str | None = None, command: str | None = None
) -> dict[str, Any]:
    """What the report's header shows; ``settings`` are those that matter, already read;
    ``command`` is the command line (this process's when None)."""
    return {
        "command": command_line() if command is None else command,
        "versions": versions(),
        "model_version": model_version,
        "settings": {name: value for name, value in settings.items() if value not in (None, "")},
    }


#: Scrapy's settings the report's header shows (ours: :data:`SHOWN_OURS`).
SHOWN_SCRAPY = (
    "DOWNLOAD_DELAY",
    "CONCURRENT_REQUESTS",
    "CONCURRENT_REQUESTS_PER_DOMAIN",
    "AUTOTHROTTLE_ENABLED",
    "ROBOTSTXT_OBEY",
    "JOBDIR",
    "CLOSESPIDER_TIMEOUT",
    "CLOSESPIDER_ITEMCOUNT",
    "CLOSESPIDER_PAGECOUNT",
    "CLOSESPIDER_ERRORCOUNT",
)
SHOWN_OURS = (
    "CRAWLER_CONTACT",
    "EXTRACT_ENGINE",
    "EXTRACT_MODEL",
    "EXTRACT_WORKERS",
    "EXTRACT_DEDUP",
    "EXTRACT_MIN_TEXT_LENGTH",
    "SITE_MEMORY_ENABLED",
)


def shown_settings(settings: BaseSettings) -> dict[str, Any]:
    """The settings that shape a crawl, for the report's header (unset and 0 limits left
    out; a Redis URL is said to be set, never shown: it may hold a password)."""
    shown: dict[str, Any] = {name: settings.get(name) for name in SHOWN_SCRAPY}
    shown |= {name: setting(settings, name) for name in SHOWN_OURS}
    if setting(settings, "REDIS_URL"):
        shown["REDIS_URL"] = "(set)"
    return {
        name: value
        for name, value in shown.items()
        if value not in (None, "") and not (name.startswith("CLOSESPIDER") and not float(value))
    }
