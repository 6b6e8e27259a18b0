"""How many more votes would tell two models apart (docs/methods.md §14): for each adjacent pair of the
Bradley–Terry ranking (and any pair asked for), the extra votes a two-sided Wald test of θ_a − θ_b needs to
reach the chosen power at the current estimate of the gap, if they go to that pair or if they follow the
campaign scheduler (every pair of models served evenly), and the smallest gap the current votes can detect.

The votes and the fit are the ones ``evalboard rank --scheme bt`` uses for the same request
(:func:`core.ranking.request.prepare_votes`; ties half, the votes' weights).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import core.ranking.bradley_terry as bt
from core.decisions import flip_search as search
from core.decisions import plan_math as pm
from core.decisions.robustness import SCORE_OF_OUTCOME, parse_pair
from core.errors import EvalBoardError
from core.ranking import votes_to_rank
from core.ranking.inputs import require_votes_after_policy
from core.ranking.request import PreparedVotes
from core.stats.intervals import wilson
from core.validation import check_alpha, check_integer, check_seed, check_share

DEFAULT_POWER = 0.8
SIMULATION_ALPHA = 0.05  # the simulated power's interval is a 95 % Wilson interval

NOTE_SEPARATED = "already separated: the current test rejects at α, no extra votes needed"
NOTE_ZERO_GAP = "the estimated gap is zero: no number of votes gives power at a gap of zero"
NOTE_UNREACHABLE = f"not reachable within {pm.MAX_EXTRA_VOTES:,} extra votes"
NOTE_SCHEDULED = ("Scheduled extra votes follow the campaign scheduler, which serves every pair of the ranked models "
                  "evenly: the count is the total over all pairs")


class PlanError(EvalBoardError, ValueError):
    """A planning question the votes or the settings cannot answer (unknown model, bad power, one model)."""


@dataclass(frozen=True)
class PairPlan:
    """One pair, model_a ranked above model_b by the current fit."""

    model_a: str
    model_b: str
    gap_elo: float  # current estimate, ≥ 0
    se_elo: float
    p_value: float  # two-sided Wald test of a zero gap
    votes_between: float  # current (weighted) votes on the pair itself
    current_power: float  # power of the test with the current votes, at the current gap
    extra_votes_direct: int | None  # None: not reachable (NOTE_ZERO_GAP or NOTE_UNREACHABLE)
    extra_votes_scheduled: int | None
    min_detectable_elo: float
    separated: bool
    notes: tuple[str, ...] = ()
    simulated_power: float | None = None  # with --simulate: the simulated power of the direct plan
    simulated_power_ci: tuple[float, float] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["notes"] = list(self.notes)
        out["simulated_power_ci"] = list(self.simulated_power_ci) if self.simulated_power_ci else None
        return out


@dataclass(frozen=True)
class Plan:
    alpha: float
    power: float
    pairs: tuple[PairPlan, ...]
    ranking: tuple[str, ...]  # the models, best first
    n_votes: int
    params: dict[str, Any] = field(default_factory=dict)


def parse_pairs(texts: list[str] | tuple[str, ...] | str | None) -> list[tuple[str, str]]:
    """``--pair A,B`` (repeatable): each two different model names."""
    if texts is None:
        return []
    texts = [texts] if isinstance(texts, str) else texts
    try:
        return [parse_pair(text) for text in texts]
    except EvalBoardError as exc:
        raise PlanError(str(exc)) from None


def check_power(power: object, alpha: float) -> float:
    power = check_share(power, "power", below_one=True, error=PlanError)
    if power <= alpha:
        raise PlanError(f"--power must exceed --alpha ({alpha:g}): a test has power α with no difference at all, "
                        f"not {power:g}")
    return power


def plan(prepared: PreparedVotes, pairs: list[tuple[str, str]] | None = None, alpha: float = 0.05,
         power: float = DEFAULT_POWER, simulate: int = 0, seed: int = 0) -> Plan:
    """The plan for the prepared votes: every adjacent pair of the ranking, then each of ``pairs``."""
    alpha = check_alpha(alpha, error=PlanError)
    power = check_power(power, alpha)
    simulate = check_integer(simulate, "--simulate", 0, error=PlanError)
    seed = check_seed(seed, error=PlanError)
    require_votes_after_policy(prepared.before_policy, prepared.votes, prepared.policy.legacy())
    used, golden, _ = votes_to_rank(prepared.votes)
    names = tuple(str(m) for m in used["model_a"].cat.categories)
    weight = used["weight"].to_numpy(dtype=np.float64) if "weight" in used else np.ones(len(used))
    cells, _ = search.pair_cells(used["model_a"].cat.codes.to_numpy(), used["model_b"].cat.codes.to_numpy(),
                                 SCORE_OF_OUTCOME[used["winner"].cat.codes.to_numpy()], weight, len(names))
    fit = search.refit(cells, cells.count)
    rated = np.flatnonzero(~np.isnan(fit.theta))
    if len(rated) < 2:
        raise PlanError("a plan needs votes between at least two models")
    models = tuple(names[m] for m in rated)  # models with weighted votes, renumbered 0..K-1
    code = np.full(len(names), -1)
    code[rated] = np.arange(len(rated))
    keep = (code[cells.i] >= 0) & (code[cells.j] >= 0)
    ci, cj, count = code[cells.i][keep], code[cells.j][keep], cells.count[keep]
    cell_weight = cells.weight[keep] * fit.scale
    theta = fit.theta[rated]
    order = np.lexsort((np.arange(len(theta)), -theta))  # best first; equal ratings: the first name
    asked = [(int(order[r]), int(order[r + 1])) for r in range(len(order) - 1)]
    for pair in pairs or []:
        a, b = _codes(pair, models, names)
        a, b = (a, b) if (theta[a], -a) >= (theta[b], -b) else (b, a)
        if (a, b) not in asked:
            asked.append((a, b))
    info = pm.information(theta, ci, cj, count * cell_weight, fit.prior)
    rows = _pair_plans(info, asked, models, ci, cj, count * cell_weight, alpha, power)
    if simulate:
        rng = np.random.default_rng(seed)
        rows = [_with_simulation(row, theta, ci, cj, count, cell_weight, (a, b), alpha, fit.prior, simulate, rng)
                for row, (a, b) in zip(rows, asked)]
    params = {"policy": prepared.policy.as_dict(), "dimension": prepared.dimension.as_dict(),
              "request": [line for line in (prepared.dimension.describe(), prepared.policy.describe()) if line],
              "golden_votes_excluded": golden, "ties": "half", "weighted": bool(np.any(cells.weight != 1.0)),
              "identifiable": fit.prior == 0, "test": "two-sided Wald test of θ_a − θ_b, information-based SE",
              "scheduled_pairs": len(models) * (len(models) - 1) // 2, "simulate": simulate,
              "seed": seed if simulate else None, "notes": [NOTE_SCHEDULED]}
    return Plan(alpha, power, tuple(rows), tuple(models[m] for m in order), len(used), params)


def _codes(pair: tuple[str, str], models: tuple[str, ...], names: tuple[str, ...]) -> tuple[int, int]:
    unknown = [name for name in pair if name not in models]
    if unknown:
        shown = ", ".join(names[:20]) + (f" … ({len(names)} models)" if len(names) > 20 else "")
        raise PlanError(f"--pair: no analysed votes of {', '.join(map(repr, unknown))}; the models are {shown}")
    return models.index(pair[0]), models.index(pair[1])


def _pair_plans(info: pm.Information, asked: list[tuple[int, int]], models: tuple[str, ...], ci: np.ndarray,
                cj: np.ndarray, votes: np.ndarray, alpha: float, power: float) -> list[PairPlan]:
    a = np.array([p[0] for p in asked])
    b = np.array([p[1] for p in asked])
    gap = np.abs(info.theta[a] - info.theta[b])
    variance = pm.gap_variance(info, a, b)
    ratio = pm.power_ratio(alpha, power)
    with np.errstate(divide="ignore"):
        target = np.where(gap > 0, (gap / ratio) ** 2, 0.0)
    per_vote = pm.win_probability(info.theta, a, b) * (1.0 - pm.win_probability(info.theta, a, b))
    direct = pm.extra_direct(variance, target, per_vote)
    scheduled = pm.extra_scheduled(pm.schedule(info, a, b), target)
    critical = pm.critical_ratio(alpha)
    rows = []
    for n, (x, y) in enumerate(asked):
        se = math.sqrt(variance[n])
        statistic = gap[n] / se if se > 0 else 0.0
        separated = statistic > critical
        notes = []
        if separated:
            extra_d, extra_s = 0, 0
            notes.append(NOTE_SEPARATED)
        elif gap[n] <= search.FLIP_MARGIN:  # equal up to rounding, as the robustness search counts a tie
            extra_d = extra_s = None
            notes.append(NOTE_ZERO_GAP)
        else:
            extra_d, extra_s = _whole(direct[n]), _whole(scheduled[n])
            if extra_d is None or extra_s is None:
                notes.append(NOTE_UNREACHABLE)
        on_pair = float(votes[((ci == x) & (cj == y)) | ((ci == y) & (cj == x))].sum())
        rows.append(PairPlan(models[x], models[y], float(bt.ELO_SCALE * gap[n]), float(bt.ELO_SCALE * se),
                             pm.two_sided_p(statistic), on_pair, pm.wald_power(statistic, alpha),
                             extra_d, extra_s, float(bt.ELO_SCALE * ratio * se), bool(separated), tuple(notes)))
    return rows


def _whole(n: float) -> int | None:
    """Votes are whole: round up (a hair of float error is not one more vote); NaN or too many: None."""
    if not np.isfinite(n) or n > pm.MAX_EXTRA_VOTES:
        return None
    return int(math.ceil(n - 1e-9))


def _with_simulation(row: PairPlan, theta, ci, cj, count, weight, pair, alpha, prior, replicates, rng) -> PairPlan:
    """The direct plan's power simulated from the fitted model (docs/methods.md §14, "Simulation")."""
    if row.extra_votes_direct is None:
        return row
    share = pm.simulate_power(theta, ci, cj, count, weight, pair, row.extra_votes_direct, alpha, prior,
                              replicates, rng)
    hits = round(share * replicates)
    low, high = wilson(hits, replicates, SIMULATION_ALPHA)
    return PairPlan(**{**{name: getattr(row, name) for name in row.__dataclass_fields__},
                       "simulated_power": share, "simulated_power_ci": (low, high)})
