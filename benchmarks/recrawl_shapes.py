"""Does a first run's cost per page depend on how its URLs are spread over sites? First runs of
several shapes (sites x pages) crawled alternately in one run, so that the machine's load
falls on each shape alike:

    python -m benchmarks.recrawl_shapes [--shapes 1000x20,200x100] [--rounds 2] [--calls]
        [--mappings] [--perf] [--set KEY=VALUE] [--baseline DIR]

Each crawl is :func:`benchmarks.recrawl_scale.crawl` (a ``maintext crawl sitemap`` over a
fresh :class:`~benchmarks.scale_universe.Universe` of that shape, a fresh SQLite state, no
waits, extraction off), checked to export every page once. Round after round, the shapes go
in turn (the order reversed every other round), and with ``--baseline DIR`` (another version's
package, as in ``recrawl_scale``) each shape's crawl of both versions one after the other.
Prints per crawl the crawl process's CPU per page fetched (its own threads, ``spider_opened``
to ``spider_closed``) and its parts (the kernel's, the reactor thread's, the garbage
collector's wall time and number of full collections, the collector's CPU time, all passes
and the full ones), its CPU per request (every request the
server answered: pages, robots.txt, sitemaps), its whole process CPU, its wall time, and its
growth from ``spider_opened`` to its peak (``VmHWM``) per planned URL; ``--mappings`` also
what each kind of mapping (``[heap]``, ``[anon]``, each shared library) gained from
``spider_opened`` to ``spider_closed`` (``/proc/self/smaps``); ``--perf`` runs each crawl
under ``perf record`` and counts its CPU samples (its whole life) by where they fell (the
garbage collector, the rest of the interpreter, the kernel, SQLite, libc, other libraries:
:func:`perf_samples`); ``--calls`` also runs each
crawl under cProfile once a round and prints its function calls per page (its whole
process: start, crawl and end). At the end, per version, each shape's medians (per page and
per request) and their ratios to the last shape's, and the load average. The server is in
this process, the crawl in another: no figure counts the server's work.
"""

from __future__ import annotations

import argparse
import os
import pstats
import statistics
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import (
    CRAWL_CPU_STAT,
    CRAWL_SYSTEM_STAT,
    GC_CPU_STAT,
    GC_FULL_CPU_STAT,
    GC_PASSES_STAT,
    GC_STAT,
    MAPPING_GROWTH_STAT,
    REACTOR_CPU_STAT,
    RSS_OPENED_STAT,
    RSS_PEAK_STAT,
)
from benchmarks.recrawl_scale import T0, crawl
from benchmarks.scale_universe import Universe


@dataclass
class Figures:
    """One version's crawls of one shape."""

    cpu_per_page: list[float] = field(default_factory=list)
    #: CPU per request the crawl made (pages, robots.txt, sitemaps).
    cpu_per_request: list[float] = field(default_factory=list)
    growth_per_url: list[float] = field(default_factory=list)
    calls_per_page: list[float] = field(default_factory=list)


def shape_of(text: str) -> tuple[int, int]:
    sites, pages = text.lower().split("x")
    return int(sites), int(pages)


@dataclass
class Crawl:
    """One crawl's figures; seconds per page fetched unless said."""

    cpu: float
    process_cpu: float
    growth: float
    calls: float | None
    cpu_per_request: float
    requests: int
    system: float
    reactor: float
    gc: float
    full_gc_passes: int
    #: The collector's CPU per page, all passes and the full ones.
    gc_cpu: float
    gc_full_cpu: float
    wall: float
    #: KiB of resident memory gained from spider_opened to spider_closed, by kind of mapping.
    mappings: dict[str, int]
    #: ``--perf``: the crawl process's CPU samples (its whole life) by where they fell.
    samples: Counter[str] = field(default_factory=Counter)


#: The garbage collector's own functions in libpython (``perf``'s symbols).
GC_SYMBOLS = frozenset(
    {
        "gc_collect_main",
        "visit_decref",
        "visit_reachable",
        "move_unreachable",
        "update_refs",
        "subtract_refs",
        "move_legacy_finalizers",
        "gc_collect_with_callback",
    }
)


def perf_samples(data: Path) -> Counter[str]:
    """``perf record``'s samples of ``data`` by where they fell: the garbage collector, the
    rest of the interpreter (libpython: Python code running), the kernel (system calls,
    sockets), SQLite, libc (malloc, memcpy), other libraries (lxml, json, hashes)."""
    lines = subprocess.run(
        ["perf", "script", "-i", str(data), "-F", "ip,sym,dso"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    found: Counter[str] = Counter()
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        symbol, dso = parts[1], parts[-1]
        if symbol in GC_SYMBOLS:
            found["gc"] += 1
        elif "libpython" in dso:
            found["interpreter"] += 1
        elif "kernel" in dso:
            found["kernel"] += 1
        elif "sqlite" in dso:
            found["sqlite"] += 1
        elif "libc.so" in dso:
            found["libc"] += 1
        else:
            found["other"] += 1
    return found


def one_crawl(
    shape: tuple[int, int],
    settings: dict[str, str],
    baseline: Path | None,
    profile: bool,
    perf: bool = False,
) -> Crawl:
    """One first run of ``shape``, checked to export every page once; with ``perf``, under
    ``perf record`` (297 samples a second of CPU)."""
    universe = Universe(*shape)
    with universe, tempfile.TemporaryDirectory(prefix="shapes-") as tmp:
        work = Path(tmp)
        prof = work / "crawl.prof" if profile else None
        data = work / "perf.data"
        wrapper = ("perf", "record", "-q", "-F", "297", "-o", str(data), "--") if perf else ()
        merged = {
            **settings,
            "CRAWL_STATE": str(work / "state.sqlite"),
            "RECRAWL_NOW": str(T0),
        }
        wall, process_cpu, stats, exported = crawl(
            universe, work, merged, prof, None, baseline, wrapper
        )
        if exported != universe.urls:
            raise SystemExit(f"{shape}: {exported} exported, {universe.urls} expected")
        fetched = sum(v for k, v in universe.hits.items() if k.startswith("page "))
        growth = (stats[RSS_PEAK_STAT] - stats[RSS_OPENED_STAT]) * 1024 / universe.urls
        calls = None
        if prof is not None:
            calls = pstats.Stats(str(prof)).total_calls / fetched  # type: ignore[attr-defined]
        requests = sum(universe.hits.values())
        cpu = float(stats.get(CRAWL_CPU_STAT, 0.0))
        return Crawl(
            cpu / fetched,
            process_cpu,
            growth,
            calls,
            cpu / requests,
            requests,
            float(stats.get(CRAWL_SYSTEM_STAT, 0.0)) / fetched,
            float(stats.get(REACTOR_CPU_STAT, 0.0)) / fetched,
            float(stats.get(GC_STAT, 0.0)) / fetched,
            int(stats.get(GC_PASSES_STAT.format(2), 0)),
            float(stats.get(GC_CPU_STAT, 0.0)) / fetched,
            float(stats.get(GC_FULL_CPU_STAT, 0.0)) / fetched,
            wall,
            {
                k.removeprefix(MAPPING_GROWTH_STAT): int(v)
                for k, v in stats.items()
                if k.startswith(MAPPING_GROWTH_STAT)
            },
            perf_samples(data) if perf else Counter(),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="1000x20,200x100", help="SITESxPAGES, comma-separated")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", action="store_true", help="also a cProfile run a round")
    parser.add_argument(
        "--mappings", action="store_true", help="the memory gained by kind of mapping"
    )
    parser.add_argument(
        "--perf", action="store_true", help="each crawl under perf record: where its CPU fell"
    )
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    shapes = [shape_of(s) for s in args.shapes.split(",") if s.strip()]
    settings = {"DOWNLOAD_DELAY": "0", "AUTOTHROTTLE_ENABLED": "False"}
    settings["EXTRACT_ENABLED"] = "False"
    settings.update(dict(item.split("=", 1) for item in args.set))
    versions: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.baseline:
        versions.append(("baseline", args.baseline))
    figures = {(v, s): Figures() for v, _ in versions for s in shapes}
    print(f"shapes {args.shapes}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for number in range(args.rounds):
        order = shapes if number % 2 == 0 else shapes[::-1]
        for shape in order:
            runs = versions if number % 2 == 0 else versions[::-1]
            for label, path in runs:
                for profile in (False, True) if args.calls else (False,):
                    run = one_crawl(shape, settings, path, profile, args.perf and not profile)
                    entry = figures[(label, shape)]
                    name = f"{shape[0]}x{shape[1]}"
                    if run.calls is not None:
                        entry.calls_per_page.append(run.calls)
                        print(f"  round {number + 1}, {name}, {label}: {run.calls:,.0f} calls/page")
                        continue
                    entry.cpu_per_page.append(run.cpu)
                    entry.cpu_per_request.append(run.cpu_per_request)
                    entry.growth_per_url.append(run.growth)
                    print(f"  round {number + 1}, {name}, {label}: {_crawl_line(run)}", flush=True)
                    if args.mappings:
                        top = sorted(run.mappings.items(), key=lambda kv: -abs(kv[1]))[:6]
                        each = ", ".join(f"{kind} {kib:+d}" for kind, kib in top)
                        print(f"    resident KiB gained by mapping, opened to closed: {each}")
                    if run.samples:
                        total = sum(run.samples.values())
                        each = ", ".join(f"{k} {n}" for k, n in run.samples.most_common())
                        print(f"    perf samples {total}: {each}")
    _summary(figures, versions, shapes)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


def _crawl_line(run: Crawl) -> str:
    return (
        f"{run.cpu * 1e3:.2f} ms CPU/page ({run.system * 1e3:.2f} system, "
        f"{run.reactor * 1e3:.2f} reactor thread, {run.gc * 1e3:.2f} GC, "
        f"{run.full_gc_passes} full GC passes; GC CPU {run.gc_cpu * 1e3:.3f}, full "
        f"{run.gc_full_cpu * 1e3:.3f}), {run.cpu_per_request * 1e3:.2f} ms/request "
        f"({run.requests} requests), process CPU {run.process_cpu:.1f} s, wall {run.wall:.1f} s, "
        f"+{run.growth:.0f} B/planned URL, load {os.getloadavg()[0]:.1f}"
    )


def _summary(
    figures: dict[tuple[str, tuple[int, int]], Figures],
    versions: list[tuple[str, Path | None]],
    shapes: list[tuple[int, int]],
) -> None:
    last = shapes[-1]
    for label, _ in versions:
        ref = figures[(label, last)]
        for shape in shapes:
            entry = figures[(label, shape)]
            cpu = statistics.median(entry.cpu_per_page)
            request = statistics.median(entry.cpu_per_request)
            line = (
                f"{label}, {shape[0]}x{shape[1]}: median {cpu * 1e3:.2f} ms CPU/page "
                f"(x{cpu / statistics.median(ref.cpu_per_page):.2f}), "
                f"{request * 1e3:.2f} ms/request "
                f"(x{request / statistics.median(ref.cpu_per_request):.2f}), "
                f"+{statistics.median(entry.growth_per_url):.0f} B/planned URL"
            )
            if entry.calls_per_page:
                calls = statistics.median(entry.calls_per_page)
                ratio = calls / statistics.median(ref.calls_per_page)
                line += f", {calls:,.0f} calls/page (x{ratio:.2f})"
            print(line)


if __name__ == "__main__":
    main()
