"""Crawl-process CPU per page with pages sent to the workers as bytes or as text.

    python -m benchmarks.crawl_html_bytes --data ../shared/data [--pages 400] [--rounds 3]
        [--workers 1,2]

Serves real pages as ``benchmarks.crawl_throughput`` does and crawls them, interleaved, in
two ways: as shipped (the spiders put ``response.body`` and its encoding in the item, the
worker decodes it; ``HeadMetaRefreshMiddleware`` skips bodies without ``refresh``) and as
before (``DISCOVERY_HTML_BYTES=False``: ``response.text``, decoded and pickled as a str by the
crawl process; Scrapy's own ``MetaRefreshMiddleware``, which decodes every page). Prints each
crawl's pages per second and the crawl process's CPU per page, then the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions

from benchmarks.crawl_throughput import (
    UNTHROTTLED,
    crawl,
    crawl_cpu_ms,
    load_pages,
    rate,
    serve_pages,
)

OURS = "scrapy_maintext.middlewares.metarefresh.HeadMetaRefreshMiddleware"
SCRAPYS = "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware"
VARIANTS = {
    "bytes (shipped)": {},
    "text (before)": {
        "DISCOVERY_HTML_BYTES": "False",
        "DOWNLOADER_MIDDLEWARES": json.dumps({OURS: None, SCRAPYS: 580}),
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    seen: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with SiteServer(SiteOptions(crawl_delay=None, feeds=False), keep_alive=True) as server:
        serve_pages(server, load_pages(args.data, args.pages))
        for round_no in range(args.rounds):
            names = list(VARIANTS) if round_no % 2 == 0 else list(VARIANTS)[::-1]
            for name in names:
                for workers in counts:
                    settings = {**UNTHROTTLED, **VARIANTS[name], "EXTRACT_WORKERS": str(workers)}
                    result = crawl(server, settings)
                    row = (rate(result), crawl_cpu_ms(result))
                    seen.setdefault((name, workers), []).append(row)
                    print(
                        f"  round {round_no + 1} {name}, workers={workers}: {row[0]:.1f} pages/s, "
                        f"crawl process {row[1]:.2f} ms CPU per page",
                        flush=True,
                    )
    for (name, workers), rows in seen.items():
        pages_s = statistics.median(r[0] for r in rows)
        cpu = statistics.median(r[1] for r in rows)
        print(f"{name}, workers={workers}: {pages_s:.1f} pages/s, {cpu:.2f} ms CPU per page")


if __name__ == "__main__":
    main()
