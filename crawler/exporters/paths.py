"""Output paths checked before a crawl starts: one line that names the path, not a failure
at the first document (issue 29).

A local feed (``-O``/``-o`` paths and ``file://`` URIs) and ``DOCDIR_PATH`` must be
writable where they are: a feed is not a folder, and the nearest folder that exists above
it is a writable folder (what is missing below it is created). Feeds with URI parameters
(``%(time)s``) are checked up to the first parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from scrapy.settings import BaseSettings
from scrapy_maintext.vocabulary.settings import setting
from scrapy_maintext.writable import path_problem

#: Local feed URIs: a plain path or ``file://``.
_LOCAL_SCHEMES = ("", "file")


@dataclass(frozen=True)
class LocalTarget:
    """Where a local feed writes: its file, or the folder of a file named by parameters."""

    path: Path
    folder: bool


def feed_target(uri: str) -> LocalTarget | None:
    """Where feed ``uri`` writes (up to its first URI parameter), None if not local."""
    parsed = urlparse(uri)
    if parsed.scheme not in _LOCAL_SCHEMES:
        return None
    text = unquote(parsed.path) if parsed.scheme == "file" else uri
    cut = text.find("%(")
    if cut >= 0:
        return LocalTarget(Path(text[:cut].rpartition("/")[0] or "."), folder=True)
    return LocalTarget(Path(text), folder=False)


def outputs_problem(settings: BaseSettings) -> str | None:
    """The first local output (feeds, ``DOCDIR_PATH``) that cannot be written, in one line."""
    for uri in settings.getdict("FEEDS"):
        target = feed_target(str(uri))
        if target is None:
            continue
        problem = path_problem(target.path, "output", target.folder)
        if problem:
            return problem
    docdir = setting(settings, "DOCDIR_PATH")
    if docdir:
        return path_problem(Path(docdir), "DOCDIR_PATH", folder=True)
    return None
