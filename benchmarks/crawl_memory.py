"""Memory of a crawl plan of 1M URLs across many sites, and of its duplicate filter.

    python -m benchmarks.crawl_memory [--urls 1000000] [--sites 1000]

Each part runs in a fresh process and reports the growth of its resident set (RSS):

- ``plan``: the discovery plans (``CrawlPlan``, one per site) of ``--urls`` sitemap entries
  with dates, then the newest-first lists of pages to request and each site's set of
  scheduled URLs, as the spiders keep them;
- ``exact`` / ``bloom``: the duplicate filter of as many requests, as Scrapy's exact set of
  20-byte fingerprints and as the scalable Bloom filter ``BoundedDupeFilter`` switches to past
  ``SEENSET_EXACT_MAX`` (at ``SEENSET_ERROR_RATE``), with the Bloom filter's false-positive
  rate measured on as many fingerprints it never saw.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

PARTS = ("plan", "exact", "bloom")


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--sites", type=int, default=1000)
    parser.add_argument("--error-rate", type=float, default=1e-6)
    parser.add_argument("--part", choices=PARTS, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part == "plan":
        print(part_plan(args.urls, args.sites))
        return
    if args.part in ("exact", "bloom"):
        print(part_filter(args.urls, args.part == "bloom", args.error_rate))
        return
    for part in PARTS:
        cmd = [sys.executable, "-m", "benchmarks.crawl_memory", "--part", part]
        cmd += ["--urls", str(args.urls), "--sites", str(args.sites)]
        cmd += ["--error-rate", str(args.error_rate)]
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
