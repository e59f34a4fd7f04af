"""A large crawl report to render: what a 2,000-page, 50-site crawl's JSON report looks like.

The report is made by the crawl report's own code (:class:`RunReport`, :class:`SiteReport`),
fed with a simulated crawl instead of Scrapy's signals: sites of very different sizes (a
few large, many small), each crawled one request at a time at its own delay (1 to 5 s),
with HTTP errors, skips, drops, the three engines, a dozen languages and three years of
publication dates. Seeded: the same command gives the same report.

    python -m benchmarks.report_fixture --out report-2000.json [--sites 50 --pages 2000]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from scrapy_maintext.report.header import run_header
from scrapy_maintext.report.sites import RunReport, Timeline

LANGUAGES = ["en", "de", "fr", "es", "it", "nl", "pt", "pl", "sv", "cs", "da", "fi"]
STATUSES = [(200, 0.9), (404, 0.04), (301, 0.02), (500, 0.02), (410, 0.01), (429, 0.01)]
ENGINES = [("neural", 0.8), ("fallback", 0.15), ("trafilatura", 0.05)]
DROPS = [("no_text", 0.7), ("duplicate", 0.25), ("timeout", 0.05)]


def _pick(rng: random.Random, weighted: list[tuple[Any, float]]) -> Any:
    values, weights = zip(*weighted, strict=True)
    return rng.choices(values, weights)[0]


def _sizes(rng: random.Random, sites: int, pages: int) -> list[int]:
    """Pages per site, Zipf-like (a few large sites), summing to ``pages``."""
    weights = [1 / (rank + 1) ** 0.8 for rank in range(sites)]
    total = sum(weights)
    sizes = [max(1, int(pages * w / total)) for w in weights]
    for i in range(pages - sum(sizes)):
        sizes[i % sites] += 1
    rng.shuffle(sizes)
    return sizes


def fixture_report(sites: int = 50, pages: int = 2000, seed: int = 24) -> dict[str, Any]:
    """The JSON report of a simulated crawl of ``pages`` pages on ``sites`` sites."""
    rng = random.Random(seed)
    run = RunReport(started=1_780_000_000.0, timeline=Timeline(0.0))
    finished = 0.0
    for index, size in enumerate(_sizes(rng, sites, pages)):
        key = f"https://site{index:02d}.example.org"
        report = run.site(key)
        report.delay = float(rng.choice([1, 1, 1, 2, 5]))
        language = rng.choice(LANGUAGES)
        when = rng.uniform(0, 30)
        for _ in range(3):  # robots.txt, the sitemap index, a sitemap
            run.add_request(key, when)
            when += report.delay + rng.uniform(0, 0.2)
        for page in range(size):
            _page(rng, run, key, when, language, page)
            when += report.delay + rng.uniform(0, 0.3)
        finished = max(finished, when)
        report.not_planned["offsite"] = rng.randint(0, 5)
        report.not_planned["too_old"] = rng.randint(0, 20)
    run.header = run_header(
        {"DOWNLOAD_DELAY": 1.0, "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "EXTRACT_ENGINE": "auto"},
        "v4.1",
        command="maintext crawl sitemap -a domains_file=sites.txt -s CRAWL_REPORT=report.html",
    )
    data = run.to_dict("finished", finished=run.started + finished)
    return data


def _page(
    rng: random.Random, run: RunReport, key: str, when: float, language: str, page: int
) -> None:
    report = run.site(key)
    report.planned += 1
    if rng.random() < 0.01:
        report.skipped["robots_disallowed"] += 1
        return
    run.add_request(key, when)
    report.fetched += 1
    status = _pick(rng, STATUSES)
    report.statuses[str(status)] += 1
    if status != 200:
        report.skipped[f"http_{status}"] += 1
        return
    if rng.random() < 0.06:
        report.dropped[_pick(rng, DROPS)] += 1
        return
    length = int(rng.lognormvariate(7.5, 0.9))
    year = rng.choice([2024, 2025, 2026])
    date = (
        None if rng.random() < 0.1 else f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    )
    lang = language if rng.random() < 0.9 else rng.choice(LANGUAGES)
    report.add_document(_pick(rng, ENGINES), "x" * length, lang, date)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON report to write")
    parser.add_argument("--sites", type=int, default=50)
    parser.add_argument("--pages", type=int, default=2000)
    args = parser.parse_args()
    data = fixture_report(args.sites, args.pages)
    args.out.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    print(f"{args.out}: {len(data['sites'])} sites, {args.pages} pages")


if __name__ == "__main__":
    main()
