"""A campaign's rank target: serve the pair whose next vote brings the target's separation closest.

docs/methods.md §14 "Campaign target" gives the method and its sources. In short:

* The target's pairs are adjacent in the current ranking: ``top:N`` is ranks (1, 2), …, (N, N + 1) (ranks
  1 to N told apart from each other and from rank N + 1); ``adjacent`` is every (r, r + 1).
* Strengths θ are a Bradley–Terry fit of the campaign's results on its first dimension (ties count half to
  each side), with the weak prior of active sampling (one virtual win and loss per model against a
  reference at θ = 0) so the fit is finite from the first vote. The fit is stored with the campaign and refitted
  only when the votes have grown by :data:`REFIT_SHARE` (at least :data:`REFIT_MIN` votes): a serve reads
  one row instead of fitting.
* The information matrix counts the comparisons *served* (a vote not yet cast carries the same expected
  information, p(1 − p), as one cast), so concurrent annotators spread over pairs instead of all drawing
  the same one. Its inverse Σ gives Var(θ_a − θ_b) = cᵀΣc.
* One more comparison of pair (k, l) adds w·uuᵀ (u = e_k − e_l, w = p_kl(1 − p_kl)) to the information;
  by Sherman–Morrison each target pair's variance becomes cᵀΣc − w(cᵀΣu)² / (1 + w·uᵀΣu). The pair served
  is the one that makes max over target pairs of Var(θ_a − θ_b) / gap² smallest (the hardest target pair
  is the one that decides when the target is reached), ties broken by the sum of those ratios.
* The target is reached when every target pair's (1 − α) interval of θ_a − θ_b, from the votes cast,
  excludes 0 at :data:`TARGET_ALPHA`. The scheduler checks it at each refit and remembers the first time
  (``reached_at``): from then on, and until each pair has :data:`WARMUP_VOTES` votes, the campaign is
  served balanced (core.campaign.scheduler rule 3).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from core.campaign.store import Campaign
from core.ranking.bradley_terry import ELO_SCALE

TARGET_ALPHA = 0.05  # the level at which a target pair counts as separated (two-sided)
WARMUP_VOTES = 1  # votes on every pair before the target steers: the fit then sees every pair once
REFIT_SHARE = 0.05  # refit when the votes have grown by this share since the stored fit …
REFIT_MIN = 10  # … and by at least this many votes
PRIOR = 1.0  # virtual wins and losses per model against a reference (as active sampling)
NEWTON_TOL, NEWTON_MAX_STEPS, NEWTON_MAX_STEP = 1e-9, 100, 2.0  # a step is capped: no overshoot from θ = 0
GAP_FLOOR = 1e-3  # θ units: a pair fitted exactly level still gets a finite (huge) ratio
PAIR_COLUMNS = ("id", "model_lo", "model_hi", "shown", "judged", "lo_score")  # what the target reads of a pair


@dataclass(frozen=True)
class TargetPair:
    """One target pair: the higher-ranked model, the lower one, and their fitted gap with its interval."""

    rank: int  # rank of ``higher`` (1 = first)
    higher: str
    lower: str
    gap: float  # θ_higher − θ_lower, Elo points
    ci_low: float
    ci_high: float
    votes: int  # direct votes on this pair

    @property
    def separated(self) -> bool:
        return bool(self.ci_low > 0)


@dataclass(frozen=True)
class TargetState:
    """Where a campaign stands against its rank target (for ``campaign status`` and the admin page)."""

    target: str
    label: str
    votes: int  # votes cast on real pairs (first dimension)
    warming_up: bool  # some pair has fewer than WARMUP_VOTES votes: served balanced until then
    pairs: tuple[TargetPair, ...]
    reached_at: int | None = None  # votes at which the scheduler saw it reached (served balanced since)
    alpha: float = TARGET_ALPHA

    @property
    def separated_now(self) -> bool:
        return not self.warming_up and bool(self.pairs) and all(p.separated for p in self.pairs)

    @property
    def reached(self) -> bool:
        return self.reached_at is not None or self.separated_now

    def to_dict(self) -> dict:
        return {"target": self.target, "label": self.label, "alpha": self.alpha, "votes": self.votes,
                "warming_up": self.warming_up, "reached": self.reached, "reached_at": self.reached_at,
                "separated_now": self.separated_now,
                "pairs": [{"rank": p.rank, "higher": p.higher, "lower": p.lower, "gap_elo": round(p.gap, 2),
                           "ci_low": round(p.ci_low, 2), "ci_high": round(p.ci_high, 2), "votes": p.votes,
                           "separated": p.separated} for p in self.pairs]}


def target_label(target: str | None) -> str:
    """``top:3`` → "ranks 1–3 separated from each other and from rank 4"; None → "none"."""
    if not target:
        return "none"
    if target == "adjacent":
        return "every rank separated from the next"
    n = int(target.split(":")[1])
    if n == 1:
        return "rank 1 separated from rank 2"
    return f"ranks 1–{n} separated from each other and from rank {n + 1}"


def target_indices(target: str, theta: np.ndarray) -> list[tuple[int, int]]:
    """The target's pairs as (higher, lower) model indices, adjacent in the ranking by θ (ties by index)."""
    order = np.argsort(-theta, kind="stable")
    last = theta.size - 1 if target == "adjacent" else min(int(target.split(":")[1]), theta.size - 1)
    return [(int(order[r]), int(order[r + 1])) for r in range(last)]


def fit_theta(models: list[str], pairs: list[tuple]) -> np.ndarray:
    """θ (log strengths; the prior's reference at 0) from the pairs' results, ``pairs`` rows as
    :data:`PAIR_COLUMNS`: the maximum of the likelihood of active sampling's MM fit (docs/methods.md §2, prior
    c = :data:`PRIOR`), found by Newton's method, which the prior makes strictly concave: a few steps."""
    index = {m: i for i, m in enumerate(models)}
    wins = np.zeros((len(models), len(models)))
    for _, lo, hi, _, judged, lo_score in pairs:
        wins[index[lo], index[hi]] += lo_score
        wins[index[hi], index[lo]] += judged - lo_score
    counts, scores = wins + wins.T, wins.sum(axis=1) + PRIOR
    theta = np.zeros(len(models))
    for _ in range(NEWTON_MAX_STEPS):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        gradient = scores - (counts * p).sum(axis=1) - 2.0 * PRIOR / (1.0 + np.exp(-theta))
        step = np.linalg.solve(information(theta, counts), gradient)
        theta = theta + np.clip(step, -NEWTON_MAX_STEP, NEWTON_MAX_STEP)
        if np.max(np.abs(step)) < NEWTON_TOL:
            break
    return theta


def information(theta: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Fisher information of θ for ``counts[i, j]`` comparisons of i and j (symmetric), with the prior's."""
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
    weight = counts * p * (1.0 - p)
    info = -weight
    np.fill_diagonal(info, weight.sum(axis=1) - np.diag(weight))
    reference = 1.0 / (1.0 + np.exp(-theta))
    return info + np.diag(2.0 * PRIOR * reference * (1.0 - reference))


def contrast_variances(sigma: np.ndarray, targets: list[tuple[int, int]]) -> np.ndarray:
    """Var(θ_a − θ_b) for each target pair (a, b) under covariance ``sigma``."""
    a, b = (np.array(x, dtype=int) for x in zip(*targets, strict=True))
    return sigma[a, a] + sigma[b, b] - 2.0 * sigma[a, b]


def pair_scores(theta: np.ndarray, served: np.ndarray, candidates: list[tuple[int, int]],
                targets: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """For one more vote on each candidate pair: (max, sum) over target pairs of Var(θ_a − θ_b)/gap² after it."""
    sigma = np.linalg.inv(information(theta, served))
    ta, tb = (np.array(x, dtype=int) for x in zip(*targets, strict=True))
    ck, cl = (np.array(x, dtype=int) for x in zip(*candidates, strict=True))
    variance = contrast_variances(sigma, targets)
    # cᵀΣu for target c = e_a − e_b and candidate u = e_k − e_l: a (targets × candidates) table.
    cross = (sigma[np.ix_(ta, ck)] - sigma[np.ix_(ta, cl)] - sigma[np.ix_(tb, ck)] + sigma[np.ix_(tb, cl)])
    spread = sigma[ck, ck] + sigma[cl, cl] - 2.0 * sigma[ck, cl]  # uᵀΣu
    p = 1.0 / (1.0 + np.exp(theta[cl] - theta[ck]))
    w = p * (1.0 - p)
    after = variance[:, None] - w[None, :] * cross ** 2 / (1.0 + w * spread)[None, :]
    gap2 = np.maximum(np.abs(theta[ta] - theta[tb]), GAP_FLOOR) ** 2
    ratio = after / gap2[:, None]
    return ratio.max(axis=0), ratio.sum(axis=0)


def stored_fit(conn: sqlite3.Connection, campaign: Campaign, models: list[str],
               pairs: list[tuple]) -> tuple[np.ndarray, int | None]:
    """The campaign's stored θ and the votes at which the target was reached (None: not yet), refitted and
    stored when the votes have grown enough since the last fit.

    The target is checked at each refit, and once reached it stays reached: the campaign is served balanced
    from then on instead of switching back and forth while an interval's end hovers around 0. Called inside
    the serve's write transaction, so every process sees the same fit for the same votes.
    """
    judged = int(sum(p[4] for p in pairs))
    row = conn.execute("SELECT judged, theta, reached_at FROM campaign_target_fit WHERE campaign_id = ?",
                       [campaign.id]).fetchone()
    reached_at = None if row is None else row[2]
    if row is not None and row[0] <= judged < row[0] + max(REFIT_MIN, REFIT_SHARE * row[0]):
        fitted = json.loads(row[1])
        if set(fitted) == set(models):
            return np.array([fitted[m] for m in models]), reached_at
    theta = fit_theta(models, pairs)
    if reached_at is None and separated(campaign.rank_target, theta, _counts(models, pairs, column=4)).all():
        reached_at = judged
    conn.execute("INSERT INTO campaign_target_fit (campaign_id, judged, theta, reached_at) VALUES (?, ?, ?, ?) "
                 "ON CONFLICT (campaign_id) DO UPDATE SET judged = excluded.judged, theta = excluded.theta, "
                 "reached_at = excluded.reached_at",
                 [campaign.id, judged, json.dumps(dict(zip(models, theta.tolist(), strict=True))), reached_at])
    return theta, reached_at


def separated(target: str, theta: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """Per target pair: whether the (1 − α) interval of θ_a − θ_b excludes 0 (α = :data:`TARGET_ALPHA`)."""
    targets = target_indices(target, theta)
    if not targets:
        return np.zeros(0, dtype=bool)
    variance = contrast_variances(np.linalg.inv(information(theta, judged)), targets)
    gaps = np.array([theta[a] - theta[b] for a, b in targets])
    return gaps - norm.ppf(1 - TARGET_ALPHA / 2) * np.sqrt(variance) > 0


def target_order(conn: sqlite3.Connection, campaign: Campaign, pairs: list[tuple]) -> list[tuple] | None:
    """``pairs`` (the scheduler's rows: id, model_lo, model_hi, shown, lo_left, judged, lo_score, …) best first
    for the target, or None when the campaign is served balanced: no target, still warming up, or the
    target reached."""
    if not campaign.rank_target or not pairs or min(p[5] for p in pairs) < WARMUP_VOTES:
        return None
    rows = [(p[0], p[1], p[2], p[3], p[5], p[6]) for p in pairs]  # as PAIR_COLUMNS
    models = sorted({m for p in pairs for m in p[1:3]})
    theta, reached_at = stored_fit(conn, campaign, models, rows)
    targets = target_indices(campaign.rank_target, theta)
    if reached_at is not None or not targets:
        return None  # balanced serving from here on
    index = {m: i for i, m in enumerate(models)}
    candidates = [(index[p[1]], index[p[2]]) for p in pairs]
    worst, total = pair_scores(theta, _counts(models, rows, column=3), candidates, targets)
    # Rounded so that float noise does not decide; the scheduler's balanced order (least shown first, ties
    # at random), which is the order of ``pairs``, breaks exact ties.
    order = np.lexsort((np.arange(len(pairs)), np.round(total, 12), np.round(worst, 12)))
    return [pairs[i] for i in order]


def target_state(conn: sqlite3.Connection, campaign: Campaign, target: str | None = None) -> TargetState | None:
    """The campaign's target (or ``target``, a stored form such as ``top:3``) and how far the votes cast are
    from it (a fresh fit); None without a target."""
    target = target or campaign.rank_target
    if not target:
        return None
    rows = conn.execute(f"SELECT {', '.join(PAIR_COLUMNS)} FROM campaign_pairs WHERE campaign_id = ? ORDER BY id",
                        [campaign.id]).fetchall()
    votes = int(sum(r[4] for r in rows))
    warming_up = not rows or min(r[4] for r in rows) < WARMUP_VOTES
    if not rows:
        return TargetState(target, target_label(target), votes, warming_up, ())
    models = sorted({m for r in rows for m in r[1:3]})
    index = {m: i for i, m in enumerate(models)}
    theta = fit_theta(models, rows)
    judged = _counts(models, rows, column=4)
    targets = target_indices(target, theta)
    z = norm.ppf(1 - TARGET_ALPHA / 2)
    se = np.sqrt(contrast_variances(np.linalg.inv(information(theta, judged)), targets)) if targets else []
    direct = {(index[r[1]], index[r[2]]): r[4] for r in rows}
    pairs = []
    for rank, ((a, b), s) in enumerate(zip(targets, se, strict=True), start=1):
        gap = float(theta[a] - theta[b])
        pairs.append(TargetPair(rank, models[a], models[b], ELO_SCALE * gap, float(ELO_SCALE * (gap - z * s)),
                                float(ELO_SCALE * (gap + z * s)), int(direct.get((a, b), direct.get((b, a), 0)))))
    stored = conn.execute("SELECT reached_at FROM campaign_target_fit WHERE campaign_id = ?",
                          [campaign.id]).fetchone() if target == campaign.rank_target else None
    return TargetState(target, target_label(target), votes, warming_up, tuple(pairs),
                       reached_at=None if stored is None else stored[0])


def _counts(models: list[str], rows: list[tuple], column: int) -> np.ndarray:
    index = {m: i for i, m in enumerate(models)}
    i = np.fromiter((index[r[1]] for r in rows), dtype=int, count=len(rows))
    j = np.fromiter((index[r[2]] for r in rows), dtype=int, count=len(rows))
    values = np.fromiter((r[column] for r in rows), dtype=float, count=len(rows))
    counts = np.zeros((len(models), len(models)))
    np.add.at(counts, (i, j), values)
    return counts + counts.T
