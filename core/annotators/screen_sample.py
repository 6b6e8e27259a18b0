"""Votes of a known population of annotators (honest, reversed, random) from a Bradley–Terry model, for the
checks and the benchmark of the sequential screen (docs/methods.md §17). numpy and pandas only.

An honest annotator votes by the model; a reversed one by its reverse (the weaker model wins with the
stronger one's probability); a random one picks either side with probability ½. Each annotator casts
``votes_each`` votes on uniform pairs of different models, at distinct times (shuffled, so the row order is
not the time order); models are ``m00``, ``m01``, … with Elo evenly spaced over ``spread`` points, randomly
assigned; annotators are ``u000``, ``u001``, …, each kind a random subset.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

KINDS = ("honest", "reversed", "random")


def population(seed: int = 0, n_models: int = 10, spread: float = 600.0, n_annotators: int = 100,
               votes_each: int = 50, reversed_share: float = 0.3, random_share: float = 0.1,
               tie_share: float = 0.0) -> tuple[pd.DataFrame, dict[str, str]]:
    """(votes frame with vote_id, model_a, model_b, winner, annotator_id, timestamp; annotator -> kind).
    ``tie_share``: the share of votes that are ties, whatever the annotator's kind."""
    rng = np.random.default_rng(seed)
    elo = np.linspace(0.0, spread, n_models)[rng.permutation(n_models)]
    n_reversed = int(round(reversed_share * n_annotators))
    n_random = int(round(random_share * n_annotators))
    kinds = np.array(["reversed"] * n_reversed + ["random"] * n_random
                     + ["honest"] * (n_annotators - n_reversed - n_random))[rng.permutation(n_annotators)]
    n = n_annotators * votes_each
    who = np.repeat(np.arange(n_annotators), votes_each)
    left = rng.integers(0, n_models, n)
    right = (left + rng.integers(1, n_models, n)) % n_models
    p_left = 1.0 / (1.0 + 10.0 ** ((elo[right] - elo[left]) / 400.0))
    kind = kinds[who]
    p_left = np.where(kind == "reversed", 1.0 - p_left, np.where(kind == "random", 0.5, p_left))
    winner = np.where(rng.random(n) < p_left, "model_a", "model_b").astype(object)
    winner[rng.random(n) < tie_share] = "tie"
    width = len(str(n_models - 1))
    models = np.array([f"m{i:0{max(2, width)}d}" for i in range(n_models)])
    annotators = np.array([f"u{i:03d}" for i in range(n_annotators)])
    frame = pd.DataFrame({"vote_id": np.arange(n), "model_a": models[left], "model_b": models[right],
                          "winner": winner, "annotator_id": annotators[who],
                          "timestamp": pd.Timestamp("2026-01-01") + pd.to_timedelta(rng.permutation(n), unit="s")})
    return frame, dict(zip(annotators.tolist(), kinds.tolist()))
