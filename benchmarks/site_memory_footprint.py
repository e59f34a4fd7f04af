"""Memory and time of the site memory for a crawl of many sites.

    python -m benchmarks.site_memory_footprint [--sites 10000] [--pages 30] [--max-sites N]

Feeds :class:`SiteMemories` the block signatures of a synthetic crawl, the way the crawl's
pipeline does (sites interleaved, every page through the warm-up buffers): each site has a
template of 50 to 300 blocks, each page adds 20 to 200 blocks of its own. Reports the bytes
of the signature arrays, how much the process's resident memory grew,
the JSON snapshot written to JOBDIR, and the time per page in the crawl process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

import numpy as np
from scrapy_maintext.document import Block, Document
from scrapy_maintext.extraction.fingerprint_parts import fingerprint_parts
from scrapy_maintext.site_memory.memory import PageSignatures
from scrapy_maintext.site_memory.registry import Pending, SiteMemories, SiteMemoriesOptions

TEMPLATE_BLOCKS = (50, 300)
PAGE_BLOCKS = (20, 200)
#: Templates rotate a little: this share of a page's template blocks is left out.
TEMPLATE_DROPOUT = 0.1
PARAGRAPH = "words of one block of text as the extractor kept it from the page"


def rss() -> int:
    """Resident set size of this process in bytes (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def page_signatures(rng: np.random.Generator, template: np.ndarray) -> PageSignatures:
    own = rng.integers(1, 2**63, size=int(rng.integers(*PAGE_BLOCKS)), dtype=np.uint64)
    shown = template[rng.random(len(template)) > TEMPLATE_DROPOUT]
    sigs = np.unique(np.concatenate([shown, own]))
    return PageSignatures(sigs, np.concatenate([shown[:5], own[:20]]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sites", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=30, help="pages per site")
    parser.add_argument("--max-sites", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    templates = [
        rng.integers(1, 2**63, size=random.Random(i).randint(*TEMPLATE_BLOCKS), dtype=np.uint64)
        for i in range(args.sites)
    ]
    options = SiteMemoriesOptions()
    if args.max_sites:
        options = SiteMemoriesOptions(max_sites=args.max_sites)
    memories: SiteMemories[int] = SiteMemories(options)
    baseline = rss()
    spent, pages, removed = 0.0, 0, 0
    # Sites interleaved, as many sites crawled in parallel arrive.
    for _ in range(args.pages):
        for site in range(args.sites):
            page = page_signatures(rng, templates[site])
            doc = Document(body=[Block("p", f"{i} {PARAGRAPH}") for i in range(len(page.body))])
            # What the extraction worker computes with the signatures.
            page.parts = fingerprint_parts(doc.body)
            started = time.perf_counter()
            decided = memories.arrive(Pending(f"site{site}.example", doc, page, pages, 1000))
            spent += time.perf_counter() - started
            removed += sum(d.outcome.removed for d in decided)
            pages += 1
    memories.flush()
    grown = rss() - baseline
    snapshot = len(json.dumps(memories.state()))
    blocks = sum(len(m) for m in memories.memories.values())
    print(f"{args.sites} sites x {args.pages} pages = {pages} pages; {options}")
    print(f"sites tracked {len(memories)}, evicted {memories.evicted}")
    print(f"signatures kept {blocks} ({blocks / len(memories):.0f} per site)")
    print(f"signature arrays {memories.nbytes / 2**20:.1f} MiB")
    print(f"resident memory grown while crawling {grown / 2**20:.1f} MiB")
    print(f"JOBDIR snapshot {snapshot / 2**20:.1f} MiB")
    print(f"time per page in the crawl process {spent / pages * 1e6:.0f} us")


if __name__ == "__main__":
    main()
