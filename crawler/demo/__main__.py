"""``python -m scrapy_maintext.demo``: crawl the bundled demo site, served on 127.0.0.1, end to end.

Starts the demo site on a free local port, runs ``scrapy crawl sitemap`` against it exactly
as a user would, writes JSON Lines, TEI and plain text into ``demo-output/`` (or ``--out``),
and prints a short summary.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions

#: The demo site's robots.txt Crawl-delay (seconds): short, so the demo takes seconds.
DEMO_CRAWL_DELAY = 0.5


def _crawl_command(base_url: str, out: Path, spider: str, report: Path | None) -> list[str]:
    return [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        spider,
        "-a",
        f"domain={base_url}",
        "-O",
        str(out / "items.jsonl"),
        "-O",
        f"{out / 'corpus.xml'}:tei",
        "-O",
        f"{out / 'corpus.txt'}:txt",
        "-s",
        "DOWNLOAD_DELAY=0.25",
        "-s",
        "LOG_LEVEL=WARNING",
        *(["-s", f"CRAWL_REPORT={report}"] if report else []),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("demo-output"))
    parser.add_argument("--spider", choices=("sitemap", "feed"), default="sitemap")
    parser.add_argument(
        "--report", type=Path, help="also write the crawl report (report.html or report.json)"
    )
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "scrapy_maintext.settings"}
    with SiteServer(SiteOptions(crawl_delay=DEMO_CRAWL_DELAY)) as server:
        print(f"Demo site serving on {server.base_url}; crawling it politely ...", flush=True)
        proc = subprocess.run(
            _crawl_command(
                server.base_url, out, args.spider, args.report and args.report.resolve()
            ),
            env=env,
        )
    if proc.returncode != 0:
        return proc.returncode
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    for item in items:
        print(f"  {item.get('extractor', '-'):12} {item['url']}  {item.get('title')!r}")
    print(f"\n{len(items)} documents written to:")
    for name in ("items.jsonl", "corpus.xml", "corpus.txt"):
        print(f"  {out / name}")
    if args.report:
        print(f"Crawl report: {args.report.resolve()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
