"""What do pages that need JavaScript cost: a crawl rendering them with 1 and 2 pages at once
(pages per second, the crawl tree's peak memory), the embedded-data path beside a render, and
a crawl that renders nothing with rendering on or off?

    python -m benchmarks.render_cost [--copies 4] [--rounds 2] [--extract-rounds 20]

Two sites on two loopback addresses (``tests.js_site.mixed_routes``), each with ``--copies``
pages of every kind: server-rendered, written by an inline script, fetched as JSON by a
script, Next.js with its text in ``__NEXT_DATA__``. Each round crawls both sites (``scrapy
crawl sitemap``, a fresh process, no politeness waits, one extraction worker) with
``RENDER_MAX_PAGES=1`` and ``=2`` (renders of one site wait for its one-at-a-time slot:
two sites are what lets two run at once), then a site of server-rendered pages only with
``RENDER_JS=auto`` and ``=never``; the order of the configurations is reversed every
round. The crawl tree (crawler, extraction workers, Playwright's driver, Chromium) is sampled
every 0.2 s: its peak is the largest sum of its processes' PSS (shared pages counted once).
Printed per configuration: median wall seconds (each round's in brackets), pages exported
per second, peak tree PSS
(MiB), renders and mean seconds per render (from the crawl's ``render/*`` stats); then
``extract()`` per page, in this process, interleaved: a server-rendered page, a Next.js page
read from its data, a script shell found to need JavaScript (ms per page, median).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil
from scrapy_maintext.extraction import extract

from benchmarks.common import memory_mib
from tests.js_site import mixed_routes
from tests.sites import Route, SiteOptions, TestSiteServer

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_SECONDS = 0.2
NO_WAITS = {"DOWNLOAD_DELAY": "0", "AUTOTHROTTLE_ENABLED": "False", "EXTRACT_WORKERS": "1"}


def serve(
    host: str, copies: int, seed: int, kinds: tuple[str, ...] | None = None
) -> TestSiteServer:
    options = SiteOptions(articles=1, feeds=False, crawl_delay=None)
    server = TestSiteServer(options, host=host, keep_alive=True)
    assert server.site is not None
    routes = mixed_routes(server.base_url, copies, seed)
    if kinds is not None:
        routes = {p: r for p, r in routes.items() if not p.endswith(".html") or p.startswith(kinds)}
        urls = "".join(
            f"<url><loc>{server.base_url}{p}</loc></url>" for p in routes if p.endswith(".html")
        )
        routes["/sitemap.xml"] = Route(
            '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"{urls}</urlset>".encode(),
            "application/xml",
        )
    server.site.routes = routes
    return server


def tree_pss(pid: int) -> float:
    """PSS (MiB) of ``pid`` and every process below it."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for process in processes:
        try:
            total += memory_mib(process.pid)["pss"]
        except (OSError, psutil.Error):
            continue
    return total


def crawl(sites: list[str], settings: dict[str, str]) -> dict[str, Any]:
    """One crawl of ``sites`` in a fresh process: wall seconds, items, peak PSS, stats."""
    with tempfile.TemporaryDirectory() as tmp:
        out, stats_file = Path(tmp) / "items.jsonl", Path(tmp) / "stats.json"
        argv = [sys.executable, "-m", "scrapy", "crawl", "sitemap", "-O", str(out)]
        argv += ["-a", f"domain={','.join(sites)}"]
        merged = {
            **NO_WAITS,
            **settings,
            "EXTENSIONS": json.dumps({"tests.stats_dump.StatsDump": 0}),
            "TEST_STATS_FILE": str(stats_file),
            "LOG_LEVEL": "WARNING",
        }
        for key, value in merged.items():
            argv += ["-s", f"{key}={value}"]
        started = time.monotonic()
        process = subprocess.Popen(
            argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        peak = [0.0]
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], tree_pss(process.pid))
                stop.wait(SAMPLE_SECONDS)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, stderr = process.communicate(timeout=600)
        wall = time.monotonic() - started
        stop.set()
        sampler.join()
        if process.returncode != 0:
            raise SystemExit(f"crawl failed ({process.returncode}): {stderr.decode()[-2000:]}")
        items = sum(1 for line in out.read_text().splitlines() if line.strip())
        stats = json.loads(stats_file.read_text())
    return {"wall": wall, "items": items, "peak": peak[0], "stats": stats}


def summary(name: str, runs: list[dict[str, Any]]) -> str:
    wall = statistics.median(r["wall"] for r in runs)
    items = runs[0]["items"]
    peak = statistics.median(r["peak"] for r in runs)
    renders = runs[0]["stats"].get("render/pages", 0)
    seconds = statistics.median(
        r["stats"].get("render/seconds", 0.0) / max(r["stats"].get("render/pages", 0), 1)
        for r in runs
    )
    walls = "/".join(f"{r['wall']:.1f}" for r in runs)
    return (
        f"{name:<24} {wall:7.1f} s ({walls})  {items:3d} items  {items / wall:5.2f} pages/s  "
        f"peak PSS {peak:6.0f} MiB  renders {renders:3d}  {seconds:4.2f} s/render"
    )


def extract_costs(rounds: int) -> str:
    routes = mixed_routes("http://127.0.0.1:1", 1, seed=7)
    pages = {
        "server-rendered": routes["/server-0.html"].body,
        "Next.js data": routes["/next-0.html"].body,
        "script shell": routes["/inline-0.html"].body,
    }
    times: dict[str, list[float]] = {name: [] for name in pages}
    order = list(pages)
    for round_ in range(rounds):
        for name in order if round_ % 2 == 0 else reversed(order):
            started = time.perf_counter()
            extract(pages[name], "http://127.0.0.1:1/page.html")
            times[name].append(time.perf_counter() - started)
    return "\n".join(
        f"extract() {name:<16} {statistics.median(t) * 1000:7.1f} ms/page"
        for name, t in times.items()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--extract-rounds", type=int, default=20)
    args = parser.parse_args()
    with ExitStack() as stack:
        mixed = [
            stack.enter_context(serve(host, args.copies, seed))
            for host, seed in (("127.0.0.1", 461), ("127.0.0.3", 462))
        ]
        plain = stack.enter_context(serve("127.0.0.4", args.copies * 4, 463, ("/server",)))
        mixed_sites = [server.base_url for server in mixed]
        configs = {
            "mixed, 1 render at once": (mixed_sites, {"RENDER_MAX_PAGES": "1"}),
            "mixed, 2 renders at once": (mixed_sites, {"RENDER_MAX_PAGES": "2"}),
            "no JS, RENDER_JS=auto": ([plain.base_url], {"RENDER_JS": "auto"}),
            "no JS, RENDER_JS=never": ([plain.base_url], {"RENDER_JS": "never"}),
        }
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in configs}
        for round_ in range(args.rounds):
            names = list(configs) if round_ % 2 == 0 else list(reversed(configs))
            for name in names:
                sites, settings = configs[name]
                runs[name].append(crawl(sites, settings))
        for name in configs:
            print(summary(name, runs[name]))
    print(extract_costs(args.extract_rounds))


if __name__ == "__main__":
    main()
