"""A small tmpfs mounted for a test: a disk that fills (skipped where none can be mounted)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Tmpfs:
    path: Path

    @classmethod
    @contextlib.contextmanager
    def mounted(cls, path: Path, size: str) -> Iterator[Tmpfs]:
        path.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
        try:
            yield cls(path)
        finally:
            subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)

    def free(self) -> int:
        stats = os.statvfs(self.path)
        return stats.f_bavail * stats.f_frsize

    def fill(self, leave: int) -> None:
        """Take all but about ``leave`` bytes of the disk with a file of its own."""
        size = max(self.free() - leave, 0)
        with (self.path / ".filler").open("wb") as filler:
            filler.write(b"\0" * size)

    def remount_read_only(self) -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(self.path)], check=True)
