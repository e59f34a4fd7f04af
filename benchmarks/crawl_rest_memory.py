"""Where does a one-site crawl's memory go: each process of its tree at rest, and what each
import or warm-up costs?

    python -m benchmarks.crawl_rest_memory [--part tree|imports|both] [--workers 2]
        [--pages 5] [--crawl-delay 2] [--python PATH] [--cwd DIR] [--top 6] [--json FILE]

``tree``: one small site on a loopback address (:mod:`tests.broad_sites`, robots.txt with
``Crawl-delay``, a sitemap, ``--pages`` articles) crawled by ``maintext crawl sitemap`` in a
fresh process with ``EXTRACT_WORKERS=--workers``. The tree (crawler, the extraction fork
server, its workers, anything else below the crawler) is sampled every 0.25 s; the crawl is
*at rest* in a sample where the whole tree used under 5 % of one core since the previous one
while the fork server and every worker are up (the crawl waiting out its Crawl-delay). The
last such sample is printed: per process RSS, PSS (``/proc/PID/smaps_rollup``: a page shared
by n processes counts 1/n in each, so pages shared after fork count once in the sum), USS
(private) and the private pages that were written (``Private_Dirty``); then, inside each
process, its PSS by mapping (``/proc/PID/smaps``: anonymous memory, the heap, and each
package's shared libraries), and which big extension modules it has mapped (onnxruntime,
matplotlib, numpy, ...). ``--python`` and ``--cwd`` run the crawl with another interpreter
from another checkout (an older commit in its own virtual environment), the site and the
sampler staying these.

``imports``: one fresh process per line of the table, each doing the steps up to its own, in
the order the extraction's fork server does them (``extraction.preload``), then what a worker
adds (``extraction.worker.init_worker``: the model's session, the warm-up page); then, from a
bare interpreter again, what the crawl process imports (Scrapy, the spiders and pipelines,
matplotlib when it draws an HTML report). Prints each step's growth of RSS and USS (the
process's own memory), and the step's CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SAMPLE_SECONDS = 0.25
#: The tree is at rest when it used less than this share of one core since the last sample.
REST_CPU_SHARE = 0.05
_TICKS = os.sysconf("SC_CLK_TCK")
#: Extension modules whose mapping says a process imported the package.
MARKERS = {
    "onnxruntime": "onnxruntime/capi",
    "numpy": "numpy/_core",
    "lxml": "lxml/etree",
    "matplotlib": "matplotlib/",
    "scipy": "scipy/",
    "twisted/scrapy": "twisted/",
    "regex (dateparser)": "regex/_regex",
}


def memory_mib(pid: int) -> dict[str, float]:
    """RSS and USS of ``pid`` in MiB (no import of the benchmarks' shared module, which
    imports Scrapy: the import table starts from a bare interpreter)."""
    rollup = _smaps_rollup(pid)
    return {"rss": rollup["Rss"], "uss": rollup["Private_Clean"] + rollup["Private_Dirty"]}


def _smaps_rollup(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        if rest.strip().endswith("kB"):
            out[name] = int(rest.split()[0]) / 1024
    return out


def _group(path: str) -> str:
    """The name a mapping's PSS is summed under."""
    if not path:
        return "anonymous (Python objects, arrays, arenas)"
    if path == "[heap]":
        return "[heap] (malloc)"
    if path.startswith("["):
        return "other kernel mappings"
    match = re.search(r"site-packages/([^/]+)", path)
    if match:
        package = match.group(1).removesuffix(".libs")
        return f"libraries of {package.split('-')[0].lstrip('_').lower()}"
    if "python3" in path or "libpython" in path:
        return "python interpreter and stdlib extensions"
    if path.startswith("/usr/lib") or path.startswith("/lib"):
        return "system libraries"
    return "other files"


def smaps(pid: int) -> tuple[dict[str, float], dict[str, float]]:
    """PSS in MiB per :func:`_group` of ``/proc/PID/smaps``, and Private_Dirty in MiB per
    anonymous mapping (by address range)."""
    groups: dict[str, float] = {}
    dirty: dict[str, float] = {}
    current, span, anonymous = "", "", False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(None, 5)
        if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
            path = head[5].strip() if len(head) == 6 else ""
            current, span, anonymous = _group(path), head[0], path in ("", "[heap]")
        elif line.startswith("Pss:"):
            groups[current] = groups.get(current, 0.0) + int(line.split()[1]) / 1024
        elif line.startswith("Private_Dirty:") and anonymous:
            dirty[span] = int(line.split()[1]) / 1024
    return groups, dirty


def _markers(pid: int) -> list[str]:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return [name for name, needle in MARKERS.items() if needle in maps]


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _role(pid: int, crawler: int, server: int | None) -> str:
    if pid == crawler:
        return "crawler"
    if pid == server:
        return "fork server"
    if server is not None and _parent(pid) == server:
        return "worker"
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    if "resource_tracker" in cmdline:
        return "resource tracker"
    return "other: " + cmdline[:40]


@dataclass
class Sample:
    at: float
    processes: list[dict] = field(default_factory=list)


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _snapshot(crawler: int, workers: int) -> tuple[Sample, float] | None:
    """The tree's memory now, and its CPU seconds; None unless fork server and workers are
    up."""
    from benchmarks.broad_crawl import descendants

    tree = descendants(crawler)
    roles: dict[int, str] = {}
    try:
        server = next(
            (
                p
                for p in tree
                if b"forkserver" in Path(f"/proc/{p}/cmdline").read_bytes()
                and _parent(p) == crawler
            ),
            None,
        )
        for pid in tree:
            roles[pid] = _role(pid, crawler, server)
    except OSError:
        return None
    if server is None or sum(1 for r in roles.values() if r == "worker") < workers:
        return None
    sample, cpu = Sample(time.perf_counter()), 0.0
    try:
        for pid, role in roles.items():
            cpu += _cpu(pid)
            rollup = _smaps_rollup(pid)
            groups, dirty = smaps(pid)
            sample.processes.append(
                {
                    "pid": pid,
                    "role": role,
                    "rss": rollup["Rss"],
                    "pss": rollup["Pss"],
                    "uss": rollup["Private_Clean"] + rollup["Private_Dirty"],
                    "dirty": rollup["Private_Dirty"],
                    "groups": groups,
                    "anon_dirty": dirty,
                    "markers": _markers(pid),
                }
            )
    except (OSError, KeyError):
        return None
    return sample, cpu


def _inherited_private(worker: dict, server: dict) -> float:
    """MiB of the worker's written private pages in anonymous mappings (the heap, arenas)
    at addresses the fork server holds too: pages the worker copied on write, or first
    touched in memory it inherited; an upper bound of what it unshared."""
    return sum(mib for span, mib in worker["anon_dirty"].items() if span in server["anon_dirty"])


def sample_tree(crawler: int, workers: int, done: threading.Event, out: dict) -> None:
    last_cpu, last_at = None, 0.0
    while not done.is_set():
        got = _snapshot(crawler, workers)
        if got is not None:
            sample, cpu = got
            out["full"] = out.get("full", 0) + 1
            if last_cpu is not None:
                share = (cpu - last_cpu) / max(sample.at - last_at, 1e-3)
                if share < REST_CPU_SHARE:
                    out["rest"] = sample
                    out["rests"] = out.get("rests", 0) + 1
            last_cpu, last_at = cpu, sample.at
        else:
            last_cpu = None
        done.wait(SAMPLE_SECONDS)


def part_tree(args: argparse.Namespace) -> None:
    from tests.broad_sites import broad_sites

    python = args.python or sys.executable
    with tempfile.TemporaryDirectory(prefix="rest-memory-") as tmp:
        work = Path(tmp)
        with broad_sites(1, args.pages, crawl_delay=args.crawl_delay) as urls:
            (work / "sites.txt").write_text(urls[0] + "\n")
            command = [
                *(python, "-m", "scrapy_maintext", "crawl", "sitemap"),
                *("-a", f"domains_file={work / 'sites.txt'}", "-O", str(work / "items.jsonl")),
                *("-s", f"EXTRACT_WORKERS={args.workers}"),
            ]
            out: dict = {}
            done = threading.Event()
            proc = subprocess.Popen(
                command,
                cwd=args.cwd or work,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            watcher = threading.Thread(
                target=sample_tree, args=(proc.pid, args.workers, done, out), daemon=True
            )
            watcher.start()
            log, _ = proc.communicate()
            done.set()
            watcher.join()
        items = work / "items.jsonl"
        exported = len(items.read_text().splitlines()) if items.exists() else 0
    if proc.returncode != 0 or "rest" not in out:
        print(log[-3000:], file=sys.stderr)
        raise SystemExit(f"crawl failed (exit {proc.returncode}) or never at rest")
    rest: Sample = out["rest"]
    print(
        f"one site, {args.pages} pages, Crawl-delay {args.crawl_delay:g} s, "
        f"{args.workers} workers, {exported} documents exported; {python}; "
        f"{out['rests']} samples at rest of {out['full']} with the whole tree up"
    )
    order = {"crawler": 0, "fork server": 1, "worker": 2}
    procs = sorted(rest.processes, key=lambda p: (order.get(p["role"], 3), p["pid"]))
    print(
        "\n| process | RSS MiB | PSS MiB | USS MiB | of it written (Private_Dirty) | has mapped |"
    )
    print("|---|---|---|---|---|---|")
    for p in procs:
        print(
            f"| {p['role']} | {p['rss']:.0f} | {p['pss']:.0f} | {p['uss']:.0f} | "
            f"{p['dirty']:.0f} | {', '.join(p['markers'])} |"
        )
    total = {k: sum(p[k] for p in procs) for k in ("rss", "pss", "uss", "dirty")}
    print(
        f"| **sum** ({len(procs)} processes) | **{total['rss']:.0f}** | **{total['pss']:.0f}** "
        f"| {total['uss']:.0f} | {total['dirty']:.0f} | |"
    )
    (server,) = [p for p in procs if p["role"] == "fork server"]
    for n, p in enumerate(p for p in procs if p["role"] == "worker"):
        print(
            f"worker {n + 1}: {_inherited_private(p, server):.1f} MiB of its "
            f"{p['dirty']:.1f} MiB written private pages lie in anonymous mappings inherited "
            f"from the fork server (copied on write, or first touched there)"
        )
    print(f"\nPSS by mapping (MiB), the {args.top} largest per process:")
    for p in procs:
        top = sorted(p["groups"].items(), key=lambda kv: -kv[1])[: args.top]
        print(f"  {p['role']:12s} " + "; ".join(f"{name} {mib:.1f}" for name, mib in top))
    if args.json:
        Path(args.json).write_text(json.dumps(procs, indent=1))


# -- What each import or warm-up costs, in fresh processes ------------------------------------


def _load_model() -> None:
    from scrapy_maintext.extraction.engines import neural_load
    from scrapy_maintext.extraction.options import ExtractOptions

    error = neural_load(ExtractOptions().model).error
    assert error is None, error


def _warm_up_page() -> None:
    from scrapy_maintext.extraction.core import extract_page
    from scrapy_maintext.extraction.options import ExtractOptions
    from scrapy_maintext.extraction.worker import WARM_UP_PAGE

    extract_page(WARM_UP_PAGE, "https://warm-up.invalid/", ExtractOptions())


def _import(name: str) -> Callable[[], object]:
    import importlib

    return lambda: importlib.import_module(name)


def _call(module: str, function: str) -> Callable[[], object]:
    import importlib

    return lambda: getattr(importlib.import_module(module), function)()


#: (who does it, step): the fork server's preload in its order, then a worker's start (each
#: step after the ones above it); the crawl process's own imports from a bare interpreter.
STEPS = [
    ("fork server", "numpy", _import("numpy")),
    ("fork server", "lxml + trafilatura", _import("trafilatura")),
    ("fork server", "extraction stack", _import("scrapy_maintext.extraction.worker")),
    ("fork server", "onnxruntime (scrapy_maintext.neural)", _import("scrapy_maintext.neural")),
    (
        "fork server",
        "dateparser locale warm-up",
        _call("scrapy_maintext.fields.metadata", "warm_date_parser"),
    ),
    (
        "fork server",
        "language model (py3langid)",
        _call("scrapy_maintext.fields.language", "identifier"),
    ),
    ("worker", "model session (neural_load)", _load_model),
    ("worker", "warm-up page", _warm_up_page),
    ("crawler", "scrapy + twisted", _import("scrapy.crawler")),
    ("crawler", "the crawl's spiders and pipelines", _import("scrapy_maintext.spiders.sitemap")),
    ("crawler", "matplotlib (HTML report plots)", _import("matplotlib.figure")),
]
#: Where the crawl process's steps start from a bare interpreter again.
CRAWLER_FIRST = 8


def child_imports(upto: int) -> None:
    import gc

    first = CRAWLER_FIRST if upto >= CRAWLER_FIRST else 0
    for _, _, step in STEPS[first:upto]:
        step()
    gc.collect()
    before, cpu = memory_mib(os.getpid()), time.process_time()
    STEPS[upto][2]()
    gc.collect()
    after = memory_mib(os.getpid())
    print(
        json.dumps(
            {
                "rss": after["rss"] - before["rss"],
                "uss": after["uss"] - before["uss"],
                "total_rss": after["rss"],
                "total_uss": after["uss"],
                "cpu": time.process_time() - cpu,
            }
        )
    )


def part_imports() -> None:
    code = "import benchmarks.crawl_rest_memory as m, os, json; "
    code += "print(json.dumps(m.memory_mib(os.getpid())))"
    base = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    bare = json.loads(base.stdout)
    print(f"\nbare python: RSS {bare['rss']:.1f} MiB, USS {bare['uss']:.1f} MiB")
    print("| process | step | RSS + MiB | USS + MiB | RSS after | USS after | CPU s |")
    print("|---|---|---|---|---|---|---|")
    for n, (who, name, _) in enumerate(STEPS):
        cmd = [sys.executable, "-m", "benchmarks.crawl_rest_memory", "--child-step", str(n)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        got = json.loads(out.strip().splitlines()[-1])
        print(
            f"| {who} | {name} | {got['rss']:.1f} | {got['uss']:.1f} | "
            f"{got['total_rss']:.0f} | {got['total_uss']:.0f} | {got['cpu']:.2f} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("tree", "imports", "both"), default="both")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--crawl-delay", type=float, default=2.0)
    parser.add_argument("--python", default=None, help="the crawl's interpreter")
    parser.add_argument("--cwd", default=None, help="the crawl's working folder")
    parser.add_argument("--top", type=int, default=6, help="mappings shown per process")
    parser.add_argument("--json", default=None, help="write the processes at rest here")
    parser.add_argument("--child-step", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_step is not None:
        child_imports(args.child_step)
        return
    if args.part in ("tree", "both"):
        part_tree(args)
    if args.part in ("imports", "both"):
        part_imports()


if __name__ == "__main__":
    main()
