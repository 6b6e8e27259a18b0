"""Synthetic Bradley-Terry votes shared by our benchmark and the peer benchmark (bench/peers.py).

The votes come from :func:`core.samples.bt.bt_votes` (exact BT with ties, known ratings); this module
adds the aggregations the peer recipes are fed. It runs in BOTH the project venv and bench/.venv-peers
(core.samples.bt needs numpy only).

    votes = make_votes(1_000_000, 50, tie_share=0.10, seed=0)
    left, right, outcome, count = to_cells(votes)

Outcome coding: 0 = left won, 1 = right won, 2 = tie (ties are half wins under docs/methods.md §2).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from core.samples.bt import OUTCOME_LEFT, OUTCOME_RIGHT, OUTCOME_TIE, elo_from_pi, model_names  # noqa: E402,F401
from core.samples.bt import bt_votes as make_votes


def to_cells(votes: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Unique (left, right, outcome) cells with their counts.

    One ``np.unique`` over the combined integer key (left·K + right)·3 + outcome, so the cells come out
    sorted lexicographically by (left, right, outcome code). Returns (left, right, outcome, count) with
    count as int64 and sum(count) == n_votes.
    """
    k = int(votes["n_models"])
    key = (votes["left"].astype(np.int64) * k + votes["right"]) * 3 + votes["outcome"]
    uniq, count = np.unique(key, return_counts=True)
    outcome = (uniq % 3).astype(np.int8)
    pair = uniq // 3
    left = (pair // k).astype(np.int32)
    right = (pair % k).astype(np.int32)
    return left, right, outcome, count.astype(np.int64)


def win_matrix(left: np.ndarray, right: np.ndarray, outcome: np.ndarray, count: np.ndarray,
               n_models: int) -> np.ndarray:
    """K×K matrix W[i, j] = wins of i over j, ties counted as half a win for each side (docs/methods.md §2)."""
    k = int(n_models)
    c = np.asarray(count, dtype=np.float64)
    li, ri = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    s_left = np.where(outcome == OUTCOME_LEFT, 1.0, np.where(outcome == OUTCOME_TIE, 0.5, 0.0))
    w = np.bincount(li * k + ri, weights=c * s_left, minlength=k * k)
    w += np.bincount(ri * k + li, weights=c * (1.0 - s_left), minlength=k * k)
    return w.reshape(k, k)


if __name__ == "__main__":  # quick self-check
    v = make_votes(200_000, 10, seed=1)
    left, right, o, c = to_cells(v)
    assert c.sum() == v["n_votes"] and (left != right).all()
    print("cells:", len(c), "tie share:", round(float((v["outcome"] == 2).mean()), 4))
    print("true Elo:", np.round(v["true_elo"], 1))
