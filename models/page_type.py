"""Train and judge the page-type model (``extraction.page_type``, issue 39).

    python -m scrapy_maintext.models.page_type folds --data ../shared/data --out DIR
    python -m scrapy_maintext.models.page_type train --data ../shared/data

``folds``: the model trained on the other folds' pages (``models.sources``' folds: wcxb-dev's
sites and fundus-dev's publishers by registered domain; fundus-dev's pages are articles), its
L2 strength chosen by an inner split of those pages; every fold's pages predicted by the model
that did not see them, the evaluation-only sets by the model of all pages. Prints the
per-type accuracy out of fold (the model alone) and writes ``DIR/page-types.json`` (id ->
[type, probability], as ``TypeModel.predict`` gives them: a declared product makes a product
page), which ``models.sources rescore --page-types`` reads, and ``DIR/page-types-model.json``
(the model alone). ``choose``: one of such files chosen inside the folds by the extraction
it gives (the declared-product rule was chosen so). ``train``: the shipped weights
(``extraction/page_type.json``) from every page, the L2 strength chosen the same way.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scrapy_maintext.extraction.body import parse_page
from scrapy_maintext.extraction.options import ExtractOptions
from scrapy_maintext.extraction.page_declared import declares_a_product
from scrapy_maintext.extraction.page_type import (
    PAGE_TYPES,
    WEIGHTS,
    TypeModel,
    feature_names,
    page_inputs,
)
from scrapy_maintext.models.dataset import (
    domain_fold,
    iter_pages,
    registered_domain,
    site_fold,
    site_of,
    site_split,
)

logger = logging.getLogger(__name__)

FOLDED = ("wcxb-dev", "fundus-dev")
OTHERS = ("readability", "cleaneval", "dragnet", "l3s-gn1")
L2_GRID = (0.001, 0.01, 0.1)
#: Classes weigh (pages / (types x class pages)) ** this: half way between the articles'
#: majority and equal weight per type (out of fold, equal weight lost a third of the
#: 2007-2013 articles to other types; models/CHANGELOG.md).
BALANCE_POWER = 0.5
STEPS = 1500
RATE = 0.5


@dataclass
class Table:
    ids: list[str]
    sets: list[str]
    sites: list[str]
    labels: list[str]
    x: np.ndarray
    #: Per page, the products it declares (``extraction.page_type.declares_a_product``);
    #: ``featurize`` counts them, ``models.page_inputs`` (the model's probabilities) does not.
    products: np.ndarray | None = None


def featurize(data: str, cache: Path) -> Table:
    """Every page's features (cached in ``cache``, an .npz)."""
    if cache.exists():
        z = np.load(cache, allow_pickle=False)
        if "products" in z:
            column = {k: [str(v) for v in z[k]] for k in ("ids", "sets", "sites", "labels")}
            ids, sets, sites = column["ids"], column["sets"], column["sites"]
            return Table(ids, sets, sites, column["labels"], z["x"], z["products"])
    rows: list[np.ndarray] = []
    products: list[int] = []
    ids, sets, sites, labels = [], [], [], []
    for page in iter_pages(data, FOLDED + OTHERS):
        tree = parse_page(page.html, ExtractOptions()).tree
        if tree is None:
            continue
        inputs = page_inputs(tree, page.url)
        rows.append(inputs.features)
        products.append(inputs.products)
        ids.append(page.id)
        sets.append(page.dataset)
        sites.append(page.site or site_of({"url": page.url, "id": page.id}))
        labels.append(page.page_type or ("article" if page.dataset == "fundus-dev" else ""))
    x = np.vstack(rows)
    cache.parent.mkdir(parents=True, exist_ok=True)
    counts = np.array(products, dtype=np.int64)
    np.savez(cache, ids=ids, sets=sets, sites=sites, labels=labels, x=x, products=counts)
    return Table(ids, sets, sites, labels, x, counts)


def labels_of(table: Table) -> list[str]:
    """The known type of each page: wcxb-dev's label; fundus-dev's pages and Readability's
    training sites (Apache-2.0 test pages of an article extractor) are articles."""
    labels = list(table.labels)
    for i, (source, site) in enumerate(zip(table.sets, table.sites, strict=True)):
        if source == "readability" and site_split(source, {"id": site}) == "train":
            labels[i] = "article"
    return labels


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> TypeModel:
    """Multinomial logistic regression, classes weighted towards equal total weight (so that
    the articles' majority does not drown the rarer types), by full-batch gradient descent."""
    k = len(PAGE_TYPES)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    z = (x - mean) / scale
    onehot = np.eye(k)[y]
    counts = np.bincount(y, minlength=k).astype(np.float64)
    weight = ((len(y) / (k * np.maximum(counts, 1))) ** BALANCE_POWER)[y][:, None]
    w = np.zeros((x.shape[1], k))
    b = np.zeros(k)
    velocity_w, velocity_b = np.zeros_like(w), np.zeros_like(b)
    for _ in range(STEPS):
        logits = z @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        grad = weight * (p - onehot) / len(y)
        gw = z.T @ grad + l2 * w
        gb = grad.sum(axis=0)
        velocity_w = 0.9 * velocity_w - RATE * gw
        velocity_b = 0.9 * velocity_b - RATE * gb
        w += velocity_w
        b += velocity_b
    return TypeModel(PAGE_TYPES, mean, scale, w, b)


def balanced_accuracy(model: TypeModel, x: np.ndarray, y: np.ndarray) -> float:
    pred = np.argmax(model.probabilities(x), axis=1)
    return float(np.mean([np.mean(pred[y == c] == c) for c in np.unique(y)]))


def fit_chosen(x: np.ndarray, y: np.ndarray, sites: list[str]) -> tuple[TypeModel, float]:
    """The model of the L2 strength with the best balanced accuracy on an inner split of
    these pages by site (4 inner folds), refit on all of them."""
    inner = np.array([site_fold("inner:" + registered_domain(s), 4) for s in sites])
    best, best_l2 = -1.0, L2_GRID[0]
    for l2 in L2_GRID:
        scores = []
        for f in range(4):
            train, held = inner != f, inner == f
            if held.any():
                scores.append(balanced_accuracy(fit(x[train], y[train], l2), x[held], y[held]))
        if np.mean(scores) > best:
            best, best_l2 = float(np.mean(scores)), l2
    return fit(x, y, best_l2), best_l2


def folds(args: argparse.Namespace) -> None:
    table = featurize(args.data, Path(args.out) / "page-features.npz")
    labels = labels_of(table)
    labelled = np.array([lab in PAGE_TYPES for lab in labels])
    y_all = np.array([PAGE_TYPES.index(lab) if lab in PAGE_TYPES else -1 for lab in labels])
    # Readability's training sites train every fold's model and are never scored.
    folded = np.isin(np.array(table.sets), FOLDED)
    fold = np.array([domain_fold(s, args.folds) for s in table.sites])
    predicted: dict[str, list[object]] = {}
    probs = np.zeros((len(table.ids), len(PAGE_TYPES)))
    for f in range(args.folds):
        train = labelled & (fold != f)
        held = labelled & folded & (fold == f)
        sites = [s for s, t in zip(table.sites, train, strict=True) if t]
        model, l2 = fit_chosen(table.x[train], y_all[train], sites)
        logger.info("fold %d: l2 %s", f, l2)
        probs[held] = model.probabilities(table.x[held])
    full, l2 = fit_chosen(table.x[labelled], y_all[labelled], list(np.array(table.sites)[labelled]))
    probs[~folded] = full.probabilities(table.x[~folded])
    model_only: dict[str, list[object]] = {}
    product = PAGE_TYPES.index("product")
    for i, pid in enumerate(table.ids):
        best = int(np.argmax(probs[i]))
        model_only[pid] = [PAGE_TYPES[best], round(float(probs[i, best]), 3)]
        # As ``TypeModel.predict`` does: a declared product makes a product page.
        if table.products is not None and declares_a_product(int(table.products[i])):
            best = product
        predicted[pid] = [PAGE_TYPES[best], round(float(probs[i, best]), 3)]
    out = Path(args.out)
    (out / "page-types.json").write_text(json.dumps(predicted), encoding="utf-8")
    (out / "page-types-model.json").write_text(json.dumps(model_only), encoding="utf-8")
    print(accuracy_table(table, y_all, probs, labelled))


def accuracy_table(table: Table, y: np.ndarray, probs: np.ndarray, labelled: np.ndarray) -> str:
    pred = np.argmax(probs, axis=1)
    lines = ["| true type | pages | accuracy out of fold | predicted as |", "|---|---|---|---|"]
    for c, name in enumerate(PAGE_TYPES):
        at = labelled & (y == c)
        for source in ("wcxb-dev", "fundus-dev"):
            rows = at & (np.array(table.sets) == source)
            if not rows.any():
                continue
            got = Counter(PAGE_TYPES[p] for p in pred[rows])
            spread = ", ".join(f"{t} {n}" for t, n in got.most_common())
            label = name if source == "wcxb-dev" else f"{name} (fundus-dev)"
            lines.append(f"| {label} | {rows.sum()} | {np.mean(pred[rows] == c):.3f} | {spread} |")
    wcxb = labelled & (np.array(table.sets) == "wcxb-dev")
    lines.append(f"| wcxb-dev overall | {wcxb.sum()} | {np.mean(pred[wcxb] == y[wcxb]):.3f} | |")
    for source in OTHERS:
        rows = np.array(table.sets) == source
        got = Counter(PAGE_TYPES[p] for p in pred[rows])
        spread = ", ".join(f"{t} {n}" for t, n in got.most_common())
        share = got["article"] / max(rows.sum(), 1)
        lines.append(f"| {source} (all pages) | {rows.sum()} | {share:.3f} article | {spread} |")
    return "\n".join(lines)


def train(args: argparse.Namespace) -> None:
    table = featurize(args.data, Path(args.cache))
    labels = labels_of(table)
    labelled = np.array([lab in PAGE_TYPES for lab in labels])
    y = np.array([PAGE_TYPES.index(lab) for lab, k in zip(labels, labelled, strict=True) if k])
    sites = [s for s, k in zip(table.sites, labelled, strict=True) if k]
    model, l2 = fit_chosen(table.x[labelled], y, sites)
    about = {
        "trained_on": "wcxb-dev (CC-BY-4.0) page types, fundus-dev (MIT) as articles",
        "pages": int(labelled.sum()),
        "l2": l2,
        "command": "python -m scrapy_maintext.models.page_type train --data ../shared/data",
    }
    Path(args.model).write_text(json.dumps(model.to_json(about)) + "\n", encoding="utf-8")
    print(f"wrote {args.model} ({len(feature_names())} features, l2 {l2})")


#: Probabilities from which a predicted non-article type turns the article rules off
#: (``extraction.page_type.ARTICLE_THRESHOLD``); above 1: never.
THRESHOLDS = (0.0, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.1)


def gate(args: argparse.Namespace) -> None:
    """The gate's threshold chosen inside the folds: from two rescores of the same decisions,
    one with the article rules everywhere (``--plain``) and one gated at threshold 0
    (``--typed``), each page's score under any threshold follows (the gated one where the
    predicted type is not an article at that probability or more). Per fold, the threshold
    with the best mean token F1 on the other folds' wcxb-dev and fundus-dev pages; the
    evaluation-only sets take the one chosen on all of them."""
    from scrapy_maintext.models.sources_report import F1, load, merged

    kinds = merged(load(Path(args.out)))
    plain, typed = kinds[args.plain], kinds[args.typed]
    ids = [i for i in plain if i in typed and "predicted_type" in typed[i]]

    def gated(i: str, t: float) -> bool:
        name, probability = typed[i]["predicted_type"]
        return name != "article" and probability >= t

    def mean(pages: list[str], t: float) -> float:
        return float(np.mean([(typed if gated(i, t) else plain)[i]["auto"][F1] for i in pages]))

    folded = [i for i in ids if plain[i]["set"] in FOLDED]
    fold = {i: domain_fold(plain[i]["site"], args.folds) for i in folded}
    chosen = {}
    for f in range(args.folds):
        train = [i for i in folded if fold[i] != f]
        chosen[f] = max(THRESHOLDS, key=lambda t: mean(train, t))
    overall = max(THRESHOLDS, key=lambda t: mean(folded, t))
    print(f"chosen per fold: {chosen}; on every folded page: {overall}")
    for t in THRESHOLDS:
        gates = sum(gated(i, t) for i in ids)
        print(f"threshold {t}: folded mean token F1 {mean(folded, t):.4f}, {gates} pages gated")


def choose_types(args: argparse.Namespace) -> None:
    """One of several predictions files chosen inside the folds by the extraction they give:
    each candidate (``--types``, one file each) rescored beforehand as a recipe of the same
    ``models.sources`` folder (``--recipes``, in the same order). Per fold, the candidate with
    the best mean WCXB word F1 of ``auto`` on the other folds' wcxb-dev and fundus-dev pages
    gives that fold's pages their types; the evaluation-only sets take the candidate chosen
    on every folded page. Writes the assembled file to ``--write``."""
    from scrapy_maintext.models.sources_report import WCXB, load, merged

    kinds = merged(load(Path(args.out)))
    recipes = args.recipes.split(",")
    files = [json.loads(Path(f).read_text("utf-8")) for f in args.types.split(",")]
    if len(files) != len(recipes):
        raise SystemExit("--types and --recipes name as many candidates")
    runs = [kinds[r] for r in recipes]
    ids = [i for i in runs[0] if all(i in run for run in runs)]
    folded = [i for i in ids if runs[0][i]["set"] in FOLDED]
    fold = {i: domain_fold(runs[0][i]["site"], args.folds) for i in folded}

    def mean(c: int, pages: list[str]) -> float:
        return float(np.mean([runs[c][i]["auto"][WCXB] for i in pages]))

    chosen: dict[int, int] = {}
    for f in range(args.folds):
        train = [i for i in folded if fold[i] != f]
        chosen[f] = max(range(len(runs)), key=lambda c: mean(c, train))
    overall = max(range(len(runs)), key=lambda c: mean(c, folded))
    for c, recipe in enumerate(recipes):
        print(f"{recipe}: folded mean WCXB word F1 {mean(c, folded):.4f}")
    per_fold = {f: recipes[c] for f, c in chosen.items()}
    print(f"chosen per fold: {per_fold}; on every folded page: {recipes[overall]}")
    assembled = {}
    for pid in files[0]:
        source = files[0][pid]
        site_fold_of = fold.get(pid)
        c = overall if site_fold_of is None else chosen[site_fold_of]
        assembled[pid] = files[c].get(pid, source)
    Path(args.write).write_text(json.dumps(assembled), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    judge = sub.add_parser("folds", help="per-type accuracy out of fold; predictions file")
    judge.add_argument("--data", default="../shared/data")
    judge.add_argument("--out", required=True)
    judge.add_argument("--folds", type=int, default=5)
    make = sub.add_parser("train", help="the shipped weights from every page")
    make.add_argument("--data", default="../shared/data")
    make.add_argument("--cache", default="/tmp/page-types/page-features.npz")
    make.add_argument("--model", default=str(WEIGHTS))
    choose = sub.add_parser("gate", help="the gate's threshold chosen inside the folds")
    choose.add_argument("--out", required=True, help="a models.sources folder")
    choose.add_argument("--plain", required=True, help="recipe rescored without types")
    choose.add_argument("--typed", required=True, help="recipe rescored with types, at 0")
    choose.add_argument("--folds", type=int, default=5)
    pick = sub.add_parser("choose", help="a predictions file chosen inside the folds")
    pick.add_argument("--out", required=True, help="a models.sources folder")
    pick.add_argument("--recipes", required=True, help="the candidates' rescored recipes")
    pick.add_argument("--types", required=True, help="their predictions files, in order")
    pick.add_argument("--write", required=True, help="the assembled predictions file")
    pick.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    commands = {"folds": folds, "train": train, "gate": gate, "choose": choose_types}
    commands[args.command](args)


if __name__ == "__main__":
    main()
