"""How long does the HTML crawl report of a 2,000-page, 50-site crawl take to render, and how
much does it weigh (the issue's bar: under 2 s and under 2 MB)?

The report is :mod:`benchmarks.report_fixture`'s (made by the report's own code). Each round
runs ``maintext report fixture.json -o report.html`` in a fresh process, as a user (or the
end of a crawl) pays for it: Python's start, matplotlib's import, eight plots. Tables only
(matplotlib blocked, as without the ``report`` extra) runs interleaved with it, so the ratio
says what the plots cost on this machine now.

    python -m benchmarks.report_render [--rounds 5] [--sites 50 --pages 2000]

Prints, per variant, the median wall and CPU seconds of a render and the page's size.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report_fixture import fixture_report

VARIANTS = {
    "with plots": "",
    "tables only": "import sys; sys.modules['matplotlib'] = None; ",
}


def _render(source: Path, out: Path, prefix: str) -> tuple[float, float]:
    """Wall and CPU seconds of one ``maintext report`` in a fresh process."""
    code = (
        f"{prefix}from scrapy_maintext.cli import main; "
        f"raise SystemExit(main(['report', {str(source)!r}, '-o', {str(out)!r}]))"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sites", type=int, default=50)
    parser.add_argument("--pages", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="report-render-") as work:
        source = Path(work) / "fixture.json"
        source.write_text(json.dumps(fixture_report(args.sites, args.pages)), "utf-8")
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
        sizes: dict[str, int] = {}
        for round_ in range(args.rounds):
            order = list(VARIANTS) if round_ % 2 == 0 else list(reversed(VARIANTS))
            for name in order:
                out = Path(work) / f"{name.replace(' ', '-')}.html"
                times[name].append(_render(source, out, VARIANTS[name]))
                sizes[name] = out.stat().st_size
    print(f"{args.pages} pages on {args.sites} sites, {args.rounds} rounds (fresh process each)")
    walls = {}
    for name, runs in times.items():
        walls[name] = statistics.median(wall for wall, _ in runs)
        cpu = statistics.median(cpu for _, cpu in runs)
        print(
            f"  {name:12} render {walls[name]:.2f} s wall, {cpu:.2f} s CPU (median); "
            f"page {sizes[name] / 1e6:.2f} MB"
        )
    ratio = walls["with plots"] / walls["tables only"]
    print(f"  plots cost x{ratio:.1f} the tables-only render")


if __name__ == "__main__":
    main()
