"""The CPU this process may use: its affinity and its cgroup's quota, not the host's cores.

A crawl worker in a container or a cgroup of a quarter core sees every core of the host in
``os.cpu_count()``; extraction processes sized from that compete for the quarter core and
slow each other down. The quota is cgroup v2's ``cpu.max`` (``"max 100000"`` or
``"25000 100000"``: quota and period in microseconds) of the process's cgroup and of every
cgroup above it (the smallest holds), else cgroup v1's ``cpu.cfs_quota_us`` /
``cpu.cfs_period_us``. Scrapy-free.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

#: Where cgroups are mounted, and where a process reads its own (one line per hierarchy).
CGROUP_ROOT = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")


def usable_cpus(root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> float:
    """CPUs this process may use: the cores it may run on, less when a cgroup's quota is
    smaller (a fraction for a quota under one core)."""
    cores = float(_affinity())
    quota = cgroup_quota(root, self_cgroup)
    return cores if quota is None else min(cores, quota)


def usable_cores(root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> int:
    """Whole cores this process may keep busy: :func:`usable_cpus` rounded down, at least 1
    (a quota of 1.5 cores gives one extraction process, leaving room to the crawl itself)."""
    return max(1, math.floor(usable_cpus(root, self_cgroup) + 1e-9))


def _affinity() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def cgroup_quota(root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP) -> float | None:
    """The CPU quota (in cores) of this process's cgroup, None when it has none or none can
    be read."""
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        return None
    v2 = [line.split(":", 2)[2] for line in lines if line.startswith("0::")]
    if v2:
        quota = _v2_quota(root, v2[0])
        if quota is not None:
            return quota
    v1 = [line.split(":", 2)[2] for line in lines if _controllers(line) & {"cpu"}]
    return _v1_quota(root, v1[0]) if v1 else None


def _controllers(line: str) -> set[str]:
    parts = line.split(":", 2)
    return set(parts[1].split(",")) if len(parts) == 3 else set()


def _v2_quota(root: Path, path: str) -> float | None:
    """The smallest ``cpu.max`` from the process's cgroup up to the root."""
    found: list[float] = []
    here = root / path.strip("/")
    while True:
        quota = _read_cpu_max(here / "cpu.max")
        if quota is not None:
            found.append(quota)
        if here == root or root not in here.parents:
            break
        here = here.parent
    return min(found) if found else None


def _read_cpu_max(file: Path) -> float | None:
    try:
        fields = file.read_text().split()
    except OSError:
        return None
    if len(fields) != 2 or fields[0] == "max":
        return None
    return _ratio(fields[0], fields[1])


def _v1_quota(root: Path, path: str) -> float | None:
    for mount in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        base = root / mount / path.strip("/")
        try:
            quota = (base / "cpu.cfs_quota_us").read_text().strip()
            period = (base / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            continue
        return _ratio(quota, period)
    return None


def _ratio(quota: str, period: str) -> float | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None
