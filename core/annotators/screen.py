"""A sequential screen of each annotator's votes against the fitted Bradley–Terry model (docs/methods.md §17).

No golden questions are needed: the votes themselves are the evidence. One plain BT fit (ties half) on the
screened votes gives every decisive vote the probability q that the model gives its winner. Each
annotator's votes are then read in time order (timestamp, then vote_id, then row order) and a running
likelihood ratio compares "this annotator votes by the model" (the null) with "this annotator votes by the
model only with reliability η, and by the reverse otherwise": P_alt(observed) = η·q + (1 − η)·(1 − q).
η = 0 is a voter who votes against the model, η = 0.5 one who votes at random; the alternative is the
equal-weight mixture over η ∈ :data:`RELIABILITIES`, whose likelihood ratio is the average of the per-η
ratios. Under the null every per-η ratio is a non-negative martingale with mean 1, and so is their
average; by Ville's inequality it ever reaches 1/α with probability at most α. So an honest annotator is
flagged with probability ≤ α however long they are watched, and the screen may stop at the first vote
where the ratio reaches 1/α (``flagged_at_vote``).

Ties (and both-bad ties) neither support nor contradict the model's order: they leave the ratio unchanged
(they still count in ``votes_seen``). Golden-question votes are left out (golden accuracy judges them), as
are votes without an annotator.

Why the plain fit, not one that leaves each annotator out: with many annotators each holds a small share
of the votes, and a contaminated fit only shrinks the fitted probabilities towards ½, which makes an honest
annotator's votes look *more* typical, not less (the screen becomes conservative, it does not flag more).
Leaving each of 500 annotators out would cost 500 refits. An annotator who casts most of the votes can
pull the fit towards themselves and escape the screen: docs/methods.md §17 says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.annotators.quality import _codes
from core.errors import SettingError
from core.ranking.bradley_terry import fit as fit_bt
from core.schema import OUTCOME_CODE

SCREEN_ALPHA = 0.05  # the level of the qualification rule "screen" (docs/methods.md §7, §17)
RELIABILITIES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)  # η of the alternatives, equal weights
PROB_FLOOR = 1e-9  # keeps log q finite where the fit gives a model a strength of 0
METHOD = ("sequential likelihood ratio against the plain Bradley–Terry fit; alternative: reliability η "
          f"∈ {{{', '.join(f'{r:g}' for r in RELIABILITIES)}}} (equal-weight mixture); stopped at 1/α (Ville); "
          "ties leave the ratio unchanged")
COLUMNS = ("annotator_id", "votes_seen", "decisive", "flagged", "flagged_at_vote", "log_lr", "max_log_lr",
           "final_log_lr")


@dataclass(frozen=True)
class ScreenResult:
    """The screen of every annotator (docs/methods.md §17).

    ``annotators``: one row per screened annotator (:data:`COLUMNS`): votes read, decisive ones, flagged or
    not, the 1-based vote at which the ratio first reached 1/α (0 when never), the log ratio there (else the
    last one), its maximum and its last value. ``path``: the running log ratio of every screened vote, the
    annotators one after the other in screen order (``starts`` marks where each annotator's block begins,
    in the order of ``annotators``). ``reason``: why nobody was screened (else None).
    """

    alpha: float
    annotators: pd.DataFrame = field(repr=False)
    n_votes: int
    path: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    starts: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))
    reason: str | None = None

    @property
    def threshold(self) -> float:
        """log(1/α): the log ratio at which an annotator is flagged."""
        return float(np.log(1.0 / self.alpha))

    @property
    def flagged(self) -> tuple[str, ...]:
        rows = self.annotators[self.annotators["flagged"]]
        return tuple(rows["annotator_id"].astype(str))

    def running_log_lr(self, annotator_id: str) -> np.ndarray:
        """The running log likelihood ratio over one annotator's votes, in screen order."""
        names = self.annotators["annotator_id"].astype(str).tolist()
        if annotator_id not in names:
            raise KeyError(f"annotator {annotator_id!r} was not screened")
        i = names.index(annotator_id)
        end = self.starts[i + 1] if i + 1 < len(self.starts) else len(self.path)
        return self.path[self.starts[i]:end]

    def as_dict(self) -> dict[str, Any]:
        """The ``screen`` block of ``evalboard annotators --format json``."""
        flagged = [{"annotator_id": str(r["annotator_id"]), "votes_seen": int(r["votes_seen"]),
                    "flagged_at_vote": int(r["flagged_at_vote"]), "log_lr": float(r["log_lr"])}
                   for r in self.annotators[self.annotators["flagged"]].to_dict("records")]
        return {"alpha": self.alpha, "method": METHOD, "threshold_log_lr": self.threshold,
                "n_annotators": int(len(self.annotators)), "n_votes": self.n_votes, "flagged": flagged,
                "reason": self.reason}


def screen_votes(votes: pd.DataFrame, alpha: float = SCREEN_ALPHA) -> ScreenResult:
    """Screen every annotator of ``votes`` (a canonical votes frame, categorical or plain columns)."""
    if not 0.0 < alpha < 1.0:
        raise SettingError(f"the screen's alpha must lie in (0, 1), not {alpha}")
    if "annotator_id" not in votes:
        return _empty(alpha, "no annotator_id column: there is nobody to screen (add a column of annotator "
                             "ids, e.g. mapped with --map annotator_id=SOURCE)")
    keep = votes["annotator_id"].notna().to_numpy().copy()
    if "is_golden" in votes:
        keep &= ~votes["is_golden"].to_numpy(dtype=bool)
    frame = votes[keep] if not keep.all() else votes
    if len(frame) == 0:
        return _empty(alpha, "no vote with an annotator outside the golden questions")
    left, right, models = _model_codes(frame)
    outcome = _outcome_codes(frame["winner"])
    usable = (left != right) & (left >= 0) & (right >= 0) & (outcome >= 0)
    if not usable.all():
        frame, left, right, outcome = frame[usable], left[usable], right[usable], outcome[usable]
    if len(frame) == 0:
        return _empty(alpha, "no vote between two different models")
    used, codes = np.unique(np.r_[left, right], return_inverse=True)  # models without a vote stay out of the fit
    left, right = codes[:len(left)], codes[len(left):]
    pi = _fitted_strengths(left, right, outcome, len(used))
    step = _log_factors(pi[left], pi[right], outcome)
    who, names = _codes(frame["annotator_id"])
    order = _screen_order(frame, who)
    who, step = who[order], step[order]
    counts = np.bincount(who, minlength=len(names))
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    path = _running_mixture(step, starts, counts)
    return ScreenResult(alpha, _summary(names, who, step, path, starts, counts, alpha), int(len(frame)), path,
                        starts.astype(np.int64))


def _empty(alpha: float, reason: str) -> ScreenResult:
    return ScreenResult(alpha, pd.DataFrame({c: [] for c in COLUMNS}).astype(
        {"votes_seen": int, "decisive": int, "flagged": bool, "flagged_at_vote": int}), 0, reason=reason)


def _model_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer codes of model_a and model_b over one shared list of models, and its length."""
    a, b = frame["model_a"], frame["model_b"]
    if isinstance(a.dtype, pd.CategoricalDtype) and isinstance(b.dtype, pd.CategoricalDtype) and \
            list(a.cat.categories) == list(b.cat.categories):
        return a.cat.codes.to_numpy().astype(np.int64), b.cat.codes.to_numpy().astype(np.int64), \
            len(a.cat.categories)
    codes, uniques = pd.factorize(pd.concat([a.astype(str), b.astype(str)], ignore_index=True))
    return codes[:len(a)].astype(np.int64), codes[len(a):].astype(np.int64), len(uniques)


def _outcome_codes(winner: pd.Series) -> np.ndarray:
    """core.schema.OUTCOMES codes (0 model_a, 1 model_b, 2 tie, 3 both bad); -1 where unknown."""
    if isinstance(winner.dtype, pd.CategoricalDtype):
        table = np.array([OUTCOME_CODE.get(str(c), -1) for c in winner.cat.categories] + [-1], dtype=np.int64)
        return table[winner.cat.codes.to_numpy()]
    return winner.map(OUTCOME_CODE).fillna(-1).to_numpy(dtype=np.int64)


def _fitted_strengths(left: np.ndarray, right: np.ndarray, outcome: np.ndarray, k: int) -> np.ndarray:
    """BT strengths π (mean 1) of the votes, ties half a win each (docs/methods.md §2: the plain fit)."""
    score = np.where(outcome == 0, 1.0, np.where(outcome == 1, 0.0, 0.5))
    wins = np.bincount(left * k + right, weights=score, minlength=k * k) + \
        np.bincount(right * k + left, weights=1.0 - score, minlength=k * k)
    return fit_bt(wins.reshape(k, k), [str(i) for i in range(k)]).pi


def _log_factors(pi_left: np.ndarray, pi_right: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Per vote × η: log of P_alt(observed) / P_model(observed); 0 for ties."""
    p_left = pi_left / (pi_left + pi_right)
    q = np.clip(np.where(outcome == 0, p_left, 1.0 - p_left), PROB_FLOOR, 1.0 - PROB_FLOOR)
    eta = np.asarray(RELIABILITIES)[None, :]
    step = np.log(eta * q[:, None] + (1.0 - eta) * (1.0 - q[:, None])) - np.log(q)[:, None]
    step[outcome >= 2] = 0.0
    return step


def _screen_order(frame: pd.DataFrame, who: np.ndarray) -> np.ndarray:
    """Row positions by annotator, then timestamp (missing times first), then vote_id, then row order. vote_id
    is read only where an annotator has two votes at one instant (ordering text ids costs time)."""
    rows = np.arange(len(frame))
    times = _time_codes(frame["timestamp"]) if "timestamp" in frame else np.zeros(len(frame), dtype=np.int64)
    order = np.lexsort((rows, times, who))
    same = (who[order][1:] == who[order][:-1]) & (times[order][1:] == times[order][:-1])
    if "vote_id" in frame and same.any():
        ids = pd.factorize(frame["vote_id"], sort=True)[0]  # missing ids (-1) first
        order = np.lexsort((rows, ids, times, who))
    return order


def _time_codes(column: pd.Series) -> np.ndarray:
    """Integers in time order (datetimes: nanoseconds, UTC; missing: the smallest)."""
    if column.dtype.kind == "M" or isinstance(column.dtype, pd.DatetimeTZDtype):
        return pd.DatetimeIndex(column).asi8
    return pd.factorize(column, sort=True)[0].astype(np.int64)


def _running_mixture(step: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """log of the equal-weight mixture over η of each annotator's running product of ratios."""
    per_eta = np.cumsum(step, axis=0)
    before = np.where((starts > 0)[:, None], per_eta[np.maximum(starts - 1, 0)], 0.0)  # the sum before each block
    per_eta -= np.repeat(before, counts, axis=0)
    top = per_eta.max(axis=1)
    per_eta -= top[:, None]
    return top + np.log(np.exp(per_eta, out=per_eta).mean(axis=1))


def _summary(names, who: np.ndarray, step: np.ndarray, path: np.ndarray, starts: np.ndarray, counts: np.ndarray,
             alpha: float) -> pd.DataFrame:
    threshold = np.log(1.0 / alpha)
    position = np.arange(len(path)) - starts[who]
    crossing = np.where(path >= threshold, position, np.iinfo(np.int64).max)
    first = np.full(len(names), np.iinfo(np.int64).max)
    np.minimum.at(first, who, crossing)
    flagged = first < np.iinfo(np.int64).max
    last = starts + counts - 1
    at = np.where(flagged, starts + np.where(flagged, first, 0), last)
    maximum = np.full(len(names), -np.inf)
    np.maximum.at(maximum, who, path)
    decisive = np.bincount(who, weights=(step[:, 0] != 0.0), minlength=len(names)).astype(int)
    return pd.DataFrame({"annotator_id": [str(n) for n in names], "votes_seen": counts.astype(int),
                         "decisive": decisive, "flagged": flagged,
                         "flagged_at_vote": np.where(flagged, first + 1, 0).astype(int), "log_lr": path[at],
                         "max_log_lr": maximum, "final_log_lr": path[last]})


def flagged_reason(row: dict[str, Any], alpha: float) -> str:
    """The quality table's reason for an annotator the screen flagged."""
    return (f"flagged by the sequential screen at vote {int(row['flagged_at_vote'])} of {int(row['votes_seen'])} "
            f"(likelihood ratio {np.exp(min(row['log_lr'], 700.0)):.3g} ≥ 1/α = {1 / alpha:g})")


def mark_unqualified(quality: pd.DataFrame, screen: ScreenResult) -> pd.DataFrame:
    """The quality table under the qualification rule "screen": the annotators the screen flagged are
    unqualified (with the reason), and one it read and cleared is evaluable (qualified unless another rule
    failed them)."""
    if len(quality) == 0 or len(screen.annotators) == 0:
        return quality
    rows = screen.annotators.set_index("annotator_id")
    quality = quality.copy()
    reasons, statuses = [], []
    for name, reason_list, status in zip(quality["annotator_id"].astype(str), quality["reasons"],
                                         quality["status"]):
        reason_list = list(reason_list)
        if name in rows.index and rows.at[name, "flagged"]:
            reason_list.append(flagged_reason({"annotator_id": name, **rows.loc[name].to_dict()}, screen.alpha))
            status = "unqualified"
        elif name in rows.index and status == "not_evaluable":
            status = "qualified"
        reasons.append(reason_list)
        statuses.append(status)
    quality["reasons"], quality["status"] = reasons, statuses
    return quality
