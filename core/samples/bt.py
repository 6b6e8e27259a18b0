"""Votes drawn exactly from a Bradley–Terry model with ties, for benchmarks and accuracy checks.

Unlike :func:`core.samples.arena_demo` (a realistic arena with biases), these votes have no side,
time or length effects: uniform pairs, known ratings, and ties that leave the half-tie BT MLE
consistent for them, so estimates from any BT implementation can be compared with the truth and
with each other. numpy only, so the peer benchmark's own environment can import it too.
"""

from __future__ import annotations

import numpy as np

from core.validation import check_integer, check_share

OUTCOME_LEFT, OUTCOME_RIGHT, OUTCOME_TIE = 0, 1, 2
ELO_SPREAD = 400.0


def model_names(n_models: int) -> list[str]:
    """"m000", "m001", ... (zero-padded, so Python ``sorted`` order == index order)."""
    width = max(3, len(str(n_models - 1)))
    return [f"m{i:0{width}d}" for i in range(n_models)]


def elo_from_pi(pi: np.ndarray) -> np.ndarray:
    """docs/methods.md §2 convention: Elo = 400·log10(π) + 1500 with π normalised to mean 1."""
    pi = np.asarray(pi, dtype=np.float64)
    return 400.0 * np.log10(pi / pi.mean()) + 1500.0


def bt_votes(n_votes: int, n_models: int, tie_share: float = 0.10, seed: int = 0) -> dict:
    """Draw ``n_votes`` i.i.d. votes from a Bradley-Terry model with known ratings.

    - Ratings: ``n_models`` Elo values evenly spaced over ``ELO_SPREAD`` (= 400) points, randomly
      assigned to the model indices (so name order is not strength order), then re-expressed in the
      docs/methods.md §2 convention (400·log10 π + 1500 with mean π = 1) -> ``true_elo``.
    - Pairs: ordered (left, right) uniform over the K·(K−1) ordered pairs with left != right.
    - Outcome: with p = 1 / (1 + 10^((Elo_right − Elo_left)/400)) (BT probability that left wins):
      tie with probability t = min(tie_share, 2·min(p, 1−p)), left wins with p − t/2, right wins with
      1 − p − t/2. So E[score of left] = p with ties as half wins: ``true_elo`` is exactly what the
      half-tie BT MLE of docs/methods.md §2 estimates (independent ties would shrink the Elo spread instead).

    Returns a dict of numpy arrays: ``left``/``right`` (int32 model indices), ``outcome`` (int8:
    0 left won, 1 right won, 2 tie), ``true_elo`` (float64, per model), ``models`` (list of names),
    plus the scalars ``n_votes``, ``n_models``, ``tie_share``, ``seed``.
    """
    check_integer(n_models, "n_models", 2)
    check_share(tie_share, "tie_share", below_one=True)
    rng = np.random.default_rng(seed)
    k = int(n_models)
    n = int(n_votes)

    base = np.linspace(-ELO_SPREAD / 2, ELO_SPREAD / 2, k)
    gen_elo = base[rng.permutation(k)]
    pi = 10.0 ** (gen_elo / 400.0)
    true_elo = elo_from_pi(pi)

    left = rng.integers(0, k, size=n, dtype=np.int32)
    right = rng.integers(0, k - 1, size=n, dtype=np.int32)
    right += right >= left  # skip left -> uniform over the other k-1 models
    p_left = 1.0 / (1.0 + 10.0 ** ((gen_elo[right] - gen_elo[left]) / 400.0))
    # P(tie) = t, P(left) = p − t/2, P(right) = 1 − p − t/2: the expected half-tie score of the left model
    # is exactly the BT probability p, so the half-tie BT MLE (docs/methods.md §2) is consistent for true_elo.
    # t = min(tie_share, 2·min(p, 1 − p)) keeps the probabilities valid (binds only for p < tie_share/2).
    t = np.minimum(tie_share, 2.0 * np.minimum(p_left, 1.0 - p_left))
    u = rng.random(n)
    outcome = np.full(n, OUTCOME_RIGHT, dtype=np.int8)
    outcome[u < p_left - t / 2] = OUTCOME_LEFT
    outcome[(u >= p_left - t / 2) & (u < p_left + t / 2)] = OUTCOME_TIE
    del p_left, t, u

    return {
        "left": left,
        "right": right,
        "outcome": outcome,
        "true_elo": true_elo,
        "models": model_names(k),
        "n_votes": n,
        "n_models": k,
        "tie_share": float(tie_share),
        "seed": int(seed),
    }
