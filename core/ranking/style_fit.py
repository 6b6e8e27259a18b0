"""Style-controlled ranking: Bradley–Terry ratings net of answer length and markdown density, with the
style coefficients (Chatbot Arena's style control; the model is in :mod:`core.ranking.style_model`).

:func:`fit_style` takes votes as arrays (model indices into the sorted model names, the left side's
score, per-side feature counts) and returns a :class:`StyleFit`: θ (Σθ = 0), Elo = 1500 + (400/ln 10)·θ
or anchored, sandwich standard errors, intervals (sandwich or bootstrap percentile), the coefficients
β per standardised feature with the mean and sd used to standardise, and what was dropped and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.ranking.bradley_terry import ELO_BASE, ELO_SCALE
from core.ranking.style_bootstrap import bootstrap
from core.ranking.style_model import (
    DEFAULT_PENALTY,
    NEWTON_TOL,
    STYLE_FEATURES,
    StyleInputError,
    fit_with_sandwich,
    style_design,
    style_rows,
)
from core.stats.intervals import z_value

INTERVALS = ("sandwich", "bootstrap", "none")
DEFAULT_REPLICATES = 1000


@dataclass(frozen=True)
class StyleFit:
    """A style-controlled fit and the settings that produced it. Arrays are per model (``models``
    order) or per kept feature (``features`` order); ``covariance`` is the sandwich over (θ, β)."""

    models: tuple[str, ...]
    theta: np.ndarray = field(repr=False)
    elo: np.ndarray = field(repr=False)
    elo_se: np.ndarray = field(repr=False)
    elo_low: np.ndarray = field(repr=False)
    elo_high: np.ndarray = field(repr=False)
    features: tuple[str, ...]
    beta: np.ndarray = field(repr=False)
    beta_se: np.ndarray = field(repr=False)
    beta_low: np.ndarray = field(repr=False)
    beta_high: np.ndarray = field(repr=False)
    feature_mean: np.ndarray = field(repr=False)  # of d = (a − b)/(a + b + 1), before standardising
    feature_sd: np.ndarray = field(repr=False)
    dropped: tuple[str, ...]
    notes: tuple[str, ...]
    covariance: np.ndarray = field(repr=False)
    identifiable: bool
    prior: float  # virtual ties per model (docs/methods.md §2): 0 unless the win graph is not strongly connected
    penalty: float
    interval: str
    alpha: float
    anchor: tuple[str, float] | None
    n_votes: float
    iterations: int
    converged: bool
    tol: float
    replicates: int = 0
    seed: int = 0
    nonidentifiable_replicates: int = 0


def fit_style(left, right, y, sides: Mapping[str, tuple[Sequence[float], Sequence[float]]], models: Sequence[str],
              *, features: Sequence[str] = STYLE_FEATURES, weight=None, penalty: float = DEFAULT_PENALTY,
              interval: str = "sandwich", replicates: int = DEFAULT_REPLICATES, alpha: float = 0.05, seed: int = 0,
              anchor: tuple[str, float] | None = None) -> StyleFit:
    """Fit P(left beats right) = σ(θ_left − θ_right + βᵀz) to one row per vote.

    Parameters
    ----------
    left, right : (n,) int arrays — indices into ``models`` (sorted names, docs/methods.md §0).
    y : (n,) — the left side's score: 1 won, 0 lost, ½ tie or both bad.
    sides : feature name → (values for the left answer, values for the right answer), e.g.
        ``{"length": (len_a, len_b), ...}`` (core.io.style_features gives them from texts).
    features : which of length, headers, lists, bold, position to control for.
    weight : optional vote weights (rescaled to mean 1).
    penalty : λ of −(λ/2)‖β‖² (θ is never penalised); 0 gives the plain MLE.
    interval : "sandwich" (default), "bootstrap" (percentile, ``replicates`` refits) or "none".
    anchor : (model, rating) shows that model at that rating; the others keep their differences.
    """
    if interval not in INTERVALS:
        raise StyleInputError(f"`interval` must be one of {', '.join(INTERVALS)}, not {interval!r}")
    if isinstance(replicates, bool) or int(replicates) != replicates or replicates < 1:
        raise StyleInputError(f"`replicates` must be a positive integer, got {replicates!r}")
    z_crit = z_value(alpha)
    models = tuple(str(m) for m in models)
    design = style_design(sides, len(np.asarray(left)), features)
    rows = style_rows(left, right, y, design.z, len(models), weight=weight)
    k, p = len(models), len(design.names)
    anchor_at = _anchor_index(models, anchor)
    b, prior, iterations, cov = fit_with_sandwich(rows, penalty)
    jac = np.eye(k) * ELO_SCALE
    if anchor_at is not None:
        jac[:, anchor_at] -= ELO_SCALE
    elo = _elo(b[None, :k], anchor_at, anchor)[0]
    elo_se = np.sqrt(np.clip(np.diag(jac @ cov[:k, :k] @ jac.T), 0.0, None))
    beta, beta_se = b[k:], np.sqrt(np.clip(np.diag(cov)[k:], 0.0, None))
    notes = list(design.notes)
    n_replicates = nonidentifiable = 0
    if interval == "sandwich":
        elo_low, elo_high = elo - z_crit * elo_se, elo + z_crit * elo_se
        beta_low, beta_high = beta - z_crit * beta_se, beta + z_crit * beta_se
    elif interval == "bootstrap":
        draws = bootstrap(rows, b, penalty, prior, int(replicates), seed)
        replicate_elo = _elo(draws.b[:, :k], anchor_at, anchor)
        q = (alpha / 2, 1 - alpha / 2)
        elo_low, elo_high = np.quantile(replicate_elo, q, axis=0, method="linear")
        beta_low, beta_high = (np.quantile(draws.b[:, k:], q, axis=0, method="linear") if p
                               else (np.zeros(0), np.zeros(0)))
        n_replicates, nonidentifiable = draws.replicates, draws.nonidentifiable
        if nonidentifiable:
            notes.append(f"{nonidentifiable} of {n_replicates} bootstrap replicates had a model that never won or "
                         "never lost; they were fitted with the identifiability prior")
    else:
        elo_low = elo_high = np.full(k, np.nan)
        beta_low = beta_high = np.full(p, np.nan)
    if anchor_at is not None:  # the anchor's rating is fixed by definition: no interval of its own
        elo_se[anchor_at] = 0.0
        elo_low[anchor_at] = elo_high[anchor_at] = np.nan
    if prior > 0:
        notes.append("some model never won or never lost (or the comparisons fall apart into groups): the ratings "
                     "use one virtual tie per model against a fixed reference and are not identifiable from the "
                     "votes alone")
    return StyleFit(models, b[:k], elo, elo_se, elo_low, elo_high, design.names, beta, beta_se, beta_low,
                    beta_high, design.mean, design.sd, design.dropped, tuple(notes), cov, prior == 0, prior,
                    float(penalty), interval, float(alpha), anchor, float(rows.count.sum()), iterations, True,
                    NEWTON_TOL, n_replicates, int(seed), nonidentifiable)


def _anchor_index(models: tuple[str, ...], anchor) -> int | None:
    if anchor is None:
        return None
    name, rating = anchor
    if name not in models or not np.isfinite(float(rating)):
        raise StyleInputError(f"`anchor` must name one of the models and a finite rating, got {anchor!r}")
    return models.index(name)


def _elo(theta: np.ndarray, anchor_at: int | None, anchor) -> np.ndarray:
    """Elo of each row of θ: 1500 + (400/ln 10)·θ with Σθ = 0, or anchored (model at rating)."""
    if anchor_at is None:
        return ELO_BASE + ELO_SCALE * (theta - theta.mean(axis=1, keepdims=True))
    return float(anchor[1]) + ELO_SCALE * (theta - theta[:, anchor_at:anchor_at + 1])
