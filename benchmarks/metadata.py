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
value is given anyway. Columns with "~" read a value leniently (``contained``: a title
within the label or the label within it, "Story | Site" for "Story"; an author's names a
subset of the label's or the other way round): the rules are learnt on the strict reading.

The lists learnt on all folds are printed and compared with the shipped ones
(``metadata_rules.RULES``): ``--check`` exits 1 when they differ.

Language: pages with a known ``lang`` (cleaneval, dragnet, l3s-gn1, readability: mostly
English) and the trafilatura set, whose ``region`` gives its language (DE/AT -> de, FR ->
fr, Spanish-speaking countries -> es, BRA -> pt, IT -> it; CH and the rest left out): share
right from the text alone, the markup alone and both (``language.detect``), then "both" for
a range of ``HINT_MIN_PROBABILITY`` (0: the markup always wins when there is one; above 1:
the text alone). The text is the labelled text, or trafilatura's where a page has none.

Cost: ms per page of our whole metadata step (``metadata.apply_metadata`` plus
``language.detect``) against ``trafilatura.metadata.extract_metadata`` on the same tree,
interleaved (who goes first alternates), as the ratio of the medians and of the means; and
what the search for days written beside the heading (``textdates.heading_dates``) takes of it.
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
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.fields.language import HINT_MIN_PROBABILITY, detect
from scrapy_maintext.fields.metadata import (
    add_fallback,
    apply_metadata,
    gather,
    page_language,
)
from scrapy_maintext.fields.metadata_rules import (
    LAST_RESORT,
    RULES,
    Rule,
    key,
    learn_order,
    learn_weights,
)
from scrapy_maintext.fields.pagedate import real_date
from scrapy_maintext.fields.structured import add_byline, page_candidates
from scrapy_maintext.fields.textdates import heading_dates
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
#: Thresholds of the markup's language tried (``language.HINT_MIN_PROBABILITY``).
HINT_MINIMA = (0.0, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.01)
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


def contained(field: str, value: str | None, gold: str) -> bool:
    """The lenient reading: one title (author's names) within the other; dates the same."""
    if not value:
        return False
    if field == "date":
        return value[:10] == gold[:10]
    if field == "author":
        ours, theirs = _names(value), _names(gold)
        return bool(ours) and (ours <= theirs or theirs <= ours)
    ours_key, gold_key = key(value), key(gold)
    return bool(ours_key) and (ours_key in gold_key or gold_key in ours_key)


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


def slow_values(rec: dict[str, Any], tree: Any) -> dict[str, Any]:
    """What takes time on a page (kept in ``--cache``): trafilatura's title, author and date
    by ``bare_extraction`` and by our metadata step (the source "trafilatura"), its text."""
    url = rec.get("url")
    meta, _ = gather(tree, url, rules=None)
    theirs = bare_extraction(tree, url=url, with_metadata=True)
    return {
        "trafilatura": {f: getattr(theirs, f, None) for f in FIELDS},
        "fallback": {
            "title": meta.title,
            "author": meta.author,
            "date": real_date(meta.date, tree, url),
        },
        "text": getattr(theirs, "text", None) or "",
    }


def labelled_page(
    rec: dict[str, Any], dataset: str, cache: dict[str, Any]
) -> dict[str, Any] | None:
    """Both systems' title, author and date for one page, with its labels."""
    tree = parse_page(rec["html"], ExtractOptions()).tree
    if tree is None:
        return None
    url = rec.get("url")
    meta = rec.get("meta") or {}
    if rec["id"] not in cache:
        cache[rec["id"]] = slow_values(rec, tree)
    slow = cache[rec["id"]]
    found = page_candidates(tree, url)
    add_byline(tree, found)
    add_fallback(found, url, **slow["fallback"])
    return {
        "id": rec["id"],
        "dataset": dataset,
        "site": site_of(rec),
        "gold": {f: label(meta.get(LABELS[dataset][f])) for f in FIELDS},
        "sources": {f: getattr(found, f) for f in FIELDS},
        "trafilatura": slow["trafilatura"],
        "region": meta.get("region"),
        "text": rec.get("text") or slow["text"],
        "hint": page_language(tree),
    }


# -- Accuracy ---------------------------------------------------------------------------------


METHODS = ("list", "vote")
#: The vote, which needs trafilatura's answer on every page (a decision list lets its author
#: and date searches be skipped where a source before it answers), must be this many points
#: more often right on held-out wcxb-dev pages to be chosen.
VOTE_MARGIN = 1.0


def fit(pages: list[dict[str, Any]], field: str, method: str) -> Rule:
    """The rule of ``method`` learnt from ``pages`` (those with a label for ``field``)."""
    train = [(p["sources"][field], p["gold"][field]) for p in pages if p["gold"][field]]

    def is_right(value: str, gold: str) -> bool:
        return right(field, value, gold)

    order = learn_order(train, is_right)
    weights = learn_weights(train, is_right) if method == "vote" else {}
    return Rule(method, order, weights, LAST_RESORT.get(field))


def score(pages: list[dict[str, Any]], field: str, rule: Rule) -> dict[str, float]:
    n = ours = theirs = spurious_ours = spurious_theirs = unlabelled = 0
    ours_in = theirs_in = 0
    for p in pages:
        value = rule.pick(p["sources"][field])[0]
        gold = p["gold"][field]
        if gold:
            n += 1
            ours += right(field, value, gold)
            theirs += right(field, p["trafilatura"][field], gold)
            ours_in += contained(field, value, gold)
            theirs_in += contained(field, p["trafilatura"][field], gold)
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
        "ours_in": ours_in,
        "theirs_in": theirs_in,
    }


def _line(label: str, s: dict[str, float]) -> str:
    n, u = max(s["n"], 1), max(s["unlabelled"], 1)
    return (
        f"{label:<30} {s['n']:>5.0f} {s['ours'] / n:>6.3f} {s['theirs'] / n:>6.3f} "
        f"{(s['ours'] - s['theirs']) / n * 100:>+6.1f} "
        f"{s['spurious_ours'] / u:>6.3f} {s['spurious_theirs'] / u:>6.3f} "
        f"{s['ours_in'] / n:>6.3f} {s['theirs_in'] / n:>6.3f} "
        f"{(s['ours_in'] - s['theirs_in']) / n * 100:>+6.1f}"
    )


_COLUMNS = ("pages", "ours", "traf.", "pts", "spur.", "spur.t", "ours~", "traf~", "pts~")
HEADER = f"{'fold set field':<30} " + " ".join(f"{c:>6}" for c in _COLUMNS)


def held_out(pages: list[dict[str, Any]], folds: int, method: str, show: bool) -> dict:
    """Scores of ``method`` on every fold, learnt on the others; the totals."""
    totals: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for k in range(folds):
        test = [p for p in pages if fold_of(p["site"], folds) == k]
        train = [p for p in pages if fold_of(p["site"], folds) != k]
        for field in FIELDS:
            rule = fit(train, field, method)
            for dataset in LABELS:
                s = score([p for p in test if p["dataset"] == dataset], field, rule)
                if show:
                    print(_line(f"{k} {dataset} {field}", s))
                for name, value in s.items():
                    totals[(dataset, field)][name] += value
    return totals


def cross_validate(pages: list[dict[str, Any]], folds: int) -> bool:
    """Print the held-out scores and the rules learnt on all folds; whether the rules
    shipped in ``metadata_rules.RULES`` differ from them."""
    results = {}
    for method in METHODS:
        print(f"\n== {method}: held-out site folds (rules learnt on the other folds) ==")
        print(HEADER)
        results[method] = held_out(pages, folds, method, show=True)
        print("-- all folds, held out --")
        for (dataset, field), s in results[method].items():
            print(_line(f"all {dataset} {field}", s))
    print(
        "\n== Chosen per field: the vote where it is VOTE_MARGIN points more often right than"
        " the list on held-out wcxb-dev pages =="
    )
    print(HEADER)
    differ = False
    chosen = {}
    for field in FIELDS:
        wcxb = {m: results[m][("wcxb-dev", field)] for m in METHODS}
        gain = (wcxb["vote"]["ours"] - wcxb["list"]["ours"]) / max(wcxb["list"]["n"], 1) * 100
        best = "vote" if gain >= VOTE_MARGIN else "list"
        for dataset in LABELS:
            print(_line(f"{best} {dataset} {field}", results[best][(dataset, field)]))
        chosen[field] = fit(pages, field, best)
        differ |= chosen[field] != RULES[field]
    print("\n== Rules learnt on all folds (metadata_rules.RULES) ==")
    for field, rule in chosen.items():
        mark = "" if rule == RULES[field] else "   # differs from the shipped rule"
        print(f"    {field!r}: {rule!r},{mark}")
    return differ


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
    print(
        f"-- 'both' by the text's least probability for the markup's language (shipped: "
        f"{HINT_MIN_PROBABILITY}) --"
    )
    for hint_min in HINT_MINIMA:
        ok = {name: 0 for name in (*by_set, "all")}
        for dataset, label, text, hint in rows:
            hit = detect(text, hint, hint_min).code == label
            ok[dataset] += hit
            ok["all"] += hit
        shares = "  ".join(
            f"{name} {ok[name] / max(len(by_set.get(name, rows)), 1):.3f}" for name in ok
        )
        print(f"{hint_min:<8g} {shares}")


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
            t0 = time.perf_counter()
            heading_dates(tree)
            times["text dates"].append((time.perf_counter() - t0) * 1000)
    med = {k: statistics.median(v) for k, v in times.items()}
    mean = {k: statistics.fmean(v) for k, v in times.items()}
    print(
        f"\n== Cost: ms per page, {len(trees)} wcxb-dev pages x {rounds} round(s), interleaved =="
    )
    for name in times:
        print(f"{name:<12} median {med[name]:7.2f}  mean {mean[name]:7.2f}")
    print("(text dates: the search for days written beside the heading, part of ours)")
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
    differ = False
    if args.part in ("all", "fields"):
        differ = cross_validate(pages, args.folds)
    if args.part in ("all", "language"):
        rows = language_rows(args.data, args.limit)
        for p in pages:
            language = REGION_LANGUAGE.get(p["region"] or "")
            if language and p["dataset"] == "trafilatura":
                rows.append(("trafilatura", language, p["text"], p["hint"]))
        language_accuracy(rows)
    if args.part in ("all", "cost"):
        cost(args.data, args.limit, args.rounds)
    if args.check and differ:
        sys.exit(1)


def load_labelled(args: argparse.Namespace) -> list[dict[str, Any]]:
    cache: dict[str, Any] = {}
    if args.cache and args.cache.exists():
        cache = json.loads(args.cache.read_text())
    pages = []
    for dataset in LABELS:
        for rec in read(args.data, dataset, args.limit):
            page = labelled_page(rec, dataset, cache)
            if page is not None:
                pages.append(page)
    if args.cache:
        args.cache.write_text(json.dumps(cache))
    return pages


if __name__ == "__main__":
    main()
