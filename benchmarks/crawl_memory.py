"""How much memory does the crawl process's state take on a large crawl of many sites: the
discovery plans, the duplicate filter and the site memory?

    python -m benchmarks.crawl_memory [--urls 1000000] [--sites 1000] [--error-rate 1e-6]
        [--part plan|exact|bloom|site-memory] [--site-pages 30] [--max-sites N] [--seed 1]

Each part runs in a fresh process and reports the growth of its resident set (RSS):

- ``plan``: the discovery plans (``CrawlPlan``, one per site) of ``--urls`` sitemap entries
  with dates over ``--sites`` sites, then the newest-first lists of pages to request and each
  site's set of scheduled URLs, as the spiders keep them;
- ``exact`` / ``bloom``: the duplicate filter of as many requests, as Scrapy's exact set of
  20-byte fingerprints and as the scalable Bloom filter ``BoundedDupeFilter`` switches to past
  ``SEENSET_EXACT_MAX`` (at ``--error-rate``, ``SEENSET_ERROR_RATE``), with the time per
  request and the Bloom filter's false-positive rate measured on as many fingerprints it never
  saw;
- ``site-memory``: :class:`SiteMemories` fed the block signatures of a synthetic crawl of
  ``--sites`` sites with ``--site-pages`` pages each, the way the crawl's pipeline does (sites
  interleaved, every page through the warm-up buffers; ``--max-sites`` bounds the sites
  remembered): each site has a template of 50 to 300 blocks, each page adds 20 to 200 blocks
  of its own. Reports the sites tracked and evicted, the signatures kept, the bytes of the
  signature arrays, the RSS growth, the JSON snapshot written to JOBDIR and the time per page
  in the crawl process.

Without ``--part``, every part, one after the other.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

PARTS = ("plan", "exact", "bloom", "site-memory")
#: The site-memory part's synthetic sites: blocks of a site's template, of a page's own.
TEMPLATE_BLOCKS = (50, 300)
PAGE_BLOCKS = (20, 200)
#: Templates rotate a little: this share of a page's template blocks is left out.
TEMPLATE_DROPOUT = 0.1
PARAGRAPH = "words of one block of text as the extractor kept it from the page"


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def site_urls(site: int, count: int) -> list[str]:
    base = f"https://www.site{site}.example"
    return [
        f"{base}/news/2026/11/{i}/a-story-about-the-valley-number-{i}.html" for i in range(count)
    ]


def part_plan(urls: int, sites: int) -> str:
    from scrapy_maintext.discovery.plan import CrawlPlan, PlanOptions
    from scrapy_maintext.discovery.sitemaps import SitemapEntry
    from scrapy_maintext.discovery.urls import UrlPolicy

    per_site = urls // sites
    start = datetime(2026, 11, 1, tzinfo=UTC)
    before = rss_bytes()
    plans = []
    for site in range(sites):
        page_urls = site_urls(site, per_site)
        base = page_urls[0].split("/news/")[0]
        plan = CrawlPlan(UrlPolicy.for_urls([base], allow_subdomains=False), PlanOptions())
        sitemap = f"{base}/sitemap.xml"
        for i, url in enumerate(page_urls):
            plan.add_sitemap_entry(SitemapEntry(url, lastmod=start - timedelta(minutes=i)), sitemap)
        plans.append(plan)
    planned = rss_bytes()
    pages = [plan.to_fetch(set()) for plan in plans]
    scheduled = [{c.url for c in site_pages} for site_pages in pages]
    total = sum(len(p) for p in pages)
    after = rss_bytes()
    assert len(scheduled) == sites
    return (
        f"plan: {total} URLs on {sites} sites: plans {(planned - before) / 2**20:.0f} MiB "
        f"({(planned - before) / total:.0f} B/URL); + pages to request and scheduled sets "
        f"{(after - planned) / 2**20:.0f} MiB ({(after - planned) / total:.0f} B/URL)"
    )


def fingerprints(count: int, salt: str) -> list[bytes]:
    """20-byte fingerprints, like Scrapy's (SHA-1 of the canonical request)."""
    return [hashlib.sha1(f"{salt}{i}".encode()).digest() for i in range(count)]


def part_filter(urls: int, bloom: bool, error_rate: float) -> str:
    from scrapy.utils.request import RequestFingerprinter
    from scrapy_maintext.state.seen_requests import BoundedDupeFilter, SeenSetSettings

    exact_max = 0 if bloom else urls + 1
    config = SeenSetSettings(exact_max=exact_max, error_rate=error_rate)
    before = rss_bytes()
    started = time.perf_counter()
    dupefilter = BoundedDupeFilter(RequestFingerprinter(), config)
    # Each fingerprint is made and handed over, as the scheduler does per request.
    for i in range(urls):
        dupefilter.add(hashlib.sha1(f"seen{i}".encode()).digest())
    per_add = (time.perf_counter() - started) / urls * 1e6
    size = rss_bytes() - before
    line = (
        f"{'bloom' if bloom else 'exact'}: {urls} requests: {size / 2**20:.1f} MiB "
        f"({size / urls:.1f} B/request), {per_add:.1f} µs per request"
    )
    if bloom:
        assert dupefilter.bloom is not None
        false = sum(1 for key in fingerprints(urls, "fresh") if key in dupefilter.bloom)
        line += (
            f"; false positives {false} of {urls} new ({false / urls:.2g}, asked {error_rate:g})"
        )
    return line


def part_site_memory(sites: int, site_pages: int, max_sites: int | None, seed: int) -> str:
    import numpy as np
    from scrapy_maintext.document import Block, Document
    from scrapy_maintext.fields.fingerprint_parts import fingerprint_parts
    from scrapy_maintext.site_memory.memory import PageSignatures
    from scrapy_maintext.site_memory.registry import Pending, SiteMemories, SiteMemoriesOptions

    rng = np.random.default_rng(seed)

    def page_signatures(template: np.ndarray) -> PageSignatures:
        own = rng.integers(1, 2**63, size=int(rng.integers(*PAGE_BLOCKS)), dtype=np.uint64)
        shown = template[rng.random(len(template)) > TEMPLATE_DROPOUT]
        sigs = np.unique(np.concatenate([shown, own]))
        return PageSignatures(sigs, np.concatenate([shown[:5], own[:20]]))

    templates = [
        rng.integers(1, 2**63, size=random.Random(i).randint(*TEMPLATE_BLOCKS), dtype=np.uint64)
        for i in range(sites)
    ]
    options = SiteMemoriesOptions()
    if max_sites:
        options = SiteMemoriesOptions(max_sites=max_sites)
    memories: SiteMemories[int] = SiteMemories(options)
    baseline = rss_bytes()
    spent, pages, removed = 0.0, 0, 0
    # Sites interleaved, as many sites crawled in parallel arrive.
    for _ in range(site_pages):
        for site in range(sites):
            page = page_signatures(templates[site])
            doc = Document(body=[Block("p", f"{i} {PARAGRAPH}") for i in range(len(page.body))])
            # What the extraction worker computes with the signatures.
            page.parts = fingerprint_parts(doc.body)
            started = time.perf_counter()
            decided = memories.arrive(Pending(f"site{site}.example", doc, page, pages, 1000))
            spent += time.perf_counter() - started
            removed += sum(d.outcome.removed for d in decided)
            pages += 1
    memories.flush()
    grown = rss_bytes() - baseline
    snapshot = len(json.dumps(memories.state()))
    blocks = sum(len(m) for m in memories.memories.values())
    return "\n".join(
        [
            f"site-memory: {sites} sites x {site_pages} pages = {pages} pages; {options}",
            f"  sites tracked {len(memories)}, evicted {memories.evicted}",
            f"  signatures kept {blocks} ({blocks / max(len(memories), 1):.0f} per site)",
            f"  signature arrays {memories.nbytes / 2**20:.1f} MiB",
            f"  resident memory grown while crawling {grown / 2**20:.1f} MiB",
            f"  JOBDIR snapshot {snapshot / 2**20:.1f} MiB",
            f"  time per page in the crawl process {spent / pages * 1e6:.0f} us",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--sites", type=int, default=1000)
    parser.add_argument("--error-rate", type=float, default=1e-6)
    parser.add_argument("--site-pages", type=int, default=30, help="site-memory: pages per site")
    parser.add_argument("--max-sites", type=int, default=None, help="site-memory: sites kept")
    parser.add_argument("--seed", type=int, default=1, help="site-memory: random seed")
    parser.add_argument("--part", choices=PARTS, default=None, help="one part, in this process")
    args = parser.parse_args()
    if args.part == "plan":
        print(part_plan(args.urls, args.sites))
        return
    if args.part in ("exact", "bloom"):
        print(part_filter(args.urls, args.part == "bloom", args.error_rate))
        return
    if args.part == "site-memory":
        print(part_site_memory(args.sites, args.site_pages, args.max_sites, args.seed))
        return
    for part in PARTS:
        cmd = [sys.executable, "-m", "benchmarks.crawl_memory", "--part", part]
        cmd += ["--urls", str(args.urls), "--sites", str(args.sites)]
        cmd += ["--error-rate", str(args.error_rate), "--site-pages", str(args.site_pages)]
        cmd += ["--seed", str(args.seed)]
        if args.max_sites:
            cmd += ["--max-sites", str(args.max_sites)]
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
