"""The browser's memory as the system counts it: the proportional set size (PSS) of every
process under Playwright's driver (the browser, its renderers, GPU and utility processes), so
that memory shared between them counts once. Scrapy-free; Linux's ``/proc`` only (elsewhere
nothing is measured and the browser cap is off).

A page's own heap is capped inside the browser (``RENDER_MEMORY_MB``); this is the whole
browser's, which grows with caches and pages that leak, checked between renders
(``RENDER_BROWSER_MEMORY_MB``).
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

PROC = Path("/proc")
#: How Playwright's driver names itself on its command line.
DRIVER_MARK = b"run-driver"


def browser_memory_mb(root: int | None = None) -> float | None:
    """MB of every process under the Playwright drivers that ``root`` (this process by
    default) started; None where ``/proc`` cannot tell."""
    if not (PROC / "self" / "stat").exists():
        return None
    children = _children(PROC)
    drivers = [pid for pid in _descendants(children, root or os.getpid()) if _is_driver(pid)]
    kib = 0
    for driver in drivers:
        for pid in _descendants(children, driver):
            kib += _pss_kib(pid)
    return kib / 1024


def _children(proc: Path) -> dict[int, list[int]]:
    """Every process's children, from each ``/proc/PID/stat`` (one read per process)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue  # gone meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[1].isdigit():
            children[int(fields[1])].append(int(entry.name))
    return children


def _descendants(children: dict[int, list[int]], root: int) -> list[int]:
    """``root``'s descendants, not ``root`` itself (each once: a pid has one parent)."""
    found: list[int] = []
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _is_driver(pid: int) -> bool:
    try:
        return DRIVER_MARK in (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return False


def _pss_kib(pid: int) -> int:
    """The process's PSS in KiB (its RSS where the kernel gives no rollup); 0 once gone."""
    base = PROC / str(pid)
    for name, key in (("smaps_rollup", b"Pss:"), ("status", b"VmRSS:")):
        try:
            for line in (base / name).read_bytes().splitlines():
                if line.startswith(key):
                    return int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return 0
