"""How close does a broad crawl come to its limits, and how much memory does it take?

1,000 sites on loopback addresses (127.0.x.y, one small server thread per address,
:mod:`tests.broad_sites`), each with robots.txt (``Crawl-delay: 1``), a sitemap and 5 pages of
their own text: a ``maintext crawl sitemap`` over all of them in a fresh process, as a user
runs it. Its wall time is set against two limits:

- politeness: 7 requests a site (robots.txt, the sitemap, 5 pages), one Crawl-delay apart, so
  6 delays per site when every site runs in parallel;
- extraction: the same pages, as files, through ``maintext extract`` with the same number of
  workers (a fresh process too).

While the crawl runs, the PSS of its whole process tree (crawler, fork server, workers;
``/proc/PID/smaps_rollup``, PSS so that pages shared after fork count once) is summed every
0.2 s; the peak is reported, with the RSS sum for comparison and the crawl's open files.

    python -m benchmarks.broad_crawl [--sites 1000] [--pages 5] [--crawl-delay 1] [--workers 2]
        [--nofile 1024] [--set CONCURRENT_REQUESTS=64] [--crawl-only] [--rerun]

``--nofile`` runs the crawl under that soft limit of open files (``ulimit -n``); ``--set``
passes a setting to the crawl; ``--crawl-only`` leaves the extraction limit out; ``--rerun``
measures instead an unchanged rerun with ``CRAWL_STATE``: the requests each site gets.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import memory_mib
from tests.broad_sites import article, broad_sites

#: Requests a site costs: robots.txt, the sitemap, its pages.
DISCOVERY_REQUESTS = 2
#: Seconds between two samples of the process tree's memory.
SAMPLE_SECONDS = 0.2


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(parents.get(current, []))
    return found


@dataclass
class Watched:
    """What one command's process tree took: wall, CPU, peak memory, its output."""

    wall: float = 0.0
    #: CPU seconds of every process of the tree, as last sampled (the last 0.2 s of each
    #: process is missed; RUSAGE_CHILDREN misses the workers, whom the command does not wait
    #: for itself).
    cpu: float = 0.0
    pss: float = 0.0
    rss: float = 0.0
    processes: int = 0
    open_files: int = 0
    output: str = ""


_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


def watch(pid: int, seen: Watched, done: threading.Event) -> None:
    """Sample the tree's PSS and RSS sums (MiB) and CPU until ``done``; keep the peaks."""
    cpu: dict[int, float] = {}
    while not done.is_set():
        pss = rss = 0.0
        files = 0
        tree = descendants(pid)
        for member in tree:
            try:
                memory = memory_mib(member)
                cpu[member] = _cpu_seconds(member)
                if member == pid:
                    files = len(os.listdir(f"/proc/{member}/fd"))
            except OSError:
                continue
            pss += memory["pss"]
            rss += memory["rss"]
        if pss > seen.pss:
            seen.pss, seen.rss, seen.processes = pss, rss, len(tree)
        seen.open_files = max(seen.open_files, files)
        seen.cpu = sum(cpu.values())
        done.wait(SAMPLE_SECONDS)


def _limit_files(nofile: int | None) -> None:
    if nofile:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))


def run_watched(command: list[str], cwd: Path, nofile: int | None = None) -> Watched:
    """Run ``command``, its process tree sampled; exit on failure."""
    seen, done = Watched(), threading.Event()
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: _limit_files(nofile),
    )
    watcher = threading.Thread(target=watch, args=(proc.pid, seen, done), daemon=True)
    watcher.start()
    seen.output, _ = proc.communicate()
    seen.wall = time.perf_counter() - started
    done.set()
    watcher.join()
    if proc.returncode != 0:
        print(seen.output[-3000:], file=sys.stderr)
        raise SystemExit(f"{' '.join(command[:5])} failed (exit {proc.returncode})")
    return seen


def crawl(
    urls: list[str], work: Path, workers: int, nofile: int | None, extra: list[str]
) -> Watched:
    """One ``maintext crawl sitemap`` over every site, in a fresh process."""
    sites = work / "sites.txt"
    sites.write_text("\n".join(urls) + "\n")
    command = [
        *(sys.executable, "-m", "scrapy_maintext", "crawl", "sitemap"),
        *("-a", f"domains_file={sites}", "-O", str(work / "items.jsonl")),
        *("-s", f"EXTRACT_WORKERS={workers}", "-s", f"CRAWL_REPORT={work / 'report.json'}"),
        *(arg for setting in extra for arg in ("-s", setting)),
    ]
    return run_watched(command, work, nofile)


def extract(sites: int, pages: int, work: Path, workers: int) -> Watched:
    """``maintext extract`` over the same pages, as files."""
    folder = work / "pages"
    for site in range(sites):
        for page in range(pages):
            (folder / f"{site:05d}").mkdir(parents=True, exist_ok=True)
            (folder / f"{site:05d}" / f"story-{page}.html").write_bytes(article(site, page))
    command = [
        *(sys.executable, "-m", "scrapy_maintext", "extract", str(folder)),
        *("-o", str(work / "extracted.jsonl"), "--workers", str(workers), "--no-progress"),
    ]
    return run_watched(command, work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--crawl-delay", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=2, help="extraction processes")
    parser.add_argument("--nofile", type=int, default=None, help="soft limit of open files")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a crawl setting"
    )
    parser.add_argument(
        "--crawl-only", action="store_true", help="no maintext extract (no extraction limit)"
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="instead: a crawl with CRAWL_STATE, then an unchanged rerun; requests per site",
    )
    args = parser.parse_args()
    if args.rerun:
        rerun(args)
        return
    with tempfile.TemporaryDirectory(prefix="broad-crawl-") as tmp:
        work = Path(tmp)
        with broad_sites(args.sites, args.pages, crawl_delay=args.crawl_delay) as urls:
            crawled = crawl(urls, work, args.workers, args.nofile, args.set)
        exported = len((work / "items.jsonl").read_text().splitlines())
        extracted = (
            Watched() if args.crawl_only else extract(args.sites, args.pages, work, args.workers)
        )
    requests = DISCOVERY_REQUESTS + args.pages
    politeness = (requests - 1) * args.crawl_delay
    bound = max(politeness, extracted.wall)
    budget = 500 + 0.1 * args.sites
    print(
        f"{args.sites} sites x {args.pages} pages, Crawl-delay {args.crawl_delay:g} s, "
        f"{args.workers} workers, open files limit {args.nofile or 'default'}, "
        f"{os.cpu_count()} cores, settings {' '.join(args.set) or 'default'}"
    )
    print(f"  crawl wall           {crawled.wall:8.1f} s ({exported} documents exported)")
    print(f"  crawl CPU            {crawled.cpu:8.1f} s (crawler, fork server and workers)")
    print(f"  politeness limit     {politeness:8.1f} s ({requests} requests a site)")
    print(
        f"  extraction limit     {extracted.wall:8.1f} s (maintext extract, same pages; "
        f"{extracted.cpu:.1f} s CPU)"
    )
    print(f"  wall / larger limit  {crawled.wall / bound:8.2f} (target 1.2)")
    print(
        f"  peak memory (PSS)    {crawled.pss:8.0f} MiB over {crawled.processes} processes "
        f"(RSS sum {crawled.rss:.0f} MiB; target {budget:.0f} MB)"
    )
    print(f"  crawl's open files   {crawled.open_files:8d} at most")
    print(f"  console              {len(crawled.output.splitlines()):8d} lines")
    print("  console's last lines:")
    for line in crawled.output.strip().splitlines()[-6:]:
        print(f"    {line[:160]}")


def rerun(args: argparse.Namespace) -> None:
    """A first crawl with ``CRAWL_STATE``, then the same crawl of the unchanged sites: the
    requests each site gets in the rerun."""
    hits: list[tuple[int, str]] = []
    with tempfile.TemporaryDirectory(prefix="broad-rerun-") as tmp:
        work = Path(tmp)
        state = [f"CRAWL_STATE={work / 'state.sqlite'}", *args.set]
        with broad_sites(args.sites, args.pages, crawl_delay=args.crawl_delay, hits=hits) as urls:
            first = crawl(urls, work, args.workers, args.nofile, state)
            hits.clear()
            (work / "items.jsonl").unlink()  # an export of nothing leaves no file
            second = crawl(urls, work, args.workers, args.nofile, state)
        items = work / "items.jsonl"
        exported = len(items.read_text().splitlines()) if items.exists() else 0
    per_site = Counter(site for site, _ in hits)
    kinds = Counter(_kind(path) for _, path in hits)
    print(
        f"{args.sites} sites x {args.pages} pages, Crawl-delay {args.crawl_delay:g} s, "
        f"CRAWL_STATE, {args.workers} workers"
    )
    print(f"  first crawl          {first.wall:8.1f} s, peak PSS {first.pss:.0f} MiB")
    print(f"  unchanged rerun      {second.wall:8.1f} s, peak PSS {second.pss:.0f} MiB")
    print(f"  rerun's exports      {exported:8d}")
    print(
        f"  rerun's requests     {len(hits):8d}: {max(per_site.values(), default=0)} a site at "
        f"most, {min(per_site.values(), default=0)} at least "
        f"({', '.join(f'{k} {v}' for k, v in kinds.most_common())})"
    )


def _kind(path: str) -> str:
    if path == "/robots.txt":
        return "robots.txt"
    return "sitemap" if path.endswith(".xml") else "page"


if __name__ == "__main__":
    main()
