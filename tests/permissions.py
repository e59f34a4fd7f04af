"""Commands run bound by file permissions: the tests run as root here, and root passes any
folder's or file's mode; without the capabilities that let it (``setpriv``), a mode of 000
or 555 denies it as it denies a user. Not root: the command as it is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

_CAPS = "-dac_override,-dac_read_search"


def bound_by_permissions(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root without setpriv: a permission is not denied to root")
    return [setpriv, f"--inh-caps={_CAPS}", f"--bounding-set={_CAPS}", *command]


def maintext_bound(*args: str) -> subprocess.CompletedProcess[str]:
    """``maintext ARGS`` in a process that file permissions bind."""
    command = bound_by_permissions([sys.executable, "-m", "scrapy_maintext", *args])
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
