"""Bias diagnostics (core.bias.diagnose, core.bias.render) against the docs/methods.md §4 references, planted biases,
a calibration check on bias-free data, and the docs/design.md "CLI" JSON contract of ``evalboard bias``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.stats import binomtest

from core.bias import render as bias_report
from core.bias.corrections import corrections
from core.bias.diagnose import Unavailable, _table_test, diagnose, session_halves
from core.io import load
from core.io.votes import votes_from_frame
from core.ranking.schemes.ipw import ipw_weights
from core.samples import BIASED_MODEL, arena_demo, bt_votes
from core.schema import OUTCOMES
from core.stats.significance import binomial, holm, logit_fit, pairing_test, two_proportions, weighted_score_test
from tests.conftest import shared_file
from tests.reference_values import (
    D2,
    D2_A_FIELD_CORRECTED,
    D2_A_FIELD_RAW,
    D2_ELO,
    D2_IPW_POSITION,
    D4_LEFT,
    D4_LEN_L,
    D4_LEN_R,
    D4_LENGTH_BETA,
    D4_LENGTH_INTERCEPT,
    D4_OUTCOME,
    D4_RIGHT,
    LENGTH_62_OF_100_P,
    LOGIT_TOY_BETA,
    LOGIT_TOY_SE,
    LOGIT_TOY_X,
    LOGIT_TOY_Y,
    MODEL_POSITION_P,
    MODEL_POSITION_P_HOLM,
    MODEL_POSITION_TEST,
    ORDER_40_50_VS_30_50,
    PAIRING_3_PAIRS,
    PAIRING_6_PAIRS,
    POSITION_7_OF_10_P,
    POSITION_60_OF_100_P,
    POSITION_60_OF_100_WILSON,
    TIME_EXPOSURE_TEST,
)

RTOL = 1e-6
ATOL = 5e-8  # the docs/methods.md references are printed to 7 decimals


def frame(left, right, winner, **extra) -> pd.DataFrame:
    models = sorted(set(left) | set(right))
    out = pd.DataFrame({"model_a": pd.Categorical(left, categories=models),
                        "model_b": pd.Categorical(right, categories=models),
                        "winner": pd.Categorical(winner, categories=list(OUTCOMES)), **extra})
    return out


# ---------------------------------------------------------------- docs/methods.md §4 references

def test_position_binomial_references():  # docs/methods.md §4a, §1 (Wilson of 60/100)
    t = binomial(60, 100)
    assert_allclose(t.p_value, POSITION_60_OF_100_P, rtol=RTOL, atol=ATOL)
    assert_allclose((t.ci_low, t.ci_high), POSITION_60_OF_100_WILSON, atol=5e-5)
    assert_allclose(binomial(7, 10).p_value, POSITION_7_OF_10_P, rtol=RTOL, atol=ATOL)
    assert np.isnan(binomial(0, 0).p_value)


def d2_votes() -> tuple[pd.DataFrame, np.ndarray]:
    """Reference D2 of docs/methods.md §5 (left-right, period: left wins / right wins / ties)."""
    spec = D2
    rows = [(left, right, e, o) for left, right, e, *n in spec for o, c in zip(OUTCOMES, n) for _ in range(c)]
    left, right, early, win = zip(*rows)
    return frame(left, right, win), np.array(early)


def test_weighted_position_d2_ipw():  # docs/methods.md §4a weighted score test, §6 D2
    votes, early = d2_votes()
    assert len(votes) == 43
    w, _ = ipw_weights(votes, early=early)
    code = votes["winner"].cat.codes.to_numpy()
    dec = code <= 1
    share, n_eff, z, p = weighted_score_test(code[dec] == 0, w[dec])
    assert_allclose([share, n_eff, z, p], D2_IPW_POSITION, rtol=RTOL, atol=ATOL)


def test_order_two_proportions_reference():  # docs/methods.md §4b
    t = two_proportions(40, 50, 30, 50)
    assert_allclose([t.z, t.p_value, t.chi2, t.fisher_p], ORDER_40_50_VS_30_50, rtol=RTOL, atol=ATOL)
    assert np.isnan(two_proportions(1, 0, 3, 4).p_value)


@pytest.mark.parametrize("n, early, late", [(5, [1, 2], [4, 5]), (4, [1, 2], [3, 4]), (2, [1], [2]), (1, [], [])])
def test_session_split_rules(n, early, late):  # docs/methods.md §4b: n=5 drops r=3; n_a < 2 drops out
    # rows deliberately out of time order, so the split must sort by timestamp
    times = np.arange(n)[::-1].copy()
    early_mask, late_mask = session_halves(np.zeros(n, np.int64), times)
    rank = n - np.arange(n)  # rank of each row in time order
    assert sorted(rank[early_mask]) == early and sorted(rank[late_mask]) == late


def test_session_split_ties_broken_by_vote_id_and_row_order():  # docs/methods.md §4b "(timestamp, vote_id)"
    early, late = session_halves(np.zeros(4, np.int64), np.zeros(4, np.int64), pd.Series(["v4", "v3", "v2", "v1"]))
    assert list(early) == [False, False, True, True] and list(late) == [True, True, False, False]
    early, late = session_halves(np.array([0, 1, 0, 1, 0]), None)  # no timestamps: row order per annotator
    assert list(early) == [True, True, False, False, False] and list(late) == [False, False, False, True, True]


def test_model_position_reference():  # docs/methods.md §4c
    t = _table_test(np.array([30, 25, 15]), np.array([20, 25, 25]), ["A", "B", "C"], 0.5, 0.05, "x", "left")
    assert_allclose([t.chi2, t.df, t.p_value], MODEL_POSITION_TEST, rtol=RTOL, atol=ATOL)
    assert_allclose([r.test.p_value for r in t.per_model], MODEL_POSITION_P, rtol=RTOL, atol=ATOL)
    assert_allclose([r.p_holm for r in t.per_model], MODEL_POSITION_P_HOLM, rtol=RTOL, atol=ATOL)


def test_time_exposure_reference_through_diagnose():  # docs/methods.md §4d: A 35/15, B 20/30, C 15/25
    # Early pairs A–B 20, A–C 15; late A–B 10, A–C 5, B–C 20: exactly the reference appearances.
    pairs = [("A", "B")] * 20 + [("A", "C")] * 15 + [("A", "B")] * 10 + [("A", "C")] * 5 + [("B", "C")] * 20
    left, right = zip(*pairs)
    seconds = np.r_[np.arange(35), 100 + np.arange(35)]
    votes = frame(left, right, ["tie"] * 70, timestamp=pd.to_datetime(seconds, unit="s", utc=True))
    t = diagnose(votes, with_corrections=False).time_exposure
    assert t.p0 == 0.5 and [(r.test.k, r.test.n) for r in t.per_model] == [(35, 50), (20, 50), (15, 40)]
    assert_allclose([t.chi2, t.df, t.p_value, t.per_model[0].test.p_value], TIME_EXPOSURE_TEST,
                    rtol=RTOL, atol=ATOL)


def test_length_references():  # docs/methods.md §4e
    assert_allclose(binomial(62, 100).p_value, LENGTH_62_OF_100_P, rtol=RTOL, atol=ATOL)
    x, y = LOGIT_TOY_X, LOGIT_TOY_Y
    fit = logit_fit(x, y)
    assert_allclose(fit.beta, LOGIT_TOY_BETA, rtol=RTOL, atol=ATOL)
    assert_allclose(fit.se, LOGIT_TOY_SE, rtol=RTOL, atol=ATOL)


def test_length_d4_through_diagnose():  # docs/methods.md §4e with reference D4 of §8
    code = {"L": "model_a", "R": "model_b", "T": "tie"}
    votes = frame(list(D4_LEFT), list(D4_RIGHT), [code[c] for c in D4_OUTCOME], len_a=D4_LEN_L, len_b=D4_LEN_R)
    d = bias_report.report_dict(diagnose(votes))["length"]
    assert (d["k"], d["n"]) == (11, 21) and d["p_value"] == pytest.approx(1.0)
    assert_allclose([d["intercept"], d["intercept_se"], d["intercept_p"]], D4_LENGTH_INTERCEPT, rtol=RTOL, atol=ATOL)
    assert_allclose([d["beta"], d["beta_se"], d["beta_p"]], D4_LENGTH_BETA, rtol=RTOL, atol=ATOL)


def test_logit_separation_gives_nan_and_flag():  # docs/methods.md §4e: no MLE under separation
    fit = logit_fit([-.3, -.2, -.1, .1, .2, .3], [0, 0, 0, 1, 1, 1])
    assert fit.flag == "separation" and np.isnan(fit.beta).all() and np.isnan(fit.se).all()
    assert logit_fit([-.3, -.2, .1, .1], [0, 0, 0, 1]).flag == "separation"  # quasi-complete
    assert logit_fit([.1, .2], [0, 1]).flag == "too_few_votes"


def test_pairing_references():  # docs/methods.md §4f
    t = pairing_test([30, 25, 15])
    assert_allclose([t.chi2, t.df, t.p_value], PAIRING_3_PAIRS, rtol=RTOL, atol=ATOL)
    t = pairing_test([30, 25, 15, 0, 5, 15])
    assert_allclose([t.chi2, t.df, t.p_value], PAIRING_6_PAIRS, rtol=1e-4)
    assert t.zero_pairs == 1


def test_pairing_counts_unseen_pairs_as_zero():  # docs/methods.md §4f "zeros included"
    votes = frame(["A", "A", "B"], ["B", "B", "A"], ["model_a"] * 3)
    votes["model_a"] = votes["model_a"].cat.add_categories([])
    r = diagnose(pd.concat([votes, frame(["C"], ["A"], ["tie"])]).pipe(
        lambda v: v.assign(model_a=pd.Categorical(v.model_a.astype(str), categories=["A", "B", "C"]),
                           model_b=pd.Categorical(v.model_b.astype(str), categories=["A", "B", "C"]))))
    assert (r.pairing.n_pairs, r.pairing.zero_pairs, r.pairing.df) == (3, 1, 2)


def test_holm_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests
    p = np.array([0.01, 0.04, 0.03, 0.5, np.nan])
    expected = multipletests(p[:4], method="holm")[1]
    assert_allclose(holm(p)[:4], expected) and np.isnan(holm(p)[4])


# ---------------------------------------------------------------- full data

@pytest.fixture(scope="module")
def demo():
    return votes_from_frame(arena_demo(20_000), "arena_demo")[0]


def test_planted_biases_are_detected(demo):  # core.samples plants every docs/methods.md §4 bias
    r = diagnose(demo)
    assert r.position.test.p_value < 0.01 and r.position.test.share > 0.5
    biased = {m.model: m for m in r.model_position.per_model}[BIASED_MODEL]
    assert r.model_position.p_value < 0.01 and biased.p_holm < 0.01 and biased.test.share > 0.7
    exposed = {m.model: m for m in r.time_exposure.per_model}[BIASED_MODEL]
    assert r.time_exposure.p_value < 0.01 and exposed.p_holm < 0.01 and exposed.test.share > 0.7
    assert r.length.test.p_value < 0.01 and r.length.fit.p[1] < 0.01 and r.length.fit.beta[1] > 0
    assert r.pairing.p_value < 0.01
    assert r.order.accuracy_source == "golden" and r.n_golden == int(demo["is_golden"].sum())
    assert r.n_votes + r.n_golden == len(demo)


def test_golden_votes_do_not_enter_the_tests(demo):  # docs/methods.md §0
    golden = demo["is_golden"].to_numpy()
    with_gold = diagnose(demo, with_corrections=False)
    without = diagnose(demo[~golden].drop(columns=["is_golden", "golden_answer"]), with_corrections=False)
    assert with_gold.position == without.position and with_gold.pairing == without.pairing
    assert with_gold.length == without.length and with_gold.time_exposure == without.time_exposure


def unbiased_votes(seed: int, n: int = 20_000, k: int = 8) -> pd.DataFrame:
    """bt_votes as a canonical frame: random times, annotators and lengths independent of everything."""
    d = bt_votes(n, k, seed=seed)
    rng = np.random.default_rng([seed, 99])
    names = d["models"]
    return pd.DataFrame({
        "vote_id": [f"v{i:06d}" for i in range(n)],
        "model_a": pd.Categorical.from_codes(d["left"], categories=names),
        "model_b": pd.Categorical.from_codes(d["right"], categories=names),
        "winner": pd.Categorical.from_codes(d["outcome"].astype(np.int64), categories=list(OUTCOMES)),
        "annotator_id": pd.Categorical.from_codes(rng.integers(0, 40, n), categories=[f"a{i:02d}" for i in range(40)]),
        "timestamp": pd.to_datetime(rng.integers(0, 28 * 86400, n), unit="s", utc=True),
        "len_a": rng.integers(50, 1000, n).astype(float), "len_b": rng.integers(50, 1000, n).astype(float)})


def p_values(r) -> list[float]:
    return [r.position.test.p_value, r.order.decisive.p_value, r.order.accuracy.p_value, r.model_position.p_value,
            r.time_exposure.p_value, r.length.test.p_value, r.length.fit.p[1], r.pairing.p_value]


def test_no_false_alarms_without_bias():  # calibration: false-positive rate near alpha
    seeds = range(20)
    ps = np.array([p_values(diagnose(unbiased_votes(s), with_corrections=False)) for s in seeds])
    assert np.isfinite(ps).all()
    r = diagnose(unbiased_votes(0), with_corrections=False)
    assert r.order.accuracy_source == "bt_favourite"
    clean = (ps.min(axis=1) >= 0.01).sum()
    assert clean >= 15, ps.min(axis=1)
    rejections = int((ps < 0.01).sum())
    # 160 p-values (correlated only weakly): the rejection count is compatible with a 1 % rate
    assert binomtest(rejections, ps.size, 0.01, alternative="greater").pvalue > 0.001
    assert (ps < 0.05).mean() < 0.12  # and at 5 % too


def test_missing_columns_are_unavailable_not_errors():
    votes = frame(["A", "B", "A", "C"], ["B", "C", "C", "A"], ["model_a", "model_b", "tie", "model_a"])
    d = bias_report.report_dict(diagnose(votes))
    for name in ("order", "time_exposure", "length"):
        assert d[name]["available"] is False and d[name]["reason"]
    assert "k" in d["position"] and "chi2" in d["pairing"] and "n_eff" in d["ipw"]
    json.loads(bias_report.to_json(diagnose(votes)))
    assert "not available" in bias_report.to_markdown(diagnose(votes))
    empty = diagnose(votes.iloc[:0])
    assert isinstance(empty.position, Unavailable)
    assert bias_report.report_dict(empty)["position"]["available"] is False


def test_rejects_bad_alpha():
    with pytest.raises(ValueError, match="alpha"):
        diagnose(frame(["A"], ["B"], ["tie"]), alpha=1.5)


# ---------------------------------------------------------------- contract and corrections

CONTRACT = {"position": {"k", "n", "share", "p_value", "ci_low", "ci_high", "verdict"},
            "model_position": {"chi2", "df", "p_value", "per_model"},
            "time_exposure": {"chi2", "df", "p_value", "per_model"},
            "length": {"k", "n", "share", "p_value", "beta", "beta_se", "beta_p"},
            "pairing": {"chi2", "df", "p_value"}, "ipw": {"n_eff", "design_effect", "empty_cells"}}
PER_MODEL = {"model", "k", "n", "share", "p_value", "p_holm"}
EXTRAS = {"n_golden", "alpha", "corrections"}


def test_json_has_the_design_contract_keys(demo):  # docs/design.md "CLI": bias --format json
    d = json.loads(bias_report.to_json(diagnose(demo)))
    assert set(d) == {"n_votes", "order", *CONTRACT} | EXTRAS
    for name, keys in CONTRACT.items():
        assert keys <= set(d[name]), name
    for name in ("model_position", "time_exposure"):
        assert all(PER_MODEL <= set(row) for row in d[name]["per_model"])
    assert d["position"]["k"] + 0 <= d["position"]["n"] and isinstance(d["order"], dict)
    md = bias_report.to_markdown(diagnose(demo))
    assert "## Raw vs corrected" in md and BIASED_MODEL in md


def test_corrections_d2_ranking_changes():  # docs/methods.md §6 D2: IPW changes the ranking
    votes, early = d2_votes()
    times = np.where(early, 0, 10**9).astype("int64")
    # ties at the median timestamp would mis-split D2, so pass the periods explicitly
    c = corrections(votes.assign(timestamp=pd.to_datetime(times, unit="s", utc=True)), early=early)
    rows = {r.model: r for r in c.rows}
    assert_allclose(rows["A"].raw_win_rate, D2_A_FIELD_RAW, rtol=RTOL, atol=ATOL)
    assert_allclose(rows["A"].stratified_win_rate, D2_A_FIELD_CORRECTED, rtol=RTOL, atol=ATOL)
    assert_allclose([rows[m].elo for m in "ABC"], D2_ELO, atol=1e-3)
    assert any(r.rank_changed for r in c.rows)


# ---------------------------------------------------------------- real data

@pytest.mark.parametrize("name, left, right", [("crowd-comparisons.csv", 2911, 2549),
                                               ("gpt4-crowd-comparisons.csv", 943, 1130)])
def test_llmfao_position_bias(name, left, right):  # real data: crowd favours left, GPT-4 judge right
    r = diagnose(load(shared_file(f"llmfao/{name}")).frame, with_corrections=False)
    t = r.position.test
    assert (t.k, t.n) == (left, left + right)
    assert_allclose(t.p_value, binomtest(left, left + right).pvalue, rtol=RTOL, atol=ATOL)
    assert t.p_value < 0.01 and (t.share > 0.5) == (left > right)
    assert isinstance(r.time_exposure, Unavailable) and isinstance(r.length, Unavailable)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.text("abc", min_size=1, max_size=3)),
                min_size=1, max_size=40, unique_by=lambda t: t[2]))
def test_session_halves_break_time_ties_by_vote_id_like_a_full_sort(rows):
    """Ranking only the tied vote ids orders each session exactly as sorting every id does."""
    annotators = np.array([r[0] for r in rows], np.int64)
    times = np.array([r[1] for r in rows], np.int64)
    ids = pd.Series([r[2] for r in rows])
    vid = pd.factorize(ids, sort=True)[0]
    order = np.lexsort((np.arange(len(rows)), vid, times, annotators))
    expected_early, expected_late = session_halves(annotators[order], None)  # row order = the full sort
    early, late = session_halves(annotators, times, ids)
    assert (early[order] == expected_early).all() and (late[order] == expected_late).all()
