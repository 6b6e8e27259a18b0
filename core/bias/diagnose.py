"""Bias diagnostics of pairwise human votes (docs/methods.md §4) and raw-versus-corrected rankings (§5, §6).

``diagnose`` runs the six tests of docs/methods.md §4 on a canonical votes frame (core.io / core.store output):
(a) position, (b) order within a session, (c) model position, (d) time exposure, (e) length and
(f) pairing uniformity, plus the IPW design summary of §6. Golden-question votes are left out of every
test (docs/methods.md §0) except the golden accuracy of the order test (§4b), which is what they exist for.
A test whose columns are missing returns :class:`Unavailable` instead of raising: a file without
timestamps still deserves the other five answers. ``corrections`` puts raw and corrected ratings side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import chi2_contingency

from core.bias.corrections import Corrections, corrections
from core.formats import p_text
from core.ranking import RankSettings, analysed_votes, rank_votes, without_absent_models
from core.ranking.periods import early_period
from core.ranking.schemes.ipw import ipw_weights
from core.stats.significance import (
    Binomial,
    Logit,
    PairingTest,
    TwoProportions,
    binomial,
    holm,
    logit_fit,
    pairing_test,
    two_proportions,
    weighted_score_test,
)
from core.validation import check_alpha

LEFT, RIGHT = 0, 1  # winner codes of core.schema.OUTCOMES (model_a = left, model_b = right)
# A share (or a change of share) smaller than this is reported as "small" even when significant: with
# 20,000 votes a 1-point lean has p ≈ 0.005, real but too small to change a ranking. 2 points is where
# a left/right or early/late lean starts to move Elo ratings by more than their usual CI (~±10).
PRACTICAL_SHARE = 0.02


def points(effect: float) -> str:
    """An effect on a share in percentage points: "+1.3 points"."""
    return f"{effect * 100:+.1f} points" if np.isfinite(effect) else "effect undefined"


def judged(effect: float, detected: bool) -> tuple[bool, bool]:
    """(detected, practical): practical = detected and |effect| ≥ PRACTICAL_SHARE."""
    detected = bool(detected)
    return detected, bool(detected and np.isfinite(effect) and abs(effect) >= PRACTICAL_SHARE)


def conclusion(detected: bool, practical: bool, bias: str, none: str) -> str:
    """The end of a verdict: the bias, the bias called small (detectable, under PRACTICAL_SHARE), or
    ``none``; ``bias`` and ``none`` are sentences ending in a full stop."""
    if practical:
        return bias
    if detected:
        return (f"{bias[:-1]}, statistically detectable but small (under the {PRACTICAL_SHARE * 100:.0f}-point "
                "practical threshold).")
    return none


@dataclass(frozen=True)
class Unavailable:  # a test the columns do not allow; reported, never raised
    reason: str


@dataclass(frozen=True)
class PositionTest:
    test: Binomial
    ipw_share: float  # P(left | decisive) under IPW weights (docs/methods.md §4a weighted score test)
    ipw_n_eff: float
    ipw_z: float
    ipw_p_value: float
    verdict: str
    effect: float = float("nan")  # share − 0.5 (proportion units)
    detected: bool = False  # p < alpha
    practical: bool = False  # detected and |effect| ≥ PRACTICAL_SHARE


@dataclass(frozen=True)
class OrderTest:
    n_annotators: int
    decisive: TwoProportions  # decisive share of non-golden votes, early vs late in a session
    accuracy: TwoProportions | None
    accuracy_source: str  # "golden" or "bt_favourite"
    verdict: str
    ordered_by: str = "timestamp"  # or "file order": no timestamps, sessions follow the rows of the file
    effect: float = float("nan")  # late − early share of the largest detected change (else of decisive votes)
    detected: bool = False
    practical: bool = False


@dataclass(frozen=True)
class ModelShare:
    model: str
    test: Binomial
    p_holm: float
    detected: bool = False  # Holm-adjusted p < alpha: this model's share differs from p0


@dataclass(frozen=True)
class TableTest:
    """Per-model binomials with Holm, and the χ² independence test of the M×2 table (§4c, §4d)."""
    chi2: float
    df: int
    p_value: float
    p0: float
    per_model: tuple[ModelShare, ...]
    verdict: str
    effect: float = float("nan")  # share − p0 of the model furthest from p0 among those Holm flags (else of all)
    detected: bool = False  # χ² p < alpha or a model flagged
    practical: bool = False  # a flagged model at least PRACTICAL_SHARE from p0


@dataclass(frozen=True)
class LengthTest:
    test: Binomial  # k = decisive votes won by the longer answer
    fit: Logit  # y = 1[left chosen] on f = (len_l - len_r)/(len_l + len_r + 1)
    verdict: str
    effect: float = float("nan")  # share won by the longer answer − 0.5
    detected: bool = False
    practical: bool = False  # detected and the share is at least PRACTICAL_SHARE from 0.5


@dataclass(frozen=True)
class IpwSummary:
    n_eff: float
    design_effect: float
    empty_cells: int
    grid_cells: int
    truncated: int


@dataclass(frozen=True)
class BiasReport:
    n_votes: int  # analysed (non-golden) votes
    n_golden: int
    alpha: float
    position: PositionTest | Unavailable
    order: OrderTest | Unavailable
    model_position: TableTest | Unavailable
    time_exposure: TableTest | Unavailable
    length: LengthTest | Unavailable
    pairing: PairingTest | Unavailable
    ipw: IpwSummary | Unavailable
    corrections: Corrections | Unavailable | None = None


def session_halves(annotator_codes: np.ndarray, order_key: np.ndarray | None,
                   vote_id=None) -> tuple[np.ndarray, np.ndarray]:
    """(early, late) masks of docs/methods.md §4b: per annotator, rank r = 1..n_a in (timestamp, vote_id) order
    (row order without timestamps); early iff r < (n_a+1)/2, late iff r > (n_a+1)/2; n_a < 2 drops out.
    Rows with a missing annotator (code −1) are in neither half."""
    n = len(annotator_codes)
    rows = np.arange(n)
    key = rows if order_key is None else order_key
    order = np.lexsort((rows, key, annotator_codes))
    if order_key is not None and vote_id is not None:
        a_s, k_s = annotator_codes[order], key[order]
        tied_next = (a_s[1:] == a_s[:-1]) & (k_s[1:] == k_s[:-1])
        if tied_next.any():  # equal times: break the tie by vote_id
            # Only rows sharing (annotator, time) with another need a vote_id rank; ranking just those
            # orders every tie exactly as ranking all ids would, without sorting a million strings.
            tied = np.zeros(n, bool)
            tied[order[1:][tied_next]] = True
            tied[order[:-1][tied_next]] = True
            vid = np.zeros(n, np.int64)
            vid[tied] = pd.factorize(pd.Series(vote_id).reset_index(drop=True)[tied], sort=True)[0]
            order = np.lexsort((rows, vid, key, annotator_codes))
    a_sorted = annotator_codes[order]
    start = np.r_[True, a_sorted[1:] != a_sorted[:-1]]
    group = np.cumsum(start) - 1
    first = np.flatnonzero(start)
    size = np.diff(np.r_[first, n])[group]
    r = np.arange(n) - first[group] + 1
    valid = (a_sorted >= 0) & (size >= 2)
    early, late = np.zeros(n, bool), np.zeros(n, bool)
    early[order] = valid & (2 * r < size + 1)
    late[order] = valid & (2 * r > size + 1)
    return early, late


def _pct(x: int, n: int) -> str:
    return f"{x / n:.0%}" if n else "–"


def diagnose(votes: pd.DataFrame, alpha: float = 0.05, with_corrections: bool = True) -> BiasReport:
    """All docs/methods.md §4 diagnostics of a canonical votes frame; see the module docstring."""
    check_alpha(alpha)
    used, n_golden = analysed_votes(votes)
    used = without_absent_models(used)[0]
    if len(used) == 0:
        none = Unavailable("no analysed votes (golden-question votes are not used)")
        return BiasReport(0, n_golden, alpha, none, none, none, none, none, none, none,
                          none if with_corrections else None)
    a = used["model_a"].cat.codes.to_numpy().astype(np.int64)
    b = used["model_b"].cat.codes.to_numpy().astype(np.int64)
    win = used["winner"].cat.codes.to_numpy()
    models = [str(m) for m in used["model_a"].cat.categories]
    has_time = "timestamp" in used and not used["timestamp"].isna().all()
    weights, info = ipw_weights(used)
    return BiasReport(
        len(used), n_golden, alpha, _position(win, weights, alpha), _order(votes, used, alpha),
        _model_position(a, b, models, alpha),
        _time_exposure(used, a, b, models, alpha) if has_time else Unavailable("no timestamp column"),
        _length(used, win, alpha), _pairing(a, b, len(models), alpha),
        IpwSummary(info["n_eff"], info["design_effect"], info["empty_cells"], info["grid_cells"], info["truncated"]),
        _corrections(used) if with_corrections else None)


def _position(win: np.ndarray, weights: np.ndarray, alpha: float) -> PositionTest:
    decisive = win <= RIGHT
    k, n = int((win == LEFT).sum()), int(decisive.sum())
    test = binomial(k, n, 0.5, alpha)
    share, n_eff, z, p_w = weighted_score_test(win[decisive] == LEFT, weights[decisive])
    effect = test.share - 0.5 if n else float("nan")
    detected, practical = judged(effect, n > 0 and test.p_value < alpha)
    if n == 0:
        verdict = "No decisive votes: position bias cannot be assessed."
    else:
        side = "left" if test.share >= 0.5 else "right"
        verdict = (f"The left answer is chosen {test.share:.1%} of the time ({k} of {n} decisive votes, "
                   f"{points(effect)} from 50%, {p_text(test.p_value)}): "
                   + conclusion(detected, practical, f"a position bias toward the {side}.",
                                "no evidence of a position bias."))
    return PositionTest(test, share, n_eff, z, p_w, verdict, effect, detected, practical)


def _order(votes: pd.DataFrame, used: pd.DataFrame, alpha: float) -> OrderTest | Unavailable:
    if "annotator_id" not in votes or votes["annotator_id"].isna().all():
        return Unavailable("no annotator_id column: sessions cannot be formed")
    # Sessions are formed over all of an annotator's votes, golden ones included: a golden item is
    # still a step of the session whose fatigue we measure (docs/methods.md §4b uses them for accuracy).
    ann = votes["annotator_id"]
    codes = ann.cat.codes.to_numpy() if isinstance(ann.dtype, pd.CategoricalDtype) else pd.factorize(ann)[0]
    timed = "timestamp" in votes and not votes["timestamp"].isna().all()
    key = votes["timestamp"].astype("int64").to_numpy() if timed else None
    early, late = session_halves(codes.astype(np.int64), key, votes["vote_id"] if "vote_id" in votes else None)
    n_annotators = int(len(np.unique(codes[early | late])))
    if not (early.any() and late.any()):
        return Unavailable("no annotator has two or more votes")
    golden = votes["is_golden"].to_numpy(dtype=bool) if "is_golden" in votes else np.zeros(len(votes), bool)
    win = votes["winner"].cat.codes.to_numpy()
    decisive = win <= RIGHT
    dec = _halves(decisive, ~golden, early, late)
    accuracy, source = None, "golden"
    if golden.any() and "golden_answer" in votes:
        correct = votes["winner"].astype(object).to_numpy() == votes["golden_answer"].astype(object).to_numpy()
        accuracy = _halves(correct, golden, early, late)
    elif len(used):
        # Without golds, "accurate" = agrees with the favourite of the full-data BT fit (docs/methods.md §4b).
        source = "bt_favourite"
        try:
            rows = rank_votes(used, RankSettings(scheme="bt", ci="none")).rows
        except ValueError:  # e.g. a single model: no favourite, no accuracy
            rows = ()
        if rows:
            elo = {r.model: r.rating for r in rows}
            ea = votes["model_a"].astype(object).map(elo).to_numpy(dtype=float)
            eb = votes["model_b"].astype(object).map(elo).to_numpy(dtype=float)
            agree = ((win == LEFT) & (ea > eb)) | ((win == RIGHT) & (eb > ea))
            base = decisive & ~golden & (ea != eb) & np.isfinite(ea) & np.isfinite(eb)
            accuracy = _halves(agree, base, early, late)
    ordered_by = "timestamp" if timed else "file order"
    changes = [(_change(dec), np.isfinite(dec.p_value) and dec.p_value < alpha)]
    parts = [f"Decisive votes: {_pct(dec.x1, dec.n1)} early in a session vs {_pct(dec.x2, dec.n2)} late "
             f"({points(changes[0][0])}, {p_text(dec.p_value)})"]
    if accuracy is not None:
        what = "golden accuracy" if source == "golden" else "agreement with the BT favourite"
        changes.append((_change(accuracy), np.isfinite(accuracy.p_value) and accuracy.p_value < alpha))
        parts.append(f"{what}: {_pct(accuracy.x1, accuracy.n1)} vs {_pct(accuracy.x2, accuracy.n2)} "
                     f"({points(changes[1][0])}, {p_text(accuracy.p_value)})")
    hits = [c for c, hit in changes if hit and np.isfinite(c)]
    effect = max(hits, key=abs) if hits else changes[0][0]
    detected, practical = judged(effect, bool(hits))
    source_note = "" if timed else ("No timestamps: sessions follow the order of the rows in the file, so this "
                                    "tests file order, which may not be the order of voting. ")
    verdict = source_note + "; ".join(parts) + ": " + conclusion(
        detected, practical, "an order (fatigue) effect.", "no evidence of an order effect.")
    return OrderTest(n_annotators, dec, accuracy, source, verdict, ordered_by, effect, detected, practical)


def _change(t: TwoProportions) -> float:
    """Late minus early share."""
    return t.x2 / t.n2 - t.x1 / t.n1 if t.n1 and t.n2 else float("nan")


def _halves(hit: np.ndarray, base: np.ndarray, early: np.ndarray, late: np.ndarray) -> TwoProportions:
    """Share of ``hit`` among ``base`` rows, early versus late in the session."""
    return two_proportions(int((hit & base & early).sum()), int((base & early).sum()),
                           int((hit & base & late).sum()), int((base & late).sum()))


def _table_test(first: np.ndarray, second: np.ndarray, models: list[str], p0: float, alpha: float,
                what: str, first_name: str) -> TableTest:
    """Per-model binomial of ``first`` of ``first + second`` vs p0 (Holm), and the M×2 χ² test."""
    keep = (n := first + second) > 0
    tests = [binomial(int(f), int(t), p0) for f, t in zip(first, n)]
    p_holm = holm([t.p_value for t in tests])
    rows = tuple(ModelShare(m, t, float(h), bool(h < alpha)) for m, t, h, k in zip(models, tests, p_holm, keep) if k)
    table = np.column_stack([first[keep], second[keep]])
    if len(table) < 2 or (table.sum(axis=0) == 0).any():
        return TableTest(np.nan, max(len(table) - 1, 0), np.nan, p0, rows, f"Too little variation to test {what}.")
    chi2, p, df, _ = chi2_contingency(table, correction=False)
    flagged = [r for r in rows if r.detected]
    worst = max(flagged or rows, key=lambda r: abs(r.test.share - p0), default=None)
    effect = worst.test.share - p0 if worst else float("nan")
    detected = bool(p < alpha or flagged)
    practical = any(abs(r.test.share - p0) >= PRACTICAL_SHARE for r in flagged)
    verdict = (f"χ² = {chi2:.1f} on {df} df ({p_text(p)}); {len(flagged)} of {len(rows)} models differ after Holm"
               + (f", most of all {worst.model} ({worst.test.share:.1%} {first_name} vs {p0:.1%} expected, "
                  f"{points(effect)})" if flagged else "")
               + ": " + conclusion(detected, practical, f"{what}.", f"no evidence of {what}."))
    return TableTest(float(chi2), int(df), float(p), p0, rows, verdict, effect, detected, practical)


def _model_position(a, b, models, alpha) -> TableTest:
    k = len(models)
    left, right = np.bincount(a, minlength=k), np.bincount(b, minlength=k)
    return _table_test(left, right, models, 0.5, alpha, "a model position bias", "left")


def _time_exposure(used, a, b, models, alpha) -> TableTest:
    early = early_period(used)
    k = len(models)
    e = np.bincount(a[early], minlength=k) + np.bincount(b[early], minlength=k)
    late = np.bincount(a[~early], minlength=k) + np.bincount(b[~early], minlength=k)
    p0 = float(early.mean())  # share of early votes = share of early appearances (2 per vote)
    return _table_test(e, late, models, p0, alpha, "a time-exposure bias", "early")


def length_points(votes: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(len_left, len_right, left chosen) of the decisive analysed votes with both lengths (docs/methods.md §4e);
    None without length columns. The relative difference the fit uses is (l - r) / (l + r + 1)."""
    used = analysed_votes(votes)[0]
    if "len_a" not in used or "len_b" not in used:
        return None
    win = used["winner"].cat.codes.to_numpy()
    la, lb = used["len_a"].to_numpy(dtype=float), used["len_b"].to_numpy(dtype=float)
    ok = (win <= RIGHT) & np.isfinite(la) & np.isfinite(lb)
    return la[ok], lb[ok], win[ok] == LEFT


def relative_length(len_left: np.ndarray, len_right: np.ndarray) -> np.ndarray:
    return (len_left - len_right) / (len_left + len_right + 1.0)


def _length(used, win, alpha) -> LengthTest | Unavailable:
    if "len_a" not in used or "len_b" not in used:
        return Unavailable("no len_a / len_b columns")
    la, lb = used["len_a"].to_numpy(dtype=float), used["len_b"].to_numpy(dtype=float)
    ok = (win <= RIGHT) & np.isfinite(la) & np.isfinite(lb)
    if not ok.any():
        return Unavailable("no decisive vote with both lengths")
    la, lb, left = la[ok], lb[ok], win[ok] == LEFT
    differ = la != lb
    k = int((left == (la > lb))[differ].sum())
    test = binomial(k, int(differ.sum()), 0.5, alpha)
    fit = logit_fit(relative_length(la, lb), left.astype(float))
    slope = ("no logistic fit (" + fit.flag.replace("_", " ") + ")" if fit.flag else
             f"logistic slope on the relative length difference β = {fit.beta[1]:.2f} ({p_text(fit.p[1])})")
    flagged = (np.isfinite(test.p_value) and test.p_value < alpha) or (not fit.flag and fit.p[1] < alpha)
    effect = test.share - 0.5 if test.n else float("nan")
    detected, practical = judged(effect, flagged)
    verdict = (f"The longer answer is chosen {test.share:.1%} of the time ({test.k} of {test.n}, {points(effect)} "
               f"from 50%, {p_text(test.p_value)}); {slope}: "
               + conclusion(detected, practical, "a length bias.", "no evidence of a length bias."))
    return LengthTest(test, fit, verdict, effect, detected, practical)


def _pairing(a, b, k, alpha) -> PairingTest:
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    counts = np.bincount(lo * k + hi, minlength=k * k).reshape(k, k)
    return pairing_test(counts[np.triu_indices(k, 1)], alpha)


def _corrections(used: pd.DataFrame) -> Corrections | Unavailable:
    found = corrections(used)
    return Unavailable("corrections need votes between at least two models") if found is None else found
