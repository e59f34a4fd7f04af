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
        [--nofile 1024] [--set CONCURRENT_REQUESTS=64] [--crawl-only]

``--nofile`` runs the crawl under that soft limit of open files (``ulimit -n``); ``--set``
passes a setting to the crawl; ``--crawl-only`` leaves the extraction limit out.
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
class Peak:
    pss: float = 0.0
    rss: float = 0.0
    processes: int = 0
    open_files: int = 0


def watch(pid: int, peak: Peak, done: threading.Event) -> None:
    """Sample the tree's PSS and RSS sums (MiB) until ``done``; keep the peaks."""
    while not done.is_set():
        pss = rss = 0.0
        files = 0
        tree = descendants(pid)
        for member in tree:
            try:
                memory = memory_mib(member)
                if member == pid:
                    files = len(os.listdir(f"/proc/{member}/fd"))
            except OSError:
                continue
            pss += memory["pss"]
            rss += memory["rss"]
        if pss > peak.pss:
            peak.pss, peak.rss, peak.processes = pss, rss, len(tree)
        peak.open_files = max(peak.open_files, files)
        done.wait(SAMPLE_SECONDS)


def _limit_files(nofile: int | None) -> None:
    if nofile:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))


def crawl(
    urls: list[str], work: Path, workers: int, nofile: int | None, extra: list[str]
) -> tuple[float, float, Peak, str]:
    """Wall and CPU seconds (the whole tree), peak memory and the console of one crawl."""
    sites = work / "sites.txt"
    sites.write_text("\n".join(urls) + "\n")
    command = [
        *(sys.executable, "-m", "scrapy_maintext", "crawl", "sitemap"),
        *("-a", f"domains_file={sites}", "-O", str(work / "items.jsonl")),
        *("-s", f"EXTRACT_WORKERS={workers}", "-s", f"CRAWL_REPORT={work / 'report.json'}"),
        *(arg for setting in extra for arg in ("-s", setting)),
    ]
    peak, done = Peak(), threading.Event()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: _limit_files(nofile),
    )
    watcher = threading.Thread(target=watch, args=(proc.pid, peak, done), daemon=True)
    watcher.start()
    output, _ = proc.communicate()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    done.set()
    watcher.join()
    if proc.returncode != 0:
        print(output[-3000:], file=sys.stderr)
        raise SystemExit(f"the crawl failed (exit {proc.returncode})")
    return wall, cpu, peak, output


def extract(sites: int, pages: int, work: Path, workers: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``maintext extract`` over the same pages, as files."""
    folder = work / "pages"
    for site in range(sites):
        for page in range(pages):
            (folder / f"{site:05d}").mkdir(parents=True, exist_ok=True)
            (folder / f"{site:05d}" / f"story-{page}.html").write_bytes(article(site, page))
    command = [
        *(sys.executable, "-m", "scrapy_maintext", "extract", str(folder)),
        *("-o", str(work / "extracted.jsonl"), "--workers", str(workers), "--no-progress"),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="broad-crawl-") as tmp:
        work = Path(tmp)
        with broad_sites(args.sites, args.pages, crawl_delay=args.crawl_delay) as urls:
            wall, cpu, peak, output = crawl(urls, work, args.workers, args.nofile, args.set)
        exported = len((work / "items.jsonl").read_text().splitlines())
        extraction, extraction_cpu = (
            (0.0, 0.0) if args.crawl_only else extract(args.sites, args.pages, work, args.workers)
        )
    requests = DISCOVERY_REQUESTS + args.pages
    politeness = (requests - 1) * args.crawl_delay
    bound = max(politeness, extraction)
    budget = 500 + 0.1 * args.sites
    print(
        f"{args.sites} sites x {args.pages} pages, Crawl-delay {args.crawl_delay:g} s, "
        f"{args.workers} workers, open files limit {args.nofile or 'default'}, "
        f"{os.cpu_count()} cores, settings {' '.join(args.set) or 'default'}"
    )
    print(f"  crawl wall           {wall:8.1f} s ({exported} documents exported)")
    print(f"  crawl CPU            {cpu:8.1f} s (crawler, fork server and workers)")
    print(f"  politeness limit     {politeness:8.1f} s ({requests} requests a site)")
    print(
        f"  extraction limit     {extraction:8.1f} s (maintext extract, same pages; "
        f"{extraction_cpu:.1f} s CPU)"
    )
    print(f"  wall / larger limit  {wall / bound:8.2f} (target 1.2)")
    print(
        f"  peak memory (PSS)    {peak.pss:8.0f} MiB over {peak.processes} processes "
        f"(RSS sum {peak.rss:.0f} MiB; target {budget:.0f} MB)"
    )
    print(f"  crawl's open files   {peak.open_files:8d} at most")
    print("  console's last lines:")
    for line in output.strip().splitlines()[-6:]:
        print(f"    {line[:160]}")


if __name__ == "__main__":
    main()
