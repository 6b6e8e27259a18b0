"""Rankings from votes (core.ranking, core.ranking.inputs, core.ranking.schemes, core.annotators.quality): the demo
Arena data against its truth, the winrate / stratified / ipw schemes against docs/methods.md §1, §5, §6, the
annotator rules of docs/methods.md §7, groups, anchoring, and the edge cases named in STYLE."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import spearmanr

from core.annotators.quality import annotator_quality, apply_policy
from core.io.votes import votes_from_frame
from core.ranking import RankingError, RankSettings, rank_cells, rank_votes
from core.ranking import bradley_terry as bt
from core.ranking.cells import Cells, compress_votes, win_matrix
from core.ranking.inputs import parse_by, rank_input
from core.ranking.schemes.ipw import ipw_weights
from core.ranking.schemes.stratified import stratified_win_rates
from core.samples import arena_demo, arena_demo_truth
from tests.reference_values import (
    D1_ELO,
    D1_ELO_ANCHORED_D,
    D1_NAMED,
    D2,
    D2_A_FIELD_CORRECTED,
    D2_A_FIELD_RAW,
    D2_A_VS_B,
    D2_A_VS_C,
    D2_IPW_ELO,
    D2_IPW_N_EFF,
    D2_IPW_PI,
    D2_IPW_W,
    D2_IPW_WEIGHT_SUM,
    D2_IPW_WEIGHTS,
    D2_PI,
    U1_GOLDEN_WILSON,
    Z_975,
)

RTOL_REF = 1e-6  # docs/methods.md §0: point estimates
RTOL_MM = 1e-5  # docs/methods.md §0: MM fits stopped at tol 1e-6
ATOL_ELO_MM = 1e-3
Z = Z_975  # docs/methods.md §0

NO_CI = RankSettings(ci="none")
SMALL_B = RankSettings(replicates=100)

# docs/methods.md §2, Reference D1: per pair (left, right, left wins, right wins, ties);
# docs/methods.md §5, Reference D2: (left, right, early?, left wins, right wins, ties).
# Both with their worked values: tests/reference_values.py.
D1 = D1_NAMED


def votes(rows, **columns) -> pd.DataFrame:
    """Canonical votes (core.io) from (model_a, model_b, winner) rows plus optional columns."""
    frame = pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])
    for name, values in columns.items():
        frame[name] = values
    return votes_from_frame(frame, "test votes")[0]


def pair_rows(spec) -> list[tuple[str, str, str]]:
    rows = []
    for left, right, *_, wins_l, wins_r, ties in spec:
        rows += [(left, right, "model_a")] * wins_l + [(left, right, "model_b")] * wins_r
        rows += [(left, right, "tie")] * ties
    return rows


def d2_votes() -> tuple[pd.DataFrame, np.ndarray]:
    early = np.concatenate([[e] * (a + b + t) for _, _, e, a, b, t in D2])
    return votes(pair_rows(D2)), early


def by_model(ranking) -> dict:
    return {r.model: r for r in ranking.rows}


def wilson_formula(x: float, n: float) -> tuple[float, float]:
    # docs/methods.md §1, plain Wilson, written out independently of core.stats.intervals.
    p = x / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * np.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    return max(0.0, centre - half), min(1.0, centre + half)


# --- the demo Arena data against its truth -------------------------------------------------------


@pytest.fixture(scope="module")
def arena():
    return votes_from_frame(arena_demo(), "arena_demo")[0]


def test_arena_demo_ranking_recovers_the_true_order(arena):
    ranking = rank_votes(arena, SMALL_B)
    golden = int(arena["is_golden"].sum())
    assert golden > 0
    assert ranking.policy.golden_votes_excluded == golden
    assert ranking.n_votes == len(arena) - golden == 20_000 - golden
    assert ranking.identifiable and ranking.fit.prior == 0.0
    assert ranking.n_models == 12
    truth = arena_demo_truth()
    rho = spearmanr([r.rating for r in ranking.rows], [truth.strengths[r.model] for r in ranking.rows]).statistic
    assert rho > 0.9
    assert [r.rank for r in ranking.rows] == sorted(r.rank for r in ranking.rows)
    assert sum(r.n_votes for r in ranking.rows) == 2 * ranking.n_votes


def test_arena_demo_annotator_policy_removes_the_random_clickers(arena):
    ranking = rank_input("votes", arena, NO_CI)
    assert set(arena_demo_truth().random_clickers) <= set(ranking.policy.unqualified_annotators)
    assert ranking.policy.outcome.policy == "exclude"
    # three dimensions: the first one the data shows is analysed, and the policy's counts are of its votes
    first = arena["dimension"].astype(str).iloc[0]
    assert ranking.policy.dimension.analysed == (first,) and ranking.policy.dimension.chosen == "default"
    assert sorted(ranking.policy.dimension.available) == ["accuracy", "helpfulness", "style"]
    in_scope = arena["dimension"].astype(str).eq(first)
    kept = ~arena["annotator_id"].astype(str).isin(ranking.policy.unqualified_annotators)
    assert ranking.policy.outcome.judgements == int((~kept & in_scope).sum())
    assert ranking.n_votes == int((kept & ~arena["is_golden"] & in_scope).sum())


def test_arena_demo_groups_by_game(arena):
    result = rank_input("votes", arena, NO_CI, by=parse_by("game_id"), annotators="keep")
    assert list(result) == [("chat",), ("code_assist",), ("search",)]
    # per game within the first dimension (one dimension at a time unless grouped by dimension)
    in_scope = arena["dimension"].astype(str).eq(arena["dimension"].astype(str).iloc[0])
    assert sum(r.n_votes for r in result.values()) == int((~arena["is_golden"] & in_scope).sum())
    both = rank_input("votes", arena, NO_CI, by=parse_by("game_id,dimension"), annotators="keep")
    assert sum(r.n_votes for r in both.values()) == int((~arena["is_golden"]).sum())
    chat = arena[(arena["game_id"] == "chat") & in_scope]
    alone = rank_votes(chat, NO_CI)
    assert [r.model for r in result[("chat",)].rows] == [r.model for r in alone.rows]
    assert_allclose([r.rating for r in result[("chat",)].rows], [r.rating for r in alone.rows], atol=1e-9)


def test_groups_drop_models_absent_from_a_group():
    v = votes([("A", "B", "model_a"), ("B", "A", "tie"), ("A", "C", "model_b"), ("C", "A", "model_b")],
              game_id=["g1", "g1", "g2", "g2"])
    result = rank_input("votes", v, NO_CI, by=["game_id"])
    assert [r.model for r in result[("g1",)].rows] == ["A", "B"]
    assert {r.model for r in result[("g2",)].rows} == {"A", "C"}
    with pytest.raises(RankingError, match="--by takes"):
        parse_by("annotator_id")


# --- schemes: winrate (docs/methods.md §1), stratified (§5), ipw (§6) -----------------------------------------


def test_winrate_scheme_uses_wilson_intervals():
    ranking = rank_votes(votes(pair_rows(D1)), RankSettings(scheme="winrate", replicates=100))
    rows = by_model(ranking)
    # A: 6 + 7 + 5 wins and two ties in 26 votes ⇒ 19/26.
    assert rows["A"].rating == pytest.approx(19 / 26, rel=1e-12)
    assert rows["A"].n_votes == 26
    for model in "ABCD":
        r = rows[model]
        assert (r.ci_low, r.ci_high) == pytest.approx(wilson_formula(r.win_rate * r.n_votes, r.n_votes), rel=1e-9)
        assert r.rank_low <= r.rank <= r.rank_high
    assert [r.model for r in ranking.rows] == ["A", "B", "C", "D"]
    assert ranking.fit.interval == "wilson"


def test_stratified_win_rates_reproduce_d2():
    # docs/methods.md §5, D2 with the periods given: A vs field raw 0.6375, corrected 0.4867424.
    v, early = d2_votes()
    assert len(v) == 43
    result = stratified_win_rates(v, early=early)
    assert result["raw"][0] == pytest.approx(D2_A_FIELD_RAW, rel=RTOL_REF)
    assert result["corrected"][0] == pytest.approx(D2_A_FIELD_CORRECTED, rel=RTOL_REF)
    assert result["strata_used"][0] == 4


@pytest.mark.parametrize("other, raw, corrected, strata", [("B", *D2_A_VS_B), ("C", *D2_A_VS_C)])
def test_stratified_head_to_head_d2(other, raw, corrected, strata):
    # docs/methods.md §5, D2: A vs B (21/30, 1.5/2, 1/2, 0/1) and A vs C (2 strata).
    v, early = d2_votes()
    pair = ((v["model_a"] == "A") & (v["model_b"] == other)) | ((v["model_a"] == other) & (v["model_b"] == "A"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # docs/methods.md §0: the absent third model is NaN, silently
        result = stratified_win_rates(v[pair.to_numpy()], early=early[pair.to_numpy()])
    assert result["raw"][0] == pytest.approx(raw, rel=RTOL_REF)
    assert result["corrected"][0] == pytest.approx(corrected, rel=RTOL_REF)
    assert result["strata_used"][0] == strata
    absent = "ABC".index("C" if other == "B" else "B")
    assert np.isnan(result["corrected"][absent]) and np.isnan(result["raw"][absent])
    assert result["strata_used"][absent] == 0 and np.isnan(result["variance"][absent])


def test_ipw_weights_reproduce_d2():
    # docs/methods.md §6, D2: normalised 5.375/n_c truncated to [0.2, 5]; Σw = 42.875, n_eff = 15.4982128.
    v, early = d2_votes()
    weights, info = ipw_weights(v, early=early)
    assert_allclose(sorted(set(np.round(weights, 9))), D2_IPW_WEIGHTS, rtol=RTOL_REF)
    assert weights.sum() == pytest.approx(D2_IPW_WEIGHT_SUM, rel=RTOL_REF)
    assert info["n_eff"] == pytest.approx(D2_IPW_N_EFF, rel=RTOL_REF)
    assert info["design_effect"] == pytest.approx(43 / D2_IPW_N_EFF, rel=RTOL_REF)
    assert info["grid_cells"] == 12 and info["empty_cells"] == 4
    first_cell = (v["model_a"] == "A").to_numpy() & (v["model_b"] == "B").to_numpy() & early
    assert_allclose(weights[first_cell], 0.2)  # n_c = 30 ⇒ 0.1791667 truncated up to 0.2


def test_ipw_bradley_terry_reproduces_d2_and_changes_the_ranking():
    # docs/methods.md §6, D2: unweighted π = (1.1835518, 0.6161294, 1.2003188); IPW π = (0.8263140, 0.9359400,
    # 1.2377461) from W = [[0, 10.91875, 3.583333], [10.83125, 0, 5.1875], [7.166667, 5.1875, 0]].
    v, early = d2_votes()
    weights, _ = ipw_weights(v, early=early)
    weighted = compress_votes(v.assign(weight=weights))
    assert_allclose(win_matrix(weighted), D2_IPW_W,
                    rtol=RTOL_REF)
    ipw = by_model(rank_cells(weighted, NO_CI))
    plain = by_model(rank_votes(v, NO_CI))
    assert_allclose([ipw[m].strength for m in "ABC"], D2_IPW_PI, rtol=RTOL_MM)
    assert_allclose([ipw[m].rating for m in "ABC"], D2_IPW_ELO, atol=ATOL_ELO_MM)
    assert_allclose([plain[m].strength for m in "ABC"], D2_PI, rtol=RTOL_MM)
    assert plain["A"].rank < plain["B"].rank and ipw["A"].rank > ipw["B"].rank


def test_ipw_scheme_is_weighted_bt_with_the_ipw_weights():
    # Scheme ipw on votes without timestamps: cell = (pair, left model) (docs/methods.md §6).
    v, _ = d2_votes()
    ranking = rank_votes(v, RankSettings(scheme="ipw", ci="none"))
    weights, info = ipw_weights(v, early=None)
    expected = by_model(rank_cells(compress_votes(v.assign(weight=weights)), NO_CI))
    assert ranking.settings.scheme == "ipw"
    assert ranking.fit.n_eff == pytest.approx(info["n_eff"])
    assert ranking.fit.cell == "pair × left model (no timestamps)"
    for r in ranking.rows:
        assert r.rating == pytest.approx(expected[r.model].rating, abs=1e-9)


def test_stratified_scheme_uses_the_median_period_split():
    # docs/methods.md §4: early iff timestamp < median; the scheme then averages the side × period strata.
    v, _ = d2_votes()
    stamps = pd.to_datetime("2026-01-01") + pd.to_timedelta(np.arange(len(v)), unit="h")
    v = v.assign(timestamp=stamps)
    ranking = rank_votes(v, RankSettings(scheme="stratified", replicates=100))
    expected = stratified_win_rates(v)
    median_early = stratified_win_rates(v, early=np.arange(len(v)) < 21)  # 43 votes: the first 21 are early
    rows = by_model(ranking)
    for i, m in enumerate("ABC"):
        assert rows[m].rating == pytest.approx(expected["corrected"][i], rel=1e-12)
        assert rows[m].rating == pytest.approx(median_early["corrected"][i], rel=1e-12)
        assert rows[m].ci_low <= rows[m].rating <= rows[m].ci_high
    assert ranking.fit.strata == "side × period"


# --- annotators (docs/methods.md §7) -------------------------------------------------------------------------


ANNOTATORS = {  # name: (votes, golds, correct golds, fast votes, durations known?)
    "u1": (20, 5, 4, 4, True), "u2": (20, 2, 2, 6, True), "u3": (20, 5, 2, 0, True),
    "u4": (10, 4, 3, 4, True), "u5": (20, 5, 3, 0, True), "u6": (10, 1, 1, 0, False),
}
PAIRS = [("A", "B"), ("B", "C"), ("C", "A"), ("B", "A")]
OUTCOME_CYCLE = ["model_a", "model_b", "model_a", "tie", "model_b", "model_a", "model_a"]


@pytest.fixture(scope="module")
def annotated():
    """Votes of u1–u6: golds first (correct = winner equals golden_answer), then ordinary votes; fast
    votes take 1.0 s and one non-fast vote takes exactly 3.0 s (not fast, docs/methods.md §7)."""
    rows, who, golden, answer, seconds = [], [], [], [], []
    k = 0
    for name, (n, golds, correct, fast, timed) in ANNOTATORS.items():
        for v in range(n):
            left, right = PAIRS[k % len(PAIRS)]
            if v < golds:
                rows.append((left, right, "model_a" if v < correct else "model_b"))
                answer.append("model_a")
            else:
                rows.append((left, right, OUTCOME_CYCLE[k % len(OUTCOME_CYCLE)]))
                answer.append(None)
            golden.append(v < golds)
            who.append(name)
            seconds.append((1.0 if v < fast else 3.0 if v == fast else 10.0) if timed else np.nan)
            k += 1
    return votes(rows, annotator_id=who, is_golden=golden, golden_answer=answer, response_time_s=seconds)


def test_annotator_rules_of_methods_7(annotated):
    q = annotator_quality(annotated).set_index("annotator_id")
    assert q.loc["u1", "status"] == "qualified"
    assert q.loc["u1", "golden_accuracy"] == pytest.approx(0.8)
    assert q.loc["u1", "fast_rate"] == pytest.approx(0.2)
    assert (q.loc["u1", "golden_ci_low"], q.loc["u1", "golden_ci_high"]) == pytest.approx(U1_GOLDEN_WILSON,
                                                                                          rel=RTOL_REF)
    assert q.loc["u2", "n_golden"] == 2 and q.loc["u2", "fast_rate"] == pytest.approx(0.30)
    assert q.loc["u2", "status"] == "qualified"  # 2 golds: accuracy not evaluable; 0.30 fast passes
    assert q.loc["u3", "status"] == "unqualified" and q.loc["u3", "golden_accuracy"] == pytest.approx(0.4)
    assert any("golden accuracy" in r for r in q.loc["u3", "reasons"])
    assert q.loc["u4", "status"] == "unqualified" and q.loc["u4", "fast_rate"] == pytest.approx(0.4)
    assert q.loc["u4", "golden_accuracy"] == pytest.approx(0.75)
    assert any("faster than 3 s" in r for r in q.loc["u4", "reasons"])
    assert q.loc["u5", "status"] == "qualified" and q.loc["u5", "golden_accuracy"] == pytest.approx(0.6)
    assert q.loc["u6", "status"] == "not_evaluable" and np.isnan(q.loc["u6", "fast_rate"])


def test_annotator_policies_exclude_downweight_keep(annotated):
    unqualified = annotated["annotator_id"].astype(str).isin(["u3", "u4"]).to_numpy()
    excluded, summary = apply_policy(annotated, "exclude")
    assert summary == {"annotators": "exclude", "unqualified_annotators": ["u3", "u4"], "unqualified_votes": 30}
    assert len(excluded) == len(annotated) - 30
    down, summary = apply_policy(annotated, "downweight")
    assert summary["unqualified_votes"] == 30 and len(down) == len(annotated)
    assert_array_equal(down["weight"].to_numpy(), np.where(unqualified, 0.5, 1.0))
    kept, _ = apply_policy(annotated, "keep")
    assert kept is annotated
    with pytest.raises(ValueError, match="--annotators must be one of"):
        apply_policy(annotated, "drop")


def test_annotator_policy_reaches_the_ranking(annotated):
    non_golden = ~annotated["is_golden"].to_numpy()
    unqualified = annotated["annotator_id"].astype(str).isin(["u3", "u4"]).to_numpy()
    excluded = rank_input("votes", annotated, NO_CI, annotators="exclude")
    assert excluded.n_votes == int((non_golden & ~unqualified).sum())
    assert excluded.policy.outcome.judgements == 30
    down = rank_input("votes", annotated, NO_CI, annotators="downweight")
    assert down.n_votes == int(non_golden.sum())
    # The down-weighted ranking is weighted BT with w = 0.5 on u3/u4 votes (docs/methods.md §7 → §2).
    used = annotated[non_golden]
    w = np.where(unqualified[non_golden], 0.5, 1.0)
    cells = compress_votes(used.assign(weight=w))
    fit = bt.fit(win_matrix(cells), cells.models)
    rows = by_model(down)
    assert_allclose([rows[m].strength for m in cells.models], fit.pi, rtol=1e-12)


# --- anchor ---------------------------------------------------------------------------------------


def test_anchor_puts_the_model_at_the_rating():
    # docs/methods.md §2, D1: anchored D = 1000.
    v = votes(pair_rows(D1))
    ranking = rank_votes(v, RankSettings(replicates=100, anchor=("D", 1000.0)))
    rows = by_model(ranking)
    assert_allclose([rows[m].rating for m in "ABCD"], D1_ELO_ANCHORED_D, atol=ATOL_ELO_MM)
    # The anchor's rating is fixed by definition: no zero-width interval, a note saying why (core.stats.evidence).
    assert np.isnan([rows["D"].ci_low, rows["D"].ci_high]).all() and "anchor" in rows["D"].interval_note
    assert rows["D"].rank_high == 4 and all(rows[m].interval_note is None for m in "ABC")
    plain = by_model(rank_votes(v, NO_CI))
    assert_allclose([plain[m].rating for m in "ABCD"], D1_ELO, atol=ATOL_ELO_MM)
    sandwich = by_model(rank_votes(v, RankSettings(ci="sandwich", anchor=("D", 1000.0))))
    assert np.isnan([sandwich["D"].ci_low, sandwich["D"].ci_high]).all() and "anchor" in sandwich["D"].interval_note
    with pytest.raises(RankingError, match="--anchor names 'Z'"):
        rank_votes(v, RankSettings(ci="none", anchor=("Z", 1000.0)))


# --- edge cases (STYLE practice 10) ------------------------------------------------------------------


def test_one_pair_only():
    # Two models: the MLE is π_A/π_B = W_AB/W_BA exactly.
    ranking = rank_votes(votes([("A", "B", "model_a")] * 7 + [("B", "A", "model_a")] * 3), SMALL_B)
    rows = by_model(ranking)
    assert ranking.identifiable and ranking.n_models == 2 and ranking.n_votes == 10
    assert rows["A"].rating - rows["B"].rating == pytest.approx(400 * np.log10(7 / 3), abs=1e-9)
    assert rows["A"].win_rate == pytest.approx(0.7) and rows["B"].win_rate == pytest.approx(0.3)


def test_all_ties():
    v = votes([("A", "B", "tie"), ("B", "C", "tie (bothbad)"), ("C", "A", "tie"), ("A", "C", "tie")])
    ranking = rank_votes(v, SMALL_B)
    assert ranking.identifiable
    for r in ranking.rows:
        assert r.rating == pytest.approx(1500.0, abs=1e-9) and r.strength == pytest.approx(1.0)
        # Every resample is all ties again: no interval (not 1500–1500), and four votes cannot show that
        # the models are equal, so each rank range covers all three (core.stats.evidence).
        assert r.rank == 1 and (r.rank_low, r.rank_high) == (1, 3)
        assert np.isnan([r.ci_low, r.ci_high]).all() and "no variation" in r.interval_note
        assert r.win_rate == 0.5


def test_a_model_that_never_wins_is_flagged_with_finite_ratings():
    # docs/methods.md §2 failure (a) and the remedy: prior 0.5, identifiable = False, all ratings finite.
    rows = pair_rows(D1) + [("A", "E", "model_a")] * 3 + [("E", "B", "model_b")] * 2
    ranking = rank_votes(votes(rows), SMALL_B)
    assert not ranking.identifiable and ranking.fit.prior == 0.5
    assert all(np.isfinite([r.rating, r.ci_low, r.ci_high]).all() for r in ranking.rows)
    assert ranking.rows[-1].model == "E" and ranking.rows[-1].win_rate == 0.0
    assert ranking.fit.nonidentifiable_replicates == 100


def test_two_disconnected_groups_are_flagged():
    v = votes([("A", "B", "model_a")] * 3 + [("B", "A", "model_a")] + [("C", "D", "model_a")] * 2
              + [("D", "C", "model_a")] * 2)
    ranking = rank_votes(v, NO_CI)
    assert not ranking.identifiable
    assert ranking.fit.components == 2 and ranking.fit.prior == 0.5
    assert all(np.isfinite(r.rating) for r in ranking.rows)


def test_a_model_with_one_vote():
    # One tie with A connects E both ways (identifiable), and the MLE then sets π_E = π_A exactly.
    # About (1 − 1/53)^53 ≈ 36% of resamples lose E's only vote and are refitted with the prior.
    ranking = rank_votes(votes(pair_rows(D1) + [("E", "A", "tie")]), SMALL_B)
    rows = by_model(ranking)
    assert ranking.identifiable and rows["E"].n_votes == 1 and rows["E"].win_rate == 0.5
    assert rows["E"].rating == pytest.approx(rows["A"].rating, abs=ATOL_ELO_MM)
    assert 20 < ranking.fit.nonidentifiable_replicates < 50
    # One vote is too few for an interval (core.stats.evidence): none, the reason, and a rank range over all five.
    assert (rows["E"].rank_low, rows["E"].rank_high) == (1, 5)
    assert np.isnan([rows["E"].ci_low, rows["E"].ci_high]).all() and rows["E"].interval_note.startswith("1 vote")
    assert all(np.isfinite([rows[m].ci_low, rows[m].ci_high]).all() for m in "ABCD")
    # A single win instead: E never loses ⇒ not identifiable.
    won = rank_votes(votes(pair_rows(D1) + [("E", "A", "model_a")]), NO_CI)
    assert not won.identifiable


def test_empty_input_raises():
    empty = votes([("A", "B", "model_a")]).iloc[:0]
    with pytest.raises(RankingError, match="no votes to rank"):
        rank_votes(empty, NO_CI)
    only_golden = votes([("A", "B", "model_a")], is_golden=[True], golden_answer=["model_a"])
    with pytest.raises(RankingError, match="no votes to rank"):
        rank_votes(only_golden, NO_CI)


def test_a_single_model_cannot_be_ranked():
    one = Cells(("A",), np.array([], dtype=np.int64), np.array([], dtype=np.int64), np.array([]), np.array([]),
                np.array([]))
    with pytest.raises(RankingError, match="at least two models"):
        rank_cells(one, NO_CI)


def test_a_model_seen_only_in_golden_votes_is_not_ranked():
    # docs/methods.md §0: golden votes are never used in §2–§6 estimates; a model that appears only there has
    # no analysed vote and must neither get a rating nor make the ranking non-identifiable.
    rows = pair_rows(D1) + [("X", "A", "model_b")]
    v = votes(rows, is_golden=[False] * (len(rows) - 1) + [True], golden_answer=[None] * (len(rows) - 1) + ["model_b"])
    ranking = rank_votes(v, NO_CI)
    assert [r.model for r in ranking.rows] == ["A", "B", "C", "D"]
    assert ranking.identifiable and ranking.policy.models_without_votes == ("X",)
    assert_allclose([r.rating for r in ranking.rows], D1_ELO, atol=ATOL_ELO_MM)


@pytest.mark.parametrize("kwargs, match", [
    ({"scheme": "elo"}, "`scheme` must be one of"),
    ({"ties": "thirds"}, "`ties` must be one of"),
    ({"ci": "jackknife"}, "`ci` must be one of"),
    ({"scheme": "winrate", "ties": "davidson"}, "Bradley–Terry tie model"),
    ({"replicates": 0}, "`replicates` must be a positive integer"),
    ({"alpha": 0}, "`alpha` must lie strictly between 0 and 1"),
])
def test_bad_settings_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RankSettings(**kwargs)


def test_counts_table_rejects_vote_level_schemes():
    table = pd.DataFrame({"model_a": ["A"], "model_b": ["B"], "winner": ["model_a"], "count": [3]})
    with pytest.raises(RankingError, match="needs individual votes"):
        rank_input("counts", table, RankSettings(scheme="stratified"))

