"""Benchmark-only: run a module under cProfile timed by the process's CPU clock, not the
wall clock (a crawl waiting on Redis or on a loaded machine is not charged for the wait).

    python -m benchmarks.cpu_profile OUT.prof MODULE [ARG...]
"""

from __future__ import annotations

import cProfile
import runpy
import sys
import time


def main() -> None:
    out, module, *args = sys.argv[1:]
    sys.argv = [module, *args]
    profile = cProfile.Profile(time.process_time)
    try:
        profile.runcall(runpy.run_module, module, run_name="__main__", alter_sys=True)
    finally:
        profile.dump_stats(out)


if __name__ == "__main__":
    main()
