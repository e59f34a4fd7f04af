"""What does the crawl state of a recurring crawl (``CRAWL_STATE``) cost: on disk per URL, per
lookup, and in crawl CPU per page?

    python -m benchmarks.crawl_state [--urls 1000000] [--articles 200] [--rounds 3]
        [--workers 1] [--part store|crawl|both]

``store``: a state of ``--urls`` URLs of realistic length (news URLs of 1000 sites, about 80
characters), each exported once (validators, listed date, text hash, export times, revision,
the sitemap that listed it, the near-duplicate fingerprint, and its row in the schedule of
adaptive revisits), written in commits of 1000 rows as a crawl writes them. Prints the time to
write them, the file's size per URL (after a checkpoint: the WAL folded in), the time of the
check the crawl command runs first (``check_state_file``: integrity and lock), the time to load
the fingerprints into the next run's near-duplicate filter, point lookups per second
(:meth:`CrawlState.get` of random known and unknown URLs) and batch lookups per second
(:meth:`CrawlState.get_many`, 500 URLs a query, as the spiders ask for a site's plan).

``crawl``: the demo site of ``--articles`` articles crawled with extraction, without state and
with a fresh copy of the ``--urls`` state (every page new to it: the most writes per page),
interleaved over ``--rounds`` rounds (order reversed every round). Prints each crawl's CPU of
the crawl process per page (``benchmarks.common.CrawlCpu``) and the ratio with/without per
round and of the medians.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions
from scrapy_maintext.state.crawl_state import CrawlState, check_state_file
from scrapy_maintext.state.fingerprints import SeenFingerprints
from scrapy_maintext.state.schedule import Clock, Schedule, SchedulePolicy
from scrapy_maintext.state.validators import Validators, text_hash

from benchmarks.common import memory_mib
from benchmarks.crawl_throughput import UNTHROTTLED, crawl, crawl_cpu_ms, rate

WORDS = [
    "council",
    "budget",
    "river",
    "storm",
    "election",
    "school",
    "harbour",
    "festival",
    "library",
    "museum",
    "railway",
    "market",
    "bridge",
    "forest",
    "theatre",
    "bakery",
    "vineyard",
    "orchard",
    "observatory",
    "housing",
    "transport",
]


def news_url(rng: random.Random, i: int) -> str:
    site = f"www.news-site-{rng.randrange(1000):03d}.example"
    slug = "-".join(rng.choice(WORDS) for _ in range(rng.randint(3, 6)))
    return f"https://{site}/2026/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}/{slug}-{i}.html"


def build(path: Path, count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    urls = [news_url(rng, i) for i in range(count)]
    started = time.perf_counter()
    with CrawlState(path) as state:
        # Every export also has its row in the schedule (adaptive revisits, schema 3).
        schedule = Schedule(state, SchedulePolicy(), Clock(1_770_000_000))
        for i, url in enumerate(urls):
            sitemap = f"{url.split('/2026/')[0]}/sitemap-{i % 30}.xml"
            validators = Validators(f'"{rng.getrandbits(64):016x}"', 1_760_000_000 + i)
            fingerprint = f"{rng.getrandbits(64):016x}"
            state.record_export(
                url, text_hash(url), 1_770_000_000, validators, 1_765_000_000, sitemap, fingerprint
            )
            schedule.visited(url, True, modified=validators.last_modified)
            if i % 1000 == 999:
                state.commit()
        state.commit()
        state.db.execute("COMMIT")
        state.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        state.db.execute("BEGIN")
    elapsed = time.perf_counter() - started
    size = path.stat().st_size
    mean_url = statistics.mean(map(len, urls))
    print(f"wrote {count} URLs in {elapsed:.1f} s ({count / elapsed:,.0f} rows/s, commits of 1000)")
    per_url = size / count
    print(f"file {size / 1e6:.1f} MB: {per_url:.0f} bytes per URL (mean URL {mean_url:.0f} chars)")
    return urls


def checked(path: Path) -> None:
    started = time.perf_counter()
    check_state_file(path)
    print(f"check_state_file (run before every crawl): {time.perf_counter() - started:.2f} s")


def fingerprints_loaded(path: Path) -> None:
    """The near-duplicate filter of the next run, loaded with every export's fingerprint."""
    with CrawlState(path) as state:
        before = memory_mib(os.getpid())["uss"]
        started = time.perf_counter()
        seen = SeenFingerprints(3, None, earlier=state.fingerprints())
        elapsed = time.perf_counter() - started
        grown = memory_mib(os.getpid())["uss"] - before
    print(
        f"near-duplicate filter loaded with {len(seen):,} fingerprints: {elapsed:.2f} s, "
        f"{grown:.1f} MiB ({grown * 2**20 / max(len(seen), 1):.0f} bytes each)"
    )


def lookups(path: Path, urls: list[str], count: int = 100_000) -> None:
    rng = random.Random(2)
    known = rng.sample(urls, min(count, len(urls)))
    unknown = [u + "?new" for u in known]
    with CrawlState(path) as state:
        for name, asked in (("known", known), ("unknown", unknown)):
            started = time.perf_counter()
            for url in asked:
                state.get(url)
            elapsed = time.perf_counter() - started
            print(f"get, {name} URLs: {len(asked) / elapsed:,.0f} lookups/s")
        started = time.perf_counter()
        for start in range(0, len(known), 500):
            state.get_many(known[start : start + 500])
        elapsed = time.perf_counter() - started
        print(f"get_many (500 a query), known URLs: {len(known) / elapsed:,.0f} lookups/s")


def crawls(big: Path, args: argparse.Namespace) -> None:
    options = SiteOptions(articles=args.articles, crawl_delay=None)
    base = {**UNTHROTTLED, "EXTRACT_WORKERS": str(args.workers)}
    cpu: dict[str, list[float]] = {"without state": [], "with state": []}
    with SiteServer(options, keep_alive=True) as server, tempfile.TemporaryDirectory() as tmp:
        for round_no in range(args.rounds):
            order = list(cpu) if round_no % 2 == 0 else list(cpu)[::-1]
            for name in order:
                settings = dict(base)
                if name == "with state":
                    copy = Path(tmp) / f"state-{round_no}.sqlite"
                    shutil.copyfile(big, copy)
                    settings["CRAWL_STATE"] = str(copy)
                result = crawl(server, settings)
                cpu[name].append(crawl_cpu_ms(result))
                print(
                    f"  round {round_no + 1}, {name}: {rate(result):.1f} pages/s, crawl process "
                    f"{cpu[name][-1]:.2f} ms CPU per page ({len(result.items)} items)",
                    flush=True,
                )
    ratios = [w / o for w, o in zip(cpu["with state"], cpu["without state"], strict=True)]
    medians = {name: statistics.median(values) for name, values in cpu.items()}
    print(
        "crawl CPU per page with / without state: rounds "
        + ", ".join(f"{r:.3f}" for r in ratios)
        + f"; medians {medians['with state']:.2f} / {medians['without state']:.2f} ms = "
        f"{medians['with state'] / medians['without state']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--articles", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--part", choices=("store", "crawl", "both"), default="both")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "state.sqlite"
        urls = build(big, args.urls)
        if args.part in ("store", "both"):
            checked(big)
            fingerprints_loaded(big)
            lookups(big, urls)
        if args.part in ("crawl", "both"):
            crawls(big, args)


if __name__ == "__main__":
    main()
