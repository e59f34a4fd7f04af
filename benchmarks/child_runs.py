"""Benchmarks that measure each variant in a fresh process of their own module: the
process's arguments, its run, and its memory as Linux reports it."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def variant_parser(pages: int, variants: tuple[str, ...]) -> argparse.ArgumentParser:
    """``--data``, ``--pages`` and the hidden ``--child VARIANT`` of a fresh process."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True, help="developer data folder")
    parser.add_argument("--pages", type=int, default=pages)
    parser.add_argument("--child", choices=variants, help=argparse.SUPPRESS)
    return parser


def run_child(module: str, argv: list[str], variant: str) -> dict[str, Any]:
    """Run ``python -m module *argv --child variant``; the JSON of its last output line."""
    cmd = [sys.executable, "-m", module, *argv, "--child", variant]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


_MEMORY_FIELDS = {"Rss": "rss", "Pss": "pss", "Private_Clean": "uss", "Private_Dirty": "uss"}


def memory_mib(pid: int) -> dict[str, float]:
    """RSS, PSS and USS of ``pid`` in MiB."""
    out = {"rss": 0.0, "pss": 0.0, "uss": 0.0}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in _MEMORY_FIELDS:
            out[_MEMORY_FIELDS[name]] += int(rest.split()[0]) / 1024
    return out
