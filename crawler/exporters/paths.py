"""Output paths checked before a crawl starts: one line that names the path, not a failure
at the first document (issue 29).

A local feed (``-O``/``-o`` paths and ``file://`` URIs) and ``DOCDIR_PATH`` must be
writable where they are: a feed is not a folder, and the nearest folder that exists above
it is a writable folder (what is missing below it is created). Feeds with URI parameters
(``%(time)s``) are checked up to the first parameter.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from scrapy.settings import BaseSettings
from scrapy_maintext.vocabulary.settings import setting

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


def path_problem(path: Path, what: str, folder: bool = False) -> str | None:
    """Why ``path`` (a file, or a ``folder``) cannot be written, in one line; None if it can."""
    if path.exists() or path.is_symlink():
        if folder != path.is_dir() and not (not folder and _is_device(path)):
            return f"{what} {path} is {'not a folder' if folder else 'a folder'}"
        if not os.access(path, os.W_OK | (os.X_OK if folder else 0)):
            return f"{what} {path} is not writable"
        return None
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{what} {path} cannot be created: {parent} is not a folder"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{what} {path} cannot be created: {parent} is not writable"
    return None


def _is_device(path: Path) -> bool:
    """A character device (``/dev/stdout``, ``/dev/null``): written like a file."""
    try:
        return stat.S_ISCHR(path.stat().st_mode)
    except OSError:
        return False


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
