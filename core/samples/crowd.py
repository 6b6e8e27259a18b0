"""Votes from a crowd of honest, reversed and random annotators, with the truth, for the checks and the
benchmark of scheme ``crowd`` (docs/methods.md §16). numpy and pandas only."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.validation import check_integer, check_share

HONEST, REVERSED, RANDOM = "honest", "reversed", "random"
RELIABILITY = {HONEST: 1.0, REVERSED: 0.0, RANDOM: 0.5}  # η of each group under the Crowd-BT model


@dataclass(frozen=True)
class CrowdSample:
    votes: pd.DataFrame  # model_a, model_b, winner ("model_a"/"model_b"), annotator_id
    theta: np.ndarray  # true strengths (log scale), by model index
    models: list[str]
    annotators: list[str]
    group: np.ndarray  # HONEST / REVERSED / RANDOM per annotator


def crowd_votes(n_models: int, n_annotators: int, votes_per_annotator: int, reversed_share: float = 0.3,
                random_share: float = 0.1, spread: float = 2.0, seed: int = 0) -> CrowdSample:
    """Every annotator judges ``votes_per_annotator`` uniform random pairs without ties. The true strengths
    are evenly spaced over ``spread`` logits (in a random order); an honest annotator votes by
    σ(θ_i − θ_j), a reversed one by σ(θ_j − θ_i), a random one by a fair coin. The first
    round(reversed_share·n) annotators (in a shuffled order) are reversed, the next round(random_share·n)
    random."""
    check_integer(n_models, "n_models", 2)
    check_integer(n_annotators, "n_annotators", 1)
    check_share(reversed_share, "reversed_share")
    check_share(random_share, "random_share")
    rng = np.random.default_rng(seed)
    theta = np.linspace(-spread / 2, spread / 2, n_models)[rng.permutation(n_models)]
    n_reversed, n_random = round(reversed_share * n_annotators), round(random_share * n_annotators)
    group = np.array([REVERSED] * n_reversed + [RANDOM] * n_random
                     + [HONEST] * (n_annotators - n_reversed - n_random))[rng.permutation(n_annotators)]
    eta = np.array([RELIABILITY[g] for g in group])
    annotator = np.repeat(np.arange(n_annotators), votes_per_annotator)
    left = rng.integers(0, n_models, size=len(annotator))
    right = rng.integers(0, n_models - 1, size=len(annotator))
    right += right >= left
    p_true = 1.0 / (1.0 + np.exp(theta[right] - theta[left]))
    p_left = eta[annotator] * p_true + (1.0 - eta[annotator]) * (1.0 - p_true)
    left_wins = rng.random(len(annotator)) < p_left
    width = max(3, len(str(n_models - 1)))
    models = [f"m{i:0{width}d}" for i in range(n_models)]
    annotators = [f"a{i:0{max(3, len(str(n_annotators - 1)))}d}" for i in range(n_annotators)]
    votes = pd.DataFrame({"model_a": np.array(models)[left], "model_b": np.array(models)[right],
                          "winner": np.where(left_wins, "model_a", "model_b"),
                          "annotator_id": np.array(annotators)[annotator]})
    return CrowdSample(votes, theta, models, annotators, group)
