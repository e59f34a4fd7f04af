"""Training the page-level arbiter (``neural.arbiter``): two small linear models in numpy.

Stage 1, logistic regression: does trafilatura's output or the union beat the neural text by
more than ``GAIN`` on this page? Pages are weighted by how much is at stake. Stage 2,
a softmax over ``neural.arbiter.CHOICES`` trained to maximise the expected F1 of the choice
(soft targets: the per-page F1 of every choice). The gate of stage 1 is the one that scores
best on the training pages among those that run trafilatura on at most ``max_run`` of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scrapy_maintext.neural.arbiter import CHOICES, Arbiter, Linear

#: A page counts as "trafilatura helps" when its best other choice gains this much F1.
GAIN = 0.01
#: L2 penalty of both models (standardised inputs), and the gradient-descent schedule.
L2 = 0.01
STEPS = 800
RATE = 0.5
#: Gates tried for stage 1.
GATES = tuple(np.round(np.arange(0.05, 0.96, 0.05), 2))


@dataclass
class Pages:
    """Per page: stage-1 inputs, stage-2 extra inputs and the F1 of every choice."""

    stats: np.ndarray  # pages x len(STAGE1)
    pair: np.ndarray  # pages x len(STAGE2)
    f1: np.ndarray  # pages x len(CHOICES)


def _standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    return mean, np.where(scale > 1e-9, scale, 1.0)


def fit_logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> Linear:
    mean, scale = _standardise(x)
    z = (x - mean) / scale
    coef, bias = np.zeros(z.shape[1]), 0.0
    w = w / w.sum()
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-(z @ coef + bias)))
        g = w * (p - y)
        coef -= RATE * (z.T @ g + L2 * coef)
        bias -= RATE * float(g.sum())
    return Linear(mean, scale, coef[None, :], np.array([bias]))


def fit_choice(x: np.ndarray, f1: np.ndarray) -> Linear:
    """Softmax over the choices, maximising the mean expected F1 (minus the L2 penalty)."""
    mean, scale = _standardise(x)
    z = (x - mean) / scale
    k = f1.shape[1]
    coef, bias = np.zeros((k, z.shape[1])), np.zeros(k)
    # Centred per page: only the differences between choices matter.
    gain = f1 - f1.mean(axis=1, keepdims=True)
    for _ in range(STEPS):
        s = z @ coef.T + bias
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        expected = (p * gain).sum(axis=1, keepdims=True)
        g = -p * (gain - expected) / len(z)  # d(-mean expected F1)/d scores
        coef -= RATE * 4 * (g.T @ z + L2 * coef)
        bias -= RATE * 4 * g.sum(axis=0)
    return Linear(mean, scale, coef, bias)


def outcome(arbiter: Arbiter, pages: Pages) -> tuple[np.ndarray, np.ndarray]:
    """Per page: the F1 the arbiter gets and whether it ran trafilatura."""
    ran = np.array([arbiter.worth_running(s) for s in pages.stats])
    chosen = np.array(
        [
            CHOICES.index(arbiter.choose(s, p)) if r else 0
            for s, p, r in zip(pages.stats, pages.pair, ran, strict=True)
        ]
    )
    return pages.f1[np.arange(len(chosen)), chosen], ran


def fit(pages: Pages, max_run: float) -> Arbiter:
    neural = pages.f1[:, 0]
    best_other = pages.f1[:, 1:].max(axis=1)
    y = (best_other > neural + GAIN).astype(np.float64)
    first = fit_logistic(pages.stats, y, np.abs(best_other - neural) + 0.02)
    second = fit_choice(np.concatenate([pages.stats, pages.pair], axis=1), pages.f1)
    best: tuple[float, float] = (-1.0, 1.01)
    for gate in GATES:
        f1, ran = outcome(Arbiter(first, float(gate), second), pages)
        if ran.mean() <= max_run and f1.mean() > best[0]:
            best = (float(f1.mean()), float(gate))
    return Arbiter(first, best[1], second)
