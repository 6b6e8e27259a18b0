"""Votes with planted style effects and a known true order, for the style-controlled ranking's checks.

Stronger models write shorter, plainer answers, and voters prefer long, list-heavy ones: a plain BT
ranking is pulled towards the verbose models, and a style-controlled fit should see through it.
Each vote draws both answers' length (characters, log-normal) and list count (Poisson) from its
model's verbosity; the outcome follows σ(θ_left − θ_right + βᵀz) with z the standardised
d = (a − b)/(a + b + 1) of the two features.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.ranking.style_model import style_design

PLANTED_FEATURES = ("length", "lists")


@dataclass(frozen=True)
class StyleVotes:
    left: np.ndarray = field(repr=False)
    right: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    sides: dict = field(repr=False)  # feature -> (left values, right values)
    theta: np.ndarray = field(repr=False)  # true strengths (model i is better than model i + 1)
    beta: np.ndarray = field(repr=False)  # planted effects, in PLANTED_FEATURES order


def style_votes(seed: int, n_votes: int = 3000, n_models: int = 8, beta=(0.5, 0.3)) -> StyleVotes:
    rng = np.random.default_rng(seed)
    theta = np.linspace(0.8, -0.8, n_models)
    verbosity = -theta + rng.normal(0, 0.3, n_models)
    left = rng.integers(0, n_models, n_votes)
    right = (left + rng.integers(1, n_models, n_votes)) % n_models
    sides = {"length": tuple(rng.lognormal(6 + 0.5 * verbosity[m], 0.4) for m in (left, right)),
             "lists": tuple(rng.poisson(np.exp(1 + 0.5 * verbosity[m])).astype(float) for m in (left, right))}
    z = style_design(sides, n_votes, PLANTED_FEATURES).z
    beta = np.asarray(beta, dtype=float)
    p = 1 / (1 + np.exp(-(theta[left] - theta[right] + z @ beta)))
    y = (rng.random(n_votes) < p).astype(float)
    return StyleVotes(left, right, y, sides, theta, beta)
