"""What would the v5 candidate net cost per page at run time, against v4's first model?

    python -m benchmarks.model_cost --data ../shared/data [--limit 150] [--repeat 2]

The cost of a net does not depend on its weights: the candidate (``models.seqnet.SeqNet``, v4's
sizes; ``--variant conv`` for the variant without the GRU) is exported untrained, int8 as
``models.export`` does, and both models run through ``neural.inference``'s session options and
windowing (512 blocks, 64 overlap, one thread) on the blocks of the first ``--limit`` wcxb-dev
pages of held-out sites, interleaved page by page (the order alternates). Prints the size of
each model file and per model the median, mean and p90 milliseconds of inference per page and the
ratios (candidate / v4). Needs torch (the training extra).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import torch
from scrapy_maintext.models.dataset import iter_pages
from scrapy_maintext.models.export import RUN_MAX_LEN, RUN_OVERLAP, export_float, quantize
from scrapy_maintext.models.net import NetConfig
from scrapy_maintext.models.seqnet import SeqNet
from scrapy_maintext.models.systems import parse_html
from scrapy_maintext.neural.features import DENSE_SIZE, HASH_SIZE, PageFeatures, featurize
from scrapy_maintext.neural.inference import INPUT_NAMES, MODELS_DIR, _session, windowed
from scrapy_maintext.neural.segment import segment


def page_features(data: Path, limit: int) -> list[PageFeatures]:
    out = []
    for page in iter_pages(data, ("wcxb-dev",)):
        if page.split != "test":
            continue
        raw = segment(parse_html(page.html))
        if raw:
            out.append(featurize(raw))
        if len(out) == limit:
            break
    return out


def candidate(folder: Path, recurrent: bool) -> Path:
    torch.manual_seed(0)
    net = SeqNet(NetConfig(DENSE_SIZE, HASH_SIZE), recurrent).eval()
    export_float(net, folder / "float.onnx")
    quantize(folder / "float.onnx", folder / "model.onnx")
    return folder / "model.onnx"


def infer_ms(session: object, feats: PageFeatures) -> float:
    arrays = (feats.dense, feats.struct_ids, feats.word_ids)

    def run(lo: int, hi: int) -> np.ndarray:
        inputs = {n: a[None, lo:hi] for n, a in zip(INPUT_NAMES, arrays, strict=True)}
        return np.asarray(session.run(["logits"], inputs)[0][0])  # type: ignore[attr-defined]

    t0 = time.perf_counter()
    windowed(run, len(feats), RUN_MAX_LEN, RUN_OVERLAP)
    return (time.perf_counter() - t0) * 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--limit", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--variant", choices=("gru", "conv"), default="gru")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    pages = page_features(args.data, args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        # v4.1 is v4's first model, byte for byte.
        paths = {"v4": MODELS_DIR / "v4.1" / "model.onnx"}
        paths["candidate"] = candidate(Path(tmp), args.variant == "gru")
        sessions = {name: _session(path) for name, path in paths.items()}
        for name, path in paths.items():
            print(f"{name}: {path.stat().st_size / 1e6:.2f} MB")
        for feats in pages[:10]:  # warm-up
            for s in sessions.values():
                infer_ms(s, feats)
        times: dict[str, list[float]] = {name: [] for name in sessions}
        for r in range(args.repeat):
            for i, feats in enumerate(pages):
                order = list(sessions) if (i + r) % 2 == 0 else list(sessions)[::-1]
                for name in order:
                    times[name].append(infer_ms(sessions[name], feats))
    print(f"{len(pages)} pages x {args.repeat}; inference ms per page (median / mean / p90)")
    stats = {n: (np.median(t), np.mean(t), np.percentile(t, 90)) for n, t in times.items()}
    for name, (med, mean, p90) in stats.items():
        print(f"{name}: {med:.2f} / {mean:.2f} / {p90:.2f}")
    ratios = [c / v for c, v in zip(stats["candidate"], stats["v4"], strict=True)]
    print("candidate / v4: " + " / ".join(f"{x:.2f}" for x in ratios))


if __name__ == "__main__":
    main()
