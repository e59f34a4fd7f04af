"""Whether a path can be written, said in one line that names it (Scrapy-free)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def path_problem(path: Path, what: str, folder: bool = False) -> str | None:
    """Why ``path`` (a file, or a ``folder``) cannot be written, in one line; None if it can."""
    if path.exists() or path.is_symlink():
        if folder != path.is_dir() and not (not folder and _is_device(path)):
            return f"{what} {path} is {'not a folder' if folder else 'a folder'}"
        if not os.access(path, os.W_OK | (os.X_OK if folder else 0)):
            return f"{what} {path} is not writable"
        return None
    problem = creation_problem(path)
    return f"{what} {path} cannot be created: {problem}" if problem else None


def _is_device(path: Path) -> bool:
    """A character device (``/dev/stdout``, ``/dev/null``): written like a file."""
    try:
        return stat.S_ISCHR(path.stat().st_mode)
    except OSError:
        return False


def creation_problem(path: Path) -> str | None:
    """Why ``path`` cannot be created (the nearest folder that exists above it is not a
    folder, or not writable: what is missing below it would be created), or None."""
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is not a folder"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{parent} is not writable"
    return None
