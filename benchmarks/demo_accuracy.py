"""Token F1 of crawled items against the demo site's ground truth, end to end.

    python -m benchmarks.demo_accuracy [--spider sitemap] [--engine auto] [--no-site-memory]

Serves the demo site on 127.0.0.1, runs ``scrapy crawl`` against it through the extraction
pipeline and scores every article's ``text`` against the text the page was generated from
(token F1 as in ``models.studies.evaluate``: bags of lowercased ``\\w+`` tokens, per page,
averaged).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from scrapy_maintext.demo.server import SiteServer
from scrapy_maintext.demo.site import SiteOptions
from scrapy_maintext.models.metrics import token_f1, tokens

ROOT = Path(__file__).resolve().parent.parent


def crawl(
    base_url: str, out: Path, spider: str, engine: str, memory: bool = True
) -> list[dict[str, object]]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider, "-a", f"domain={base_url}"]
    cmd += ["-O", str(out), "-s", "DOWNLOAD_DELAY=0.05", "-s", "LOG_LEVEL=WARNING"]
    cmd += ["-s", f"EXTRACT_ENGINE={engine}", "-s", f"SITE_MEMORY_ENABLED={memory}"]
    subprocess.run(cmd, cwd=ROOT, check=True)
    return [json.loads(line) for line in out.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spider", default="sitemap", choices=("sitemap", "feed"))
    parser.add_argument("--engine", default="auto", choices=("auto", "neural", "trafilatura"))
    parser.add_argument("--articles", type=int, default=12)
    parser.add_argument("--no-site-memory", action="store_true", help="SITE_MEMORY_ENABLED off")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        SiteServer(SiteOptions(articles=args.articles, crawl_delay=None)) as server,
    ):
        assert server.site is not None
        truth = {f"{server.base_url}/articles/{a.slug}.html": a for a in server.site.articles}
        out = Path(tmp) / "items.jsonl"
        items = crawl(server.base_url, out, args.spider, args.engine, not args.no_site_memory)
    scores = []
    for item in items:
        article = truth.get(str(item["url"]))
        if article is not None:
            f1 = token_f1(tokens(str(item.get("text") or "")), tokens(article.main_text()))
            scores.append(f1)
            print(f"{f1:.3f}  {item.get('extractor')}  {item['url']}")
    missing = len(truth) - len(scores)
    print(
        f"\n{args.spider}/{args.engine}: {len(scores)} articles, {missing} missing, "
        f"mean token F1 {statistics.mean(scores) if scores else 0.0:.3f}"
    )


if __name__ == "__main__":
    main()
