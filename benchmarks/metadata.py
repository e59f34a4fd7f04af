"""Title, author and date: how often ours are right beside trafilatura's, per site fold;
the language on pages whose language is known; the cost of both per page.

    python -m benchmarks.metadata --data ../shared/data [--limit 0] [--folds 5] [--rounds 1]

Labelled pages: wcxb-dev (``meta.title``/``author``/``publish_date``) and the trafilatura
set (``meta.title``/``author``/``date``). For every page, trafilatura's answer is
``trafilatura.bare_extraction(with_metadata=True)``'s; ours comes from every source
``metadata.gather`` reads, chosen by decision lists (``metadata_rules.learn_order``). Pages
are split into site folds (hash of the host name); for each fold the lists are learnt on
the other folds and scored on it, so every figure printed per fold and in total is held
out. A value is right when it equals the label: titles and authors compared on their
letters and digits (authors as a set of words, in any order), dates on the day. Only pages
with a label count for that field; "spurious" is the share of pages without one where a
value is given anyway.

The lists learnt on all folds are printed and compared with the shipped ones
(``metadata_rules.ORDERS``): ``--check`` exits 1 when they differ.

Language: pages with a known ``lang`` (cleaneval, dragnet, l3s-gn1, readability: mostly
English) and the trafilatura set, whose ``region`` gives its language (DE/AT -> de, FR ->
fr, Spanish-speaking countries -> es, BRA -> pt, IT -> it; CH and the rest left out): share
right from the text alone, the markup alone and both (``language.detect``). The text is the
labelled text, or trafilatura's where a page has none.

Cost: ms per page of our whole metadata step (``metadata.apply_metadata`` plus
``language.detect``) against ``trafilatura.metadata.extract_metadata`` on the same tree,
interleaved (who goes first alternates), as the ratio of the medians and of the means.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

from scrapy_maintext.document import Document
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.language import detect
from scrapy_maintext.extraction.metadata import apply_metadata, gather, page_language
from scrapy_maintext.extraction.metadata_rules import ORDERS, choose, key, learn_order
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.models.dataset import site_of
from trafilatura import bare_extraction
from trafilatura.metadata import extract_metadata

FIELDS = ("title", "author", "date")
#: The label of each field in each labelled dataset's ``meta``.
LABELS = {
    "wcxb-dev": {"title": "title", "author": "author", "date": "publish_date"},
    "trafilatura": {"title": "title", "author": "author", "date": "date"},
}
LANGUAGE_SETS = ("cleaneval", "dragnet", "l3s-gn1", "readability")
REGION_LANGUAGE = {
    **dict.fromkeys(("DE", "AT"), "de"),
    "FR": "fr",
    "IT": "it",
    "BRA": "pt",
    **dict.fromkeys(
        ("ARG", "BOL", "CHL", "COL", "CRI", "CUB", "ECU", "ESP", "GTM", "HND", "MEX", "NIC"),
        "es",
    ),
    **dict.fromkeys(("PAN", "PER", "PRY", "SLV", "URY", "VEN", "DOM"), "es"),
}
_WORD = re.compile(r"\w+")
_NOT_NAMES = frozenset({"by", "and", "von", "und", "de", "par", "por"})


def right(field: str, value: str | None, gold: str) -> bool:
    if not value:
        return False
    if field == "date":
        return value[:10] == gold[:10]
    if field == "author":
        return _names(value) == _names(gold)
    return key(value) == key(gold)


def _names(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _NOT_NAMES}


def fold_of(site: str, folds: int) -> int:
    return zlib.crc32(b"fold:" + site.encode()) % folds


# -- Reading the pages ------------------------------------------------------------------------


def read(data: Path, name: str, limit: int) -> list[dict[str, Any]]:
    out = []
    with gzip.open(data / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            out.append(json.loads(line))
            if limit and len(out) >= limit:
                break
    return out


def label(value: Any) -> str:
    """A label as one string (a list of authors joined)."""
    if isinstance(value, list):
        return ", ".join(str(v).strip() for v in value if v)
    return str(value or "").strip()


def labelled_page(rec: dict[str, Any], dataset: str) -> dict[str, Any] | None:
    """Both systems' title, author and date for one page, with its labels."""
    tree = parse_page(rec["html"], ExtractOptions()).tree
    if tree is None:
        return None
    url = rec.get("url")
    meta = rec.get("meta") or {}
    gold = {f: label(meta.get(LABELS[dataset][f])) for f in FIELDS}
    _, found = gather(tree, url, orders=None)
    theirs = bare_extraction(tree, url=url, with_metadata=True)
    text = getattr(theirs, "text", None) or ""
    return {
        "dataset": dataset,
        "site": site_of(rec),
        "gold": gold,
        "sources": {f: getattr(found, f) for f in FIELDS},
        "trafilatura": {f: getattr(theirs, f, None) for f in FIELDS},
        "region": meta.get("region"),
        "text": rec.get("text") or text,
        "hint": page_language(tree),
    }


# -- Accuracy ---------------------------------------------------------------------------------


def fit(pages: list[dict[str, Any]], field: str) -> tuple[str, ...]:
    train = [(p["sources"][field], p["gold"][field]) for p in pages if p["gold"][field]]
    return learn_order(train, lambda value, gold: right(field, value, gold))


def score(pages: list[dict[str, Any]], field: str, order: tuple[str, ...]) -> dict[str, float]:
    n = ours = theirs = spurious_ours = spurious_theirs = unlabelled = 0
    for p in pages:
        value = choose(p["sources"][field], order)[0]
        gold = p["gold"][field]
        if gold:
            n += 1
            ours += right(field, value, gold)
            theirs += right(field, p["trafilatura"][field], gold)
        else:
            unlabelled += 1
            spurious_ours += bool(value)
            spurious_theirs += bool(p["trafilatura"][field])
    return {
        "n": n,
        "ours": ours,
        "theirs": theirs,
        "unlabelled": unlabelled,
        "spurious_ours": spurious_ours,
        "spurious_theirs": spurious_theirs,
    }


def _line(label: str, s: dict[str, float]) -> str:
    n, u = max(s["n"], 1), max(s["unlabelled"], 1)
    return (
        f"{label:<28} {s['n']:>5} {s['ours'] / n:>6.3f} {s['theirs'] / n:>6.3f} "
        f"{(s['ours'] - s['theirs']) / n * 100:>+6.1f} "
        f"{s['spurious_ours'] / u:>6.3f} {s['spurious_theirs'] / u:>6.3f}"
    )


def cross_validate(pages: list[dict[str, Any]], folds: int) -> None:
    print("\n== Title, author, date: held-out site folds (lists learnt on the other folds) ==")
    print(
        f"{'fold / set / field':<28} {'pages':>5} {'ours':>6} {'traf.':>6} {'pts':>6} "
        f"{'spur.':>6} {'spur.t':>6}"
    )
    totals: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for k in range(folds):
        test = [p for p in pages if fold_of(p["site"], folds) == k]
        train = [p for p in pages if fold_of(p["site"], folds) != k]
        for field in FIELDS:
            order = fit(train, field)
            for dataset in LABELS:
                s = score([p for p in test if p["dataset"] == dataset], field, order)
                print(_line(f"{k} {dataset} {field}", s))
                for name, value in s.items():
                    totals[(dataset, field)][name] += value
    print("-- all folds, held out --")
    for (dataset, field), s in totals.items():
        print(_line(f"all {dataset} {field}", s))
    print("\n== Decision lists learnt on all folds (shipped in metadata_rules.ORDERS) ==")
    differ = False
    for field in FIELDS:
        order = fit(pages, field)
        same = order == ORDERS[field]
        differ |= not same
        print(f"{field}: {order!r}{'' if same else '   <- differs from the shipped list'}")
    globals()["_ORDERS_DIFFER"] = differ


# -- Language ---------------------------------------------------------------------------------


def language_label(rec: dict[str, Any], dataset: str) -> str | None:
    if dataset == "trafilatura":
        return REGION_LANGUAGE.get((rec.get("meta") or {}).get("region") or "")
    lang = rec.get("lang")
    return lang.split("-")[0].lower() if lang else None


def language_rows(data: Path, limit: int) -> list[tuple[str, str, str, str | None]]:
    """(set, label, text, markup hint) for the pages of known language."""
    rows = []
    for dataset in LANGUAGE_SETS:
        for rec in read(data, dataset, limit):
            label = language_label(rec, dataset)
            tree = parse_page(rec["html"], ExtractOptions()).tree
            if label and tree is not None:
                rows.append((dataset, label, rec.get("text") or "", page_language(tree)))
    return rows


def language_accuracy(rows: list[tuple[str, str, str, str | None]]) -> None:
    print("\n== Language: share right (pages of known language) ==")
    print(f"{'set':<14} {'pages':>5} {'text':>6} {'markup':>6} {'both':>6} {'ms/page':>8}")
    by_set: dict[str, list[tuple[str, str, str | None]]] = defaultdict(list)
    for dataset, label, text, hint in rows:
        by_set[dataset].append((label, text, hint))
    for dataset, items in [*by_set.items(), ("all", [r[1:] for r in rows])]:
        text_ok = markup_ok = both_ok = 0
        spent = 0.0
        for label, text, hint in items:
            text_ok += detect(text).code == label
            markup_ok += hint == label
            t0 = time.perf_counter()
            both_ok += detect(text, hint).code == label
            spent += time.perf_counter() - t0
        n = max(len(items), 1)
        print(
            f"{dataset:<14} {len(items):>5} {text_ok / n:>6.3f} {markup_ok / n:>6.3f} "
            f"{both_ok / n:>6.3f} {spent / n * 1000:>8.2f}"
        )


# -- Cost -------------------------------------------------------------------------------------


def cost(data: Path, limit: int, rounds: int) -> None:
    recs = read(data, "wcxb-dev", limit or 200)
    trees = [
        (parse_page(r["html"], ExtractOptions()).tree, r.get("url"), r.get("text") or "")
        for r in recs
    ]
    trees = [t for t in trees if t[0] is not None]
    detect("warm up")
    times: dict[str, list[float]] = defaultdict(list)

    def ours(tree: Any, url: str | None, text: str) -> None:
        doc = Document(url=url)
        apply_metadata(doc, tree, url)
        detect(text, doc.language)

    def theirs(tree: Any, url: str | None, text: str) -> None:
        extract_metadata(tree, default_url=url)

    for r in range(rounds):
        for i, (tree, url, text) in enumerate(trees):
            runs = [("ours", ours), ("trafilatura", theirs)]
            for name, run in runs if (i + r) % 2 else runs[::-1]:
                t0 = time.perf_counter()
                run(tree, url, text)
                times[name].append((time.perf_counter() - t0) * 1000)
    med = {k: statistics.median(v) for k, v in times.items()}
    mean = {k: statistics.fmean(v) for k, v in times.items()}
    print(
        f"\n== Cost: ms per page, {len(trees)} wcxb-dev pages x {rounds} round(s), interleaved =="
    )
    for name in times:
        print(f"{name:<12} median {med[name]:7.2f}  mean {mean[name]:7.2f}")
    print(
        f"ours / trafilatura: median ratio {med['ours'] / med['trafilatura']:.2f}, "
        f"mean ratio {mean['ours'] / mean['trafilatura']:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--limit", type=int, default=0, help="pages per set (0: all)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1, help="rounds of the cost part")
    parser.add_argument("--cache", type=Path, help="keep the pages' values in this file")
    parser.add_argument("--check", action="store_true", help="exit 1 if the lists differ")
    parser.add_argument("--part", choices=("all", "fields", "language", "cost"), default="all")
    args = parser.parse_args()
    pages = load_labelled(args) if args.part in ("all", "fields", "language") else []
    if args.part in ("all", "fields"):
        cross_validate(pages, args.folds)
    if args.part in ("all", "language"):
        rows = language_rows(args.data, args.limit)
        for p in pages:
            language = REGION_LANGUAGE.get(p["region"] or "")
            if language and p["dataset"] == "trafilatura":
                rows.append(("trafilatura", language, p["text"], p["hint"]))
        language_accuracy(rows)
    if args.part in ("all", "cost"):
        cost(args.data, args.limit, args.rounds)
    if args.check and globals().get("_ORDERS_DIFFER"):
        sys.exit(1)


def load_labelled(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.cache and args.cache.exists():
        return list(json.loads(args.cache.read_text()))
    pages = []
    for dataset in LABELS:
        for rec in read(args.data, dataset, args.limit):
            page = labelled_page(rec, dataset)
            if page is not None:
                pages.append(page)
    if args.cache:
        args.cache.write_text(json.dumps(pages))
    return pages


if __name__ == "__main__":
    main()
