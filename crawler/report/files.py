"""Writing a report (JSON or HTML, by the file's suffix) and reading a saved one (Scrapy-free)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from scrapy_maintext.report.fields import ReportError, check_run, check_site
from scrapy_maintext.report.sites import REPORT_FORMAT, SITE_COUNTERS, TEXT_LENGTH_BINS

__all__ = [
    "HTML_SUFFIXES",
    "ReportError",
    "check_report_path",
    "load_report",
    "upgrade",
    "write_report",
]

HTML_SUFFIXES = (".html", ".htm")


def is_html(path: str | Path) -> bool:
    return Path(path).suffix.lower() in HTML_SUFFIXES


def render_report(data: dict[str, Any], path: str | Path) -> str:
    """The file's text: the HTML page for ``.html``/``.htm``, else the JSON report."""
    if is_html(path):
        from scrapy_maintext.report.html import render

        return render(data)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_report(data: dict[str, Any], path: str | Path) -> None:
    """Write the report whole: a reader never sees half a file, and a write that fails
    leaves no partial one behind (raises OSError)."""
    target = Path(path)
    text = render_report(data, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(text, "utf-8")
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise


def check_report_path(path: str | Path, name: str = "CRAWL_REPORT") -> None:
    """Before a run: ValueError (one line, naming ``name`` and the path) when a report cannot
    be written to ``path``: a folder, a path under a file, a folder that cannot be written.
    Its missing folders are created."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"{name} {path}: is a directory")
    for folder in target.parents:
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"{name} {path}: {folder} is not a directory")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{name} {path}: {exc.strerror or exc}") from None
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise ValueError(f"{name} {path}: its folder {target.parent} is not writable")


def load_report(path: str | Path) -> dict[str, Any]:
    """A saved report: a JSON report, or the one an HTML report holds."""
    source = Path(path)
    try:
        text = source.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{source}: cannot read it ({exc})") from None
    try:
        if is_html(source):
            from scrapy_maintext.report.html import embedded_data

            data = embedded_data(text)
        else:
            data = json.loads(text)
    except ValueError as exc:
        raise ReportError(f"{source}: not a crawl report ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("sites"), list):
        raise ReportError(f"{source}: not a crawl report (no list of sites)")
    try:
        return upgrade(data)
    except ReportError as exc:
        raise ReportError(f"{source}: not a crawl report ({exc})") from None


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A report of an earlier version with every key the renderers read (empty when unknown),
    each of the type they read (else :class:`ReportError` names the field)."""
    data.setdefault("format", REPORT_FORMAT)
    data.setdefault("reason", "-")
    data.setdefault("run", {})
    data.setdefault("text_length_bins", list(TEXT_LENGTH_BINS))
    data.setdefault("bucket_seconds", 1.0)
    data.setdefault("recrawl", {})
    data.setdefault("repaired", {})
    check_run(data)
    bins = len(data["text_length_bins"])
    for index, site in enumerate(data["sites"]):
        if not isinstance(site, dict) or "site" not in site:
            raise ReportError(f"sites[{index}] is not a site with its name")
        for key in ("planned", "fetched", "mean_text_length", "requests"):
            site.setdefault(key, 0)
        for key in SITE_COUNTERS:
            site.setdefault(key, {})
        site.setdefault("statuses", {})
        site.setdefault("text_lengths", [0] * bins)
        site.setdefault("requests_per_bucket", [])
        for key in ("delay", "min_gap", "failure"):
            site.setdefault(key, None)
        check_site(site, index, bins)
    return data
