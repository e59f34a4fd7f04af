"""Token precision, recall and F1 with and without the site memory, on pages grouped by host.

    python -m benchmarks.site_memory_accuracy --data ../shared/data [--engine auto] [--grid]

Every page of l3s-gn1, wcxb-dev and cleaneval is extracted once (``extract_page``, the
crawl's worker path); then each host's pages go, in dataset order, through
:class:`SiteMemories` exactly as the crawl feeds it (warm-up buffer, flush at the end), and
through a memory without warm-up (every page decided on arrival) to show the cold start.
Scores are means over pages of token P/R/F1 (``models.metrics``), pages with a ground truth
the static HTML can reproduce. "held-out" sites are those the neural model never saw
(``models.dataset.site_split``); the decision rule's two numbers were chosen with
``--grid`` on the other ("train") sites.
"""

from __future__ import annotations

import argparse
import copy
import pickle
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from scrapy_maintext.extraction import ExtractOptions
from scrapy_maintext.extraction.core import PageResult, extract_page
from scrapy_maintext.models.dataset import iter_pages, usable_for_f1
from scrapy_maintext.models.metrics import prf, tokens
from scrapy_maintext.site_memory.memory import SiteMemoryOptions
from scrapy_maintext.site_memory.registry import Pending, SiteMemories, SiteMemoriesOptions

DATASETS = ("l3s-gn1", "wcxb-dev", "cleaneval")
#: Positions in a site's page order reported for the first-pages effect.
FIRST_PAGES = 5
GRID_MIN_PAGES = (2, 3, 4)
GRID_MIN_SHARE = (0.3, 0.5, 0.7, 0.8, 0.9)
#: A block counts as content for the oracles when this share of its tokens is in the gold.
BLOCK_GOLD_SHARE = 0.5


@dataclass
class Sample:
    id: str
    dataset: str
    site: str
    split: str
    gold: list[str]
    result: PageResult
    position: int = 0
    site_pages: int = 0


@dataclass
class Scores:
    p: list[float] = field(default_factory=list)
    r: list[float] = field(default_factory=list)
    f: list[float] = field(default_factory=list)
    changed: int = 0

    def add(self, text: str, gold: list[str], changed: bool) -> None:
        p, r, f = prf(tokens(text), gold)
        self.p.append(p)
        self.r.append(r)
        self.f.append(f)
        self.changed += changed

    def row(self) -> str:
        if not self.f:
            return "| - | - | - |"
        mean = statistics.fmean
        return f"| {mean(self.p):.4f} | {mean(self.r):.4f} | {mean(self.f):.4f} |"


def load(data: Path, options: ExtractOptions, cache: Path | None) -> list[Sample]:
    if cache is not None and cache.exists():
        return list(pickle.loads(cache.read_bytes()))
    samples = []
    for page in iter_pages(data, DATASETS):
        if not usable_for_f1(page) or not page.url:
            continue
        result = extract_page(page.html, page.url, options)
        gold = tokens(page.text or "")
        samples.append(Sample(page.id, page.dataset, page.site, page.split, gold, result))
    by_site = group(samples)
    for pages in by_site.values():
        for i, sample in enumerate(pages):
            sample.position, sample.site_pages = i + 1, len(pages)
    if cache is not None:
        cache.write_bytes(pickle.dumps(samples))
    return samples


def group(samples: Iterable[Sample]) -> dict[tuple[str, str], list[Sample]]:
    by_site: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for sample in samples:
        by_site[(sample.dataset, sample.site)].append(sample)
    return by_site


def decide(samples: list[Sample], options: SiteMemoriesOptions) -> dict[str, tuple[str, int]]:
    """Text and blocks removed per page id, one host after the other through SiteMemories."""
    out: dict[str, tuple[str, int]] = {}
    for pages in group(samples).values():
        memories: SiteMemories[str] = SiteMemories(options)
        decided = []
        for s in pages:
            doc = copy.deepcopy(s.result.doc)
            decided += memories.arrive(Pending(s.site, doc, s.result.signatures, s.id))
        decided += memories.flush()
        for d in decided:
            out[d.pending.token] = (d.pending.doc.text, d.outcome.removed)
    return out


def bucket(sample: Sample) -> str:
    if sample.site_pages == 1:
        return "sites with 1 page"
    if sample.site_pages == 2:
        return "sites with 2 pages"
    return "sites with 3-12 pages"


def report(samples: list[Sample], options: SiteMemoriesOptions) -> None:
    with_memory = decide(samples, options)
    online = decide(samples, SiteMemoriesOptions(site=options.site, warmup=0))
    groups: dict[str, tuple[Scores, Scores]] = defaultdict(lambda: (Scores(), Scores()))
    for s in samples:
        text, removed = with_memory[s.id]
        for name in (bucket(s), f"{bucket(s)}, {s.dataset}", f"{bucket(s)}, {s.split} sites"):
            groups[name][0].add(s.result.doc.text, s.gold, False)
            groups[name][1].add(text, s.gold, removed > 0)
    print(
        "| pages | n | changed | P without | R without | F1 without | P with | R with | F1 with |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in sorted(groups):
        without, with_ = groups[name]
        print(f"| {name} | {len(without.f)} | {with_.changed} {without.row()}{with_.row()[1:]}")
    bounds(samples, with_memory)
    first_pages(samples, with_memory, online)
    per_site(samples, with_memory)


def _in_gold(text: str, gold: Counter[str]) -> bool:
    words = tokens(text)
    return sum(1 for w in words if gold[w]) >= BLOCK_GOLD_SHARE * max(1, len(words))


def site_counts(samples: list[Sample]) -> dict[str, Counter[int]]:
    """Per page id: on how many pages of its site each block signature occurs."""
    out: dict[str, Counter[int]] = {}
    for pages in group(samples).values():
        counts: Counter[int] = Counter()
        for s in pages:
            if s.result.signatures is not None:
                counts.update(s.result.signatures.page.tolist())
        for s in pages:
            out[s.id] = counts
    return out


def _repeated(s: Sample, counts: Counter[int]) -> list[bool]:
    """For each kept block: whether its signature occurs on another page of its site."""
    if s.result.signatures is None:
        return [False] * len(s.result.doc.body)
    return [bool(sig) and counts[sig] >= 2 for sig in s.result.signatures.body.tolist()]


def bounds(samples: list[Sample], with_memory: dict) -> None:
    """How much any block-removal rule could gain: oracles that know the ground truth.

    The memory-reachable oracle is the ceiling of what this memory's signatures can tell a
    single-page extractor about its kept blocks: it removes every non-content block whose
    signature occurs on another page of the site (all of the site's pages here known in
    advance), and no other. A block on one page only looks the same to the memory as
    content.
    """
    counts = site_counts(samples)
    rows = [Scores() for _ in range(5)]
    for s in samples:
        if s.site_pages < 3:
            continue
        gold = Counter(s.gold)
        kept = {b.text for b in s.result.doc.body if b.text in with_memory[s.id][0].split("\n")}
        body = s.result.doc.body
        content = [_in_gold(b.text, gold) for b in body]
        repeated = _repeated(s, counts[s.id])
        template_oracle = [
            b.text for b, c in zip(body, content, strict=True) if b.text in kept or c
        ]
        reachable = [b.text for b, c, r in zip(body, content, repeated, strict=True) if c or not r]
        perfect = [b.text for b, c in zip(body, content, strict=True) if c]
        rows[0].add(s.result.doc.text, s.gold, False)
        rows[1].add(with_memory[s.id][0], s.gold, False)
        rows[2].add("\n".join(template_oracle), s.gold, False)
        rows[3].add("\n".join(reachable), s.gold, False)
        rows[4].add("\n".join(perfect), s.gold, False)
    print("\nUpper bounds, sites with 3-12 pages (oracles use the ground truth):")
    print("| output | P | R | F1 |")
    print("|---|---|---|---|")
    names = (
        "without memory",
        "with memory",
        "memory removes only its non-content blocks (template oracle)",
        "every non-content block found on another page of the site removed "
        "(memory-reachable oracle)",
        "every non-content block removed (perfect-precision oracle)",
    )
    for name, row in zip(names, rows, strict=True):
        print(f"| {name} {row.row()}")


def first_pages(samples: list[Sample], warm: dict, online: dict) -> None:
    print("\nFirst-pages effect, sites with 3-12 pages (F1 by page position in the site):")
    print("| position | n | without | with warm-up | without warm-up (decided on arrival) |")
    print("|---|---|---|---|---|")
    for pos in range(1, FIRST_PAGES + 2):
        chosen = [s for s in samples if s.site_pages >= 3 and _at(s.position, pos)]
        rows = [Scores(), Scores(), Scores()]
        for s in chosen:
            rows[0].add(s.result.doc.text, s.gold, False)
            rows[1].add(warm[s.id][0], s.gold, False)
            rows[2].add(online[s.id][0], s.gold, False)
        label = str(pos) if pos <= FIRST_PAGES else f">{FIRST_PAGES}"
        cells = " | ".join(f"{statistics.fmean(r.f):.4f}" if r.f else "-" for r in rows)
        print(f"| {label} | {len(chosen)} | {cells} |")


def _at(position: int, pos: int) -> bool:
    """Whether a page at ``position`` belongs in row ``pos`` (the last row: all later)."""
    return position == pos or (pos > FIRST_PAGES and position > FIRST_PAGES)


def per_site(samples: list[Sample], with_memory: dict) -> None:
    print("\nPer site (3-12 pages): mean token F1 without -> with, blocks removed")
    print("| dataset | site | split | pages | F1 without | F1 with | delta | blocks removed |")
    print("|---|---|---|---|---|---|---|---|")
    for (dataset, site), pages in sorted(group(samples).items()):
        if len(pages) < 3:
            continue
        before = statistics.fmean(prf(tokens(s.result.doc.text), s.gold)[2] for s in pages)
        after = statistics.fmean(prf(tokens(with_memory[s.id][0]), s.gold)[2] for s in pages)
        removed = sum(with_memory[s.id][1] for s in pages)
        print(
            f"| {dataset} | {site} | {pages[0].split} | {len(pages)} | {before:.4f} | "
            f"{after:.4f} | {after - before:+.4f} | {removed} |"
        )


def grid(samples: list[Sample], warmup: int) -> None:
    """F1 gain on sites with 3-12 pages for each (min_pages, min_share), per split."""
    multi = [s for s in samples if s.site_pages >= 3]
    print("| min_pages | min_share | split | F1 gain | P gain | R gain |")
    print("|---|---|---|---|---|---|")
    for min_pages in GRID_MIN_PAGES:
        for share in GRID_MIN_SHARE:
            site = SiteMemoryOptions(min_pages=min_pages, min_share=share)
            out = decide(multi, SiteMemoriesOptions(site=site, warmup=warmup))
            for split in ("train", "test"):
                gains = [[], [], []]
                for s in multi:
                    if s.split != split:
                        continue
                    before = prf(tokens(s.result.doc.text), s.gold)
                    after = prf(tokens(out[s.id][0]), s.gold)
                    for k in range(3):
                        gains[k].append(after[k] - before[k])
                p, r, f = (statistics.fmean(g) for g in gains)
                print(f"| {min_pages} | {share} | {split} | {f:+.4f} | {p:+.4f} | {r:+.4f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/data", type=Path)
    parser.add_argument("--engine", default="auto")
    parser.add_argument("--cache", type=Path, default=None, help="pickle of extractions")
    parser.add_argument("--grid", action="store_true", help="also sweep the decision rule")
    args = parser.parse_args()
    samples = load(args.data, ExtractOptions(engine=args.engine), args.cache)
    options = SiteMemoriesOptions()
    print(f"engine={args.engine} pages={len(samples)} {options}\n")
    report(samples, options)
    if args.grid:
        print()
        grid(samples, options.warmup)


if __name__ == "__main__":
    main()
