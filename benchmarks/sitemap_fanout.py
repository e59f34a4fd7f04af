"""How long after its first request does a site behind a huge sitemap tree give its first page?

Two endless trees (``tests/sitemap_trees.py``), each serving the site's 5 articles:

- ``fan-out`` (default): every sitemap index lists 20 child indexes, and the root also lists,
  last, the sitemap of the articles with the newest ``lastmod``. Its robots.txt asks for
  ``Crawl-delay`` (``--crawl-delay``, 1 s).
- ``index-tree`` (issue 35): every index lists 20 child indexes and, last, the articles'
  sitemap, all undated; no Crawl-delay, the crawl runs with ``DOWNLOAD_DELAY`` of
  ``--crawl-delay`` seconds.

One ``maintext crawl sitemap`` in a fresh process, default settings otherwise
(``DISCOVERY_MAX_SITEMAPS`` 1,000, extraction off unless ``--extract``), stopped once the
first article was requested (``--to-end``: left to end by itself). Prints how many requests
came before the first article, the seconds between the first request and it (the server's
log), and the seconds from the command's start to the first document in the output.

    python -m benchmarks.sitemap_fanout [--tree index-tree] [--crawl-delay 1] [--to-end]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scrapy_maintext.demo.site import SiteOptions

from tests.sitemap_trees import FanOutServer, IndexTreeServer
from tests.sites import TestSiteServer


def start_crawl(server: TestSiteServer, out: Path, args: argparse.Namespace) -> subprocess.Popen:
    command = [
        *(sys.executable, "-m", "scrapy_maintext", "crawl", "sitemap"),
        *("-a", f"domain={server.base_url}", "-O", str(out)),
        *("-s", f"EXTRACT_ENABLED={bool(args.extract)}"),
    ]
    if args.tree == "index-tree":
        command += ["-s", f"DOWNLOAD_DELAY={args.crawl_delay:g}"]
    return subprocess.Popen(
        command, cwd=out.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def first_document(out: Path) -> bool:
    return out.exists() and b"\n" in out.read_bytes()[:1_000_000]


def watch(
    server: TestSiteServer, proc: subprocess.Popen, out: Path, args: argparse.Namespace
) -> dict[str, float]:
    """Seconds from the command's start to the first article requested, the first document
    and (``--to-end``) the crawl's end."""
    started = time.monotonic()
    seen: dict[str, float] = {}
    while time.monotonic() < started + args.timeout:
        time.sleep(0.2)
        now = time.monotonic() - started
        if "page" not in seen and any(h.path.startswith("/articles/") for h in list(server.hits)):
            seen["page"] = now
        if "document" not in seen and first_document(out):
            seen["document"] = now
        if proc.poll() is not None:
            seen["end"] = now
            break
        if "document" in seen and not args.to_end:
            break
    if proc.poll() is None:
        proc.terminate()
    proc.wait(60)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", choices=("fan-out", "index-tree"), default="fan-out")
    parser.add_argument("--crawl-delay", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=120.0, help="give up after (s)")
    parser.add_argument("--to-end", action="store_true", help="wait for the crawl to end")
    parser.add_argument("--extract", action="store_true", help="extraction on")
    args = parser.parse_args()
    options = SiteOptions(sitemaps=False, feeds=False, crawl_delay=None)
    if args.tree == "fan-out":
        server: TestSiteServer = FanOutServer(
            options, host="127.0.0.4", crawl_delay=args.crawl_delay
        )
    else:
        server = IndexTreeServer(options, host="127.0.0.4")
    with server, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "items.jsonl"
        proc = start_crawl(server, out, args)
        seen = watch(server, proc, out, args)
        hits = list(server.hits)
        documents = out.read_bytes().count(b"\n") if out.exists() else 0
    page = next((h for h in hits if h.path.startswith("/articles/")), None)
    if page is None:
        raise SystemExit(f"no page requested within {args.timeout:g} s")
    before = hits.index(page)
    print(
        f"{args.tree}, {args.crawl_delay:g} s between requests: the first page is request "
        f"{before + 1}, {page.time - hits[0].time:.1f} s after the first request"
    )
    print("  requests before it: " + ", ".join(h.path for h in hits[:before]))
    if "document" in seen:
        print(f"  first document {seen['document']:.1f} s after the command started")
    if "end" in seen:
        sitemaps = sum(h.path.endswith(".xml") for h in hits)
        print(
            f"  the crawl ended by itself {seen['end']:.1f} s after it started, exit status "
            f"{proc.returncode}: {documents} documents, {sitemaps} sitemaps read"
        )


if __name__ == "__main__":
    main()
