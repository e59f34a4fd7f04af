"""The decision protocol: site folds by registered domain and paired per-page differences.

    python -m scrapy_maintext.models.pagecache --data ../shared/data --out /tmp/x-cache/wcxb.pkl
    python -m scrapy_maintext.models.protocol --cache /tmp/x-cache/wcxb.pkl \
        [--legacy /tmp/x-cache/legacy.pkl] [--write crawler/neural/models/v4.1]

Pages: the wcxb-dev pages whose sites the frozen v4.1 never trained on (held-out and
validation sites, ``pagecache.unseen``) with a reproducible ground truth. They fall in
``FOLDS`` folds by a hash of their registered domain (``dataset.domain_fold``). Every choice
that sits on top of the frozen model is made inside the training folds only and scored on the
fold left out: the repeated-structure decoding (``neural.groups``, the grid ``GROUP_GRID``,
chosen by macro token F1 over page types) and the arbiter (``models.arbiter``, trained on
the training folds' pages decoded with that fold's choice). Every page is then scored once,
by the choices its own fold did not see.

Reported (``protocol_report``): per system, the mean over folds of the page-mean token F1
and of WCXB's metric (``metrics.wcxb_f1``) with the min-max over folds; per page type; the
paired per-page difference against v4.1, v4 with its cascade and trafilatura with a 95%
bootstrap interval over registered domains; collapses per page type; the share of the oracle
gap the arbiter recovers and how often it runs trafilatura. ``--write`` stores the choices
made on all folds together (decoding and arbiter) in a model folder.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scrapy_maintext.models import arbiter as train_arbiter
from scrapy_maintext.models.dataset import domain_fold, registered_domain
from scrapy_maintext.models.metrics import token_f1, tokens, wcxb_f1
from scrapy_maintext.models.pagecache import load
from scrapy_maintext.neural.arbiter import CHOICES, Arbiter, page_stats, pair_stats, union_keep
from scrapy_maintext.neural.decision import DecodeParams, decide
from scrapy_maintext.neural.groups import GroupParams, keep_groups
from scrapy_maintext.neural.inference import MODELS_DIR, PROTOCOL_VERSION
from scrapy_maintext.neural.repeats import MIN_RUN_BLOCKS, drop_runs, repeat_key

logger = logging.getLogger(__name__)

FOLDS = 5
GROUP_GRID: tuple[GroupParams | None, ...] = (
    None,
    *(
        GroupParams(rows, share, page)
        for rows in (3, 5)
        for share in (0.15, 0.25, 0.35)
        for page in (0.0, 0.05)
    ),
)
#: Most pages on which the arbiter may run trafilatura (the speed budget: ``extract()`` must
#: stay within trafilatura's own time per page).
MAX_RUN = 0.3


@dataclass
class PageData:
    rec: dict[str, Any]
    fold: int
    domain: str
    chars: np.ndarray
    link_chars: np.ndarray
    block_tokens: list[list[str]]
    gold_tokens: list[str]
    traf_tokens: list[str]
    #: (grid index) -> (final keep mask, fallback, confidence).
    decoded: dict[int, tuple[np.ndarray, bool, float]] = field(default_factory=dict)
    #: (grid index) -> (stage-1 inputs, stage-2 inputs, token F1 per arbiter choice).
    arbiter_rows: dict[int, tuple[np.ndarray, np.ndarray, list[float]]] = field(
        default_factory=dict
    )
    #: (grid index) -> token F1 of the neural output.
    neural_f1: dict[int, float] = field(default_factory=dict)

    @property
    def group(self) -> str:
        return str(self.rec["page_type"] or self.rec["dataset"])


def prepare(rec: dict[str, Any]) -> PageData:
    domain = registered_domain(rec["site"])
    return PageData(
        rec,
        domain_fold(rec["site"], FOLDS),
        domain,
        np.array([len(t) for t in rec["texts"]], dtype=np.float64),
        np.array(rec["link_chars"], dtype=np.float64),
        [tokens(t) for t in rec["texts"]],
        tokens(rec["gold"]),
        tokens(rec["trafilatura"]),
    )


def shipped_params() -> DecodeParams:
    cfg = json.loads((MODELS_DIR / PROTOCOL_VERSION / "config.json").read_text("utf-8"))
    return DecodeParams(*(cfg[k] for k in DecodeParams.__dataclass_fields__))


def cached_repeats(texts: Sequence[str], parents: Sequence[int], keep: np.ndarray) -> np.ndarray:
    """``neural.repeats.repeats`` on cached blocks (parents as page-local numbers)."""
    first: dict[str, int] = {}
    out = np.zeros(len(texts), dtype=bool)
    for i in np.flatnonzero(keep).tolist():
        key = repeat_key(texts[i])
        if not key:
            continue
        if key in first:
            out[i] = first[key] != parents[i]
        else:
            first[key] = parents[i]
    return out


def decode(page: PageData, g: int, params: DecodeParams) -> tuple[np.ndarray, bool, float]:
    """The run-time decoding (``NeuralExtractor._decide``) with ``GROUP_GRID[g]``."""
    if g not in page.decoded:
        rec = page.rec
        if rec["probs"] is None:
            page.decoded[g] = (np.zeros(0, dtype=bool), True, 0.0)
            return page.decoded[g]
        d = decide(rec["probs"], page.chars, params)
        keep = d.keep
        groups = GROUP_GRID[g]
        if groups is not None:
            keep = keep_groups(rec["signatures"], page.chars, keep, groups)
        keep = drop_runs(cached_repeats(rec["texts"], rec["parents"], keep), keep, MIN_RUN_BLOCKS)
        page.decoded[g] = (keep, d.fallback, d.confidence)
    return page.decoded[g]


def text_of(page: PageData, keep: np.ndarray) -> str:
    return "\n".join(t for t, k in zip(page.rec["texts"], keep, strict=True) if k)


def choice_texts(page: PageData, g: int, params: DecodeParams) -> dict[str, str]:
    """The text of every arbiter choice (all trafilatura's where the decoding falls back)."""
    keep, fallback, _ = decode(page, g, params)
    traf = page.rec["trafilatura"]
    if fallback:
        return dict.fromkeys(CHOICES, traf)
    union = union_keep(page.block_tokens, keep, page.traf_tokens)
    return {"neural": text_of(page, keep), "trafilatura": traf, "union": text_of(page, union)}


def arbiter_inputs(page: PageData, g: int, params: DecodeParams) -> tuple[np.ndarray, np.ndarray]:
    keep, _, confidence = decode(page, g, params)
    rec = page.rec
    probs = rec["probs"] if rec["probs"] is not None else np.zeros(0)
    stats = page_stats(
        page.chars, page.link_chars, rec["kinds"], rec["signatures"], probs, keep, confidence
    )
    return stats, pair_stats(page.block_tokens, keep, page.traf_tokens, probs)


def arbiter_row(page: PageData, g: int, params: DecodeParams) -> tuple[Any, Any, list[float]]:
    if g not in page.arbiter_rows:
        s, p = arbiter_inputs(page, g, params)
        texts = choice_texts(page, g, params)
        f1 = [token_f1(tokens(texts[c]), page.gold_tokens) for c in CHOICES]
        page.arbiter_rows[g] = (s, p, f1)
    return page.arbiter_rows[g]


def arbiter_pages(pages: list[PageData], g: int, params: DecodeParams) -> train_arbiter.Pages:
    rows = [arbiter_row(page, g, params) for page in pages]
    return train_arbiter.Pages(*(np.array([r[i] for r in rows]) for i in range(3)))


def macro(pages: list[PageData], values: np.ndarray) -> float:
    groups = sorted({p.group for p in pages})
    return float(np.mean([values[[p.group == t for p in pages]].mean() for t in groups]))


def neural_f1(page: PageData, g: int, params: DecodeParams) -> float:
    if g not in page.neural_f1:
        text = choice_texts(page, g, params)["neural"]
        page.neural_f1[g] = token_f1(tokens(text), page.gold_tokens)
    return page.neural_f1[g]


def choose_groups(pages: list[PageData], params: DecodeParams) -> int:
    """The grid entry with the best macro token F1 over page types (ties: the earlier)."""
    scores = []
    for g in range(len(GROUP_GRID)):
        f1 = np.array([neural_f1(p, g, params) for p in pages])
        scores.append(round(macro(pages, f1), 4))
    return int(np.argmax(scores))


@dataclass
class Choices:
    groups: int
    arbiter: Arbiter


def choose(pages: list[PageData], params: DecodeParams, max_run: float) -> Choices:
    g = choose_groups(pages, params)
    return Choices(g, train_arbiter.fit(arbiter_pages(pages, g, params), max_run))


def apply(page: PageData, choices: Choices, params: DecodeParams) -> tuple[str, str, bool]:
    """(neural+groups text, arbiter text, whether trafilatura ran) for one page."""
    texts = choice_texts(page, choices.groups, params)
    fallback = decode(page, choices.groups, params)[1]
    if fallback:
        return texts["neural"], texts["neural"], True
    stats, pair = arbiter_inputs(page, choices.groups, params)
    if not choices.arbiter.worth_running(stats):
        return texts["neural"], texts["neural"], False
    return texts["neural"], texts[choices.arbiter.choose(stats, pair)], True


def score(page: PageData, text: str) -> tuple[float, float]:
    return token_f1(tokens(text), page.gold_tokens), wcxb_f1(text, page.rec["gold"])


def run_folds(pages: list[PageData], max_run: float) -> list[dict[str, Any]]:
    """Per page: every system's text scored, the choices made without the page's fold."""
    params = shipped_params()
    rows = []
    for k in range(FOLDS):
        train = [p for p in pages if p.fold != k]
        choices = choose(train, params, max_run)
        logger.info(
            "fold %d: groups %s, gate %.2f", k, GROUP_GRID[choices.groups], choices.arbiter.gate
        )
        for page in (p for p in pages if p.fold == k):
            neural, arbiter, ran = apply(page, choices, params)
            texts = {
                "trafilatura": page.rec["trafilatura"],
                "v4.1": page.rec["v4.1"],
                "v4 (cascade)": page.rec["v4"],
                "neural+groups": neural,
                "arbiter": arbiter,
            }
            row = {"page": page, "ran": ran, "groups": choices.groups}
            for name, text in texts.items():
                row[name] = (*score(page, text), len(tokens(text)))
            row["oracle"] = max(row["neural+groups"], row["trafilatura"])
            rows.append(row)
    return rows


def write_choices(
    pages: list[PageData], folder: Path, max_run: float, arbiter_file: str = ""
) -> None:
    """The choices made on every page (all folds): the decoding into ``folder``'s config;
    the arbiter into ``arbiter_file`` (a file named ``arbiter.json`` in ``folder``: the
    folder's config names it too), when given."""
    params = shipped_params()
    choices = choose(pages, params, max_run)
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    groups = GROUP_GRID[choices.groups]
    if groups is None:
        config.pop("groups", None)
    else:
        config["groups"] = {
            "min_rows": groups.min_rows,
            "keep_share": groups.keep_share,
            "min_page_share": groups.min_page_share,
        }
    if arbiter_file:
        out = Path(arbiter_file)
        if out.resolve().parent == folder.resolve():
            config["arbiter"] = out.name
        out.write_text(json.dumps(choices.arbiter.to_json(), indent=1) + "\n", encoding="utf-8")
        logger.info("wrote the arbiter (gate %.2f) to %s", choices.arbiter.gate, out)
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    logger.info("wrote groups %s into %s", groups, path)


def main(argv: list[str] | None = None) -> None:
    from scrapy_maintext.models.protocol_report import legacy_table, report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", required=True, help="wcxb-dev pages from models.pagecache")
    parser.add_argument("--legacy", default="", help="2007-2013 pages from models.pagecache")
    parser.add_argument("--max-run", type=float, default=MAX_RUN)
    parser.add_argument("--write", default="", help="model folder to store the decoding in")
    parser.add_argument("--arbiter-out", default="", help="file to store the arbiter in")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    pages = [prepare(r) for r in load(args.cache)]
    print(report(run_folds(pages, args.max_run)))
    if args.legacy:
        choices = choose(pages, shipped_params(), args.max_run)
        legacy = [prepare(r) for r in load(args.legacy)]
        print(legacy_table(legacy, choices, shipped_params()))
    if args.write:
        write_choices(pages, Path(args.write), args.max_run, args.arbiter_out)


if __name__ == "__main__":
    main()
