"""How many requests and exports does a recurring crawl cost, with and without ``CRAWL_STATE``?

    python -m benchmarks.recrawl_requests [--spider sitemap|feed|both]

The scenario of issue 20 on a local site (``tests/recrawl_site.py``): 20 articles behind a
sitemap index (17 with ``lastmod``, 3 without) and an RSS feed of the 10 newest, every answer
with ``ETag`` and ``Last-Modified``. Run 1 on the site as it is, run 2 with nothing changed, run
3 after 2 articles are edited with their ``lastmod`` bumped, 1 without, 2 are added and 1 is
removed (for the feed spider: 2 added). Each run is crawled as a user runs it again and again,
once without a state (``-O`` replaced every time) and once with one ``CRAWL_STATE`` file kept
across the runs (``RECRAWL_SCHEDULE=every-run``: the runs come seconds apart, and the
adaptive schedule, ``benchmarks.recrawl_month``, would find nothing due). Prints per run the
requests the server answered, by kind and status, and the documents exported. Counts, not
timings: the machine's load does not change them.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from scrapy_maintext.demo.site import SiteOptions

from tests.crawl import NO_WAITS, run_crawl
from tests.recrawl_site import UNDATED, ChangingSite
from tests.sites import TestSiteServer


def kind(path: str) -> str:
    if path.startswith("/articles/"):
        return "article"
    if path == "/robots.txt":
        return "robots"
    return "feed" if path.endswith("feed.xml") else "sitemap"


def change(news: ChangingSite, spider: str) -> None:
    slugs = list(news.stories)
    if spider == "sitemap":
        for slug in slugs[UNDATED : UNDATED + 2]:
            news.edit(slug, "corrected")
        news.edit(slugs[0], "corrected, lastmod not bumped", bump_lastmod=False)
        news.remove(slugs[-1])
    news.add()
    news.add()
    news.publish()


def scenario(spider: str, with_state: bool, tmp: Path) -> None:
    label = "with CRAWL_STATE" if with_state else "without state"
    with TestSiteServer(SiteOptions(crawl_delay=None), host="127.0.0.6") as server:
        news = ChangingSite(server)
        args = {"domain": news.base} if spider == "sitemap" else {"url": f"{news.base}/feed.xml"}
        # Runs seconds apart: with the adaptive schedule nothing would be due again.
        settings = {**NO_WAITS, "LOG_LEVEL": "WARNING", "RECRAWL_SCHEDULE": "every-run"}
        if with_state:
            settings["CRAWL_STATE"] = str(tmp / f"{spider}.sqlite")
        for run in (1, 2, 3):
            if run == 3:
                change(news, spider)
            server.reset()
            out = tmp / f"{spider}-{with_state}-{run}"
            result = run_crawl(spider, out, args, settings)
            hits = Counter((kind(h.path), h.status) for h in server.hits)
            by_kind = ", ".join(f"{k} {s}: {n}" for (k, s), n in sorted(hits.items()))
            print(
                f"{spider}, {label}, run {run}: {sum(hits.values())} requests ({by_kind}); "
                f"{len(result.items)} exported",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spider", choices=("sitemap", "feed", "both"), default="both")
    args = parser.parse_args()
    spiders = ("sitemap", "feed") if args.spider == "both" else (args.spider,)
    with tempfile.TemporaryDirectory() as tmp:
        for spider in spiders:
            for with_state in (False, True):
                scenario(spider, with_state, Path(tmp))


if __name__ == "__main__":
    main()
