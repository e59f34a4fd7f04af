"""Articles as structures: authors, images (with captions and credits), cover, topics and
dates beside trafilatura's, in one run, on fundus-dev; authors on wcxb-dev.

    python -m benchmarks.article_structure --data ../shared/data [--limit 0] [--folds 5]
        [--report 3,4] [--wcxb-limit 0] [--no-wcxb] [--show]

fundus-dev: every page is extracted by ``scrapy_maintext.extract(html, url)`` (the product's
defaults) and by ``trafilatura.bare_extraction(html, url=url, with_metadata=True,
include_images=True)``, and both are scored against what fundus's per-publisher parsers expect.
Publishers fall in ``--folds`` folds (``models.dataset.site_fold`` of the host name): the
image, author and date rules were written looking at folds 0-2 only; the figures are printed
for the folds of ``--report`` (held out) and for all pages.

* authors exact: the set of names equals the label's (names compared on letters and digits);
* cover right, per page: of pages whose label marks a cover, the share whose cover
  (``image``) is a rendition of one of them (fundus marks every picture above the first
  paragraph a cover: 22 on one held-out page); per cover: of the label's cover pictures, the
  share ours is a rendition of (one cover a page can be right for one of them only);
* image recall / precision: of the label's pictures, the share found; of ours, the share that
  are the label's (a rendition of the same picture counts: same URL, or the same file name
  once sizes and formats are set aside);
* caption right: of found pictures the label captions, the share whose caption has word F1 at
  least 0.8 with the label's; credit right: the share of found pictures with a labelled credit
  whose credit has the label's names (word F1 at least 0.8 against them joined);
* topics: Jaccard of tags + categories with the label's topics (case-folded), pages with
  topics; and of the tags alone (fundus's topics are the publisher's keywords: on the tuning
  folds no page's categories held one of them where its tags held none);
* date to the minute: of pages whose label has a time, the share whose date gives the same
  instant to the minute (a date without time never does); the day: the same day.

wcxb-dev: the author is chosen by the decision list learnt without the page's site fold
(``benchmarks.metadata``'s procedure) and split into names (``fields.people``); right when
its set of name words equals the label's, beside trafilatura's author.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

from scrapy_maintext.document import Document
from scrapy_maintext.models.dataset import site_fold, site_of
from scrapy_maintext.pictures.images import same_picture as is_rendition

_WORD = re.compile(r"\w+")
#: Sizes, formats and rendition words that differ between renditions of one picture.
CAPTION_F1 = 0.8


def words(text: str | None) -> list[str]:
    return _WORD.findall((text or "").casefold())


def word_f1(ours: str | None, gold: str | None) -> float:
    a, b = words(ours), words(gold)
    if not a or not b:
        return 0.0
    common = sum(min(a.count(w), b.count(w)) for w in set(a))
    if not common:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)


def name_key(name: str) -> str:
    return "".join(words(name))


def same_picture(url: str, gold_urls: list[str]) -> bool:
    """Whether ``url`` is a rendition of the picture whose renditions are ``gold_urls``."""
    return any(is_rendition(url, gold) for gold in gold_urls)


def instant(value: str | None) -> datetime.datetime | None:
    """An aware datetime from an ISO date with time and zone; None without a time."""
    if not value or len(value) < 16:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(datetime.UTC).replace(second=0, microsecond=0)


# -- One page ---------------------------------------------------------------------------------


def ours(rec: dict[str, Any]) -> dict[str, Any]:
    from scrapy_maintext import extract

    doc: Document = extract(rec["html"], rec.get("url"))
    return {
        "authors": doc.authors,
        "cover": doc.image,
        "images": [(i.url, i.caption, i.credit) for i in doc.images],
        "topics": doc.categories + doc.tags,
        "tags": doc.tags,
        "date": doc.date,
        "date_modified": getattr(doc, "date_modified", None),
    }


def theirs(rec: dict[str, Any]) -> dict[str, Any]:
    from trafilatura import bare_extraction

    doc = bare_extraction(
        rec["html"],
        url=rec.get("url"),
        with_metadata=True,
        include_images=True,
        date_extraction_params={"outputformat": "%Y-%m-%dT%H:%M:%S%z", "original_date": True},
    )
    if doc is None or isinstance(doc, dict):
        return {"authors": [], "cover": None, "images": [], "topics": [], "tags": [], "date": None}
    images = []
    body = getattr(doc, "body", None)
    for graphic in body.iter("graphic") if body is not None else ():
        src = graphic.get("src")
        if src:
            images.append((src, graphic.get("title") or graphic.get("alt"), None))
    author = doc.author or ""
    return {
        "authors": [a.strip() for a in author.split(";") if a.strip()],
        "cover": doc.image,
        "images": images,
        "topics": list(doc.categories or []) + list(doc.tags or []),
        "tags": list(doc.tags or []),
        "date": _iso(doc.date),
    }


def _iso(value: str | None) -> str | None:
    """trafilatura's "2025-06-30T15:59:30+0200" as ISO 8601 with a colon in the zone."""
    if value and re.search(r"[+-]\d{4}$", value):
        return value[:-2] + ":" + value[-2:]
    return value


def score_page(rec: dict[str, Any], got: dict[str, Any]) -> dict[str, float]:
    meta = rec["meta"]
    out: dict[str, float] = defaultdict(float)
    gold_authors = meta.get("author") or []
    if gold_authors:
        out["authors_n"] = 1
        out["authors"] = {name_key(a) for a in got["authors"]} == {
            name_key(a) for a in gold_authors
        }
    gold_images = meta.get("images") or []
    unused = list(got["images"])
    for image in gold_images:
        # One of ours stands for one picture of the label at most.
        match = next((g for g in unused if same_picture(g[0], image["urls"])), None)
        if match is not None:
            unused.remove(match)
        out["recall_n"] += 1
        out["recall"] += match is not None
        if match is not None and image.get("caption"):
            out["caption_n"] += 1
            out["caption"] += word_f1(match[1], image["caption"]) >= CAPTION_F1
        if match is not None and image.get("credit"):
            out["credit_n"] += 1
            out["credit"] += word_f1(match[2], " ".join(image["credit"])) >= CAPTION_F1
        if image.get("cover"):
            out["cover_n"] += 1
            out["cover"] += bool(got["cover"]) and same_picture(got["cover"], image["urls"])
    covers = [image["urls"] for image in gold_images if image.get("cover")]
    if covers:
        out["cover_page_n"] = 1
        out["cover_page"] = bool(got["cover"]) and any(
            same_picture(got["cover"], c) for c in covers
        )
    if gold_images:
        for url, _, _ in got["images"]:
            out["precision_n"] += 1
            out["precision"] += any(same_picture(url, g["urls"]) for g in gold_images)
    topics = {t.casefold().strip() for t in meta.get("topics") or []}
    if topics:
        found = {t.casefold().strip() for t in got["topics"]}
        out["topics_n"] = 1
        out["topics"] = len(found & topics) / len(found | topics)
        tags = {t.casefold().strip() for t in got["tags"]}
        out["tags_n"] = 1
        out["tags"] = len(tags & topics) / len(tags | topics)
    gold_instant = instant((meta.get("publish_date") or "").replace(" ", "T"))
    if gold_instant is not None:
        out["minute_n"] = 1
        out["minute"] = instant(got["date"]) == gold_instant
        out["day_n"] = 1
        out["day"] = (got["date"] or "")[:10] == (meta.get("publish_date") or "")[:10]
    return out


FIELDS = (
    ("authors exact", "authors"),
    ("cover right, per page", "cover_page"),
    ("cover right, per cover", "cover"),
    ("image recall", "recall"),
    ("image precision", "precision"),
    ("caption word-F1>=0.8", "caption"),
    ("credit right", "credit"),
    ("topics Jaccard", "topics"),
    ("topics Jaccard, tags", "tags"),
    ("date to the minute", "minute"),
    ("date, the day", "day"),
)


def report(name: str, rows: list[tuple[dict[str, float], dict[str, float]]]) -> None:
    print(f"\n{name}: {len(rows)} pages")
    print(f"{'field':<24} {'n':>5} {'ours':>7} {'trafilatura':>12}")
    for label, key in FIELDS:
        n_ours = sum(r[0].get(key + "_n", 0) for r in rows)
        n_theirs = sum(r[1].get(key + "_n", 0) for r in rows)
        a = sum(r[0].get(key, 0) for r in rows) / max(n_ours, 1)
        b = sum(r[1].get(key, 0) for r in rows) / max(n_theirs, 1)
        print(f"{label:<24} {n_ours:>5.0f} {a:>7.3f} {b:>12.3f}   (trafilatura n={n_theirs:.0f})")


def fundus(data: Path, limit: int, folds: int, held: set[int], show: bool) -> None:
    from benchmarks.metadata import read

    pages = read(data, "fundus-dev", limit)
    by_fold: dict[int, list[tuple[dict[str, float], dict[str, float]]]] = defaultdict(list)
    modified = 0
    for rec in pages:
        fold = site_fold(site_of(rec), folds)
        got, their = ours(rec), theirs(rec)
        modified += bool(got.get("date_modified"))
        by_fold[fold].append((score_page(rec, got), score_page(rec, their)))
        if show and fold not in held:
            _show(rec, got)
    report(f"fundus-dev, held-out folds {sorted(held)}", [r for f in held for r in by_fold[f]])
    report("fundus-dev, all pages", [r for rows in by_fold.values() for r in rows])
    print(f"date_modified given on {modified} of {len(pages)} pages")


def _show(rec: dict[str, Any], got: dict[str, Any]) -> None:
    """What went wrong on a tuning page (``--show``: folds outside ``--report`` only)."""
    meta = rec["meta"]
    print("==", rec["id"], rec["url"])
    if {name_key(a) for a in got["authors"]} != {name_key(a) for a in meta.get("author") or []}:
        print("  authors", got["authors"], "gold", meta.get("author"))
    for image in meta.get("images") or []:
        match = next((g for g in got["images"] if same_picture(g[0], image["urls"])), None)
        if match is None:
            print("  MISSED", image["urls"][-1][:120], "cover" if image["cover"] else "")
        else:
            if image.get("caption") and word_f1(match[1], image["caption"]) < CAPTION_F1:
                print("  caption", repr(match[1])[:100], "| gold", repr(image["caption"])[:100])
            if image.get("credit") and word_f1(match[2], " ".join(image["credit"])) < CAPTION_F1:
                print("  credit", repr(match[2])[:60], "| gold", image["credit"])
    for url, _, _ in got["images"]:
        if not any(same_picture(url, g["urls"]) for g in meta.get("images") or []):
            print("  EXTRA", url[:120])
    topics = {t.casefold().strip() for t in meta.get("topics") or []}
    if topics and {t.casefold().strip() for t in got["tags"]} != topics:
        sections = [t for t in got["topics"] if t not in got["tags"]]
        print("  tags", got["tags"], "categories", sections, "| gold topics", meta["topics"])


def wcxb_authors(data: Path, limit: int, folds: int) -> None:
    """Author on wcxb-dev: ours (held-out decision list, split into names) beside trafilatura's."""
    from scrapy_maintext.fields.people import split_authors

    from benchmarks.metadata import fit, labelled_page, read, right

    cache: dict[str, Any] = {}
    pages = [
        page
        for rec in read(data, "wcxb-dev", limit)
        if (page := labelled_page(rec, "wcxb-dev", cache)) is not None
    ]
    ours_right = theirs_right = n = 0
    for fold in range(folds):
        test = [p for p in pages if site_fold(p["site"], folds) == fold]
        train = [p for p in pages if site_fold(p["site"], folds) != fold]
        rule = fit(train, "author", "list")
        for page in test:
            gold = page["gold"]["author"]
            if not gold:
                continue
            n += 1
            names = split_authors(rule.pick(page["sources"]["author"])[0])
            ours_right += right("author", "; ".join(names), gold)
            theirs_right += right("author", page["trafilatura"]["author"], gold)
    print(f"\nwcxb-dev author, held-out site folds: {n} labelled pages")
    print(
        f"ours {ours_right / max(n, 1):.3f}  trafilatura {theirs_right / max(n, 1):.3f}  "
        f"difference {(ours_right - theirs_right) / max(n, 1) * 100:+.1f} points"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--limit", type=int, default=0, help="fundus-dev pages (0: all)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--report", default="3,4", help="held-out folds, comma-separated")
    parser.add_argument("--wcxb-limit", type=int, default=0, help="wcxb-dev pages (0: all)")
    parser.add_argument("--no-wcxb", action="store_true", help="skip the wcxb-dev part")
    parser.add_argument(
        "--show",
        action="store_true",
        help="errors on the tuning folds: authors, pictures, captions, credits, tags",
    )
    args = parser.parse_args()
    if not (args.data / "fundus-dev.jsonl.gz").is_file():
        sys.exit(f"error: no fundus-dev.jsonl.gz in {args.data}")
    held = {int(f) for f in args.report.split(",") if f.strip()}
    fundus(args.data, args.limit, args.folds, held, args.show)
    if not args.no_wcxb:
        wcxb_authors(args.data, args.wcxb_limit, args.folds)


if __name__ == "__main__":
    main()
