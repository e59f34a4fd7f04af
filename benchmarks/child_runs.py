"""Benchmarks that measure each variant in a fresh process of their own module."""

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
