"""Inter-annotator agreement (docs/methods.md §7 "Agreement on overlapping items"): Cohen κ, Fleiss κ,
Krippendorff α (nominal), orientation canonicalisation, and checks against statsmodels, the
``krippendorff`` package (when installed) and real data (peer libraries' inputs, PandaLM)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, to_table
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from core.annotators.agreement import (
    agreement_summary,
    cohen_kappa,
    cohen_parts,
    fleiss_kappa,
    fleiss_kappa_labels,
    item_counts,
    items_from_votes,
    krippendorff_alpha,
    krippendorff_alpha_counts,
    majority_agreement,
    pairwise_cohen,
)
from tests.conftest import shared_file
from tests.reference_values import (
    ALPHA_MISSING,
    ALPHA_MISSING_VALUE,
    EVALICA_ALPHA,
    FLEISS_ITEMS,
    FLEISS_KAPPA,
    R1,
    R1_R2_ALPHA,
    R1_R2_COHEN_KAPPA,
    R2,
)

N = None
# docs/methods.md §7 reference data (R1, R2, FLEISS_ITEMS, ALPHA_MISSING) and values: tests/reference_values.py.


# ---------------------------------------------------------------- docs/methods.md §7 reference values

def test_cohen_reference_methods_7():
    parts = cohen_parts(R1, R2)
    assert parts["n"] == 10
    assert parts["p_o"] == pytest.approx(0.7, rel=1e-12)
    assert parts["p_e"] == pytest.approx(0.38, rel=1e-12)
    assert parts["kappa"] == pytest.approx(R1_R2_COHEN_KAPPA, abs=1e-7)
    assert cohen_kappa(R1, R2) == pytest.approx(R1_R2_COHEN_KAPPA, abs=1e-7)


def test_alpha_on_cohen_data_methods_7():
    assert krippendorff_alpha([R1, R2]) == pytest.approx(R1_R2_ALPHA, abs=1e-7)


def test_fleiss_reference_methods_7():
    assert fleiss_kappa_labels(FLEISS_ITEMS) == pytest.approx(FLEISS_KAPPA, abs=1e-7)


def test_alpha_with_missing_methods_7():
    assert krippendorff_alpha(ALPHA_MISSING) == pytest.approx(ALPHA_MISSING_VALUE, abs=1e-7)


# ---------------------------------------------------------------- statsmodels cross-checks

def _statsmodels_cohen(a, b) -> float:
    table = pd.crosstab(pd.Categorical(a, categories=[0, 1, 2]), pd.Categorical(b, categories=[0, 1, 2]),
                        dropna=False).to_numpy()
    return float(cohens_kappa(table, return_results=False))


def test_cohen_matches_statsmodels():
    assert cohen_kappa(R1, R2) == pytest.approx(_statsmodels_cohen(R1, R2), rel=1e-12)


def test_fleiss_matches_statsmodels():
    table, _ = aggregate_raters(np.array(FLEISS_ITEMS))
    assert fleiss_kappa(table) == pytest.approx(sm_fleiss(table, method="fleiss"), rel=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # statsmodels divides 0/0 when p_e = 1
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=2, max_size=40))
def test_cohen_matches_statsmodels_random(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    ours = cohen_kappa(a, b)
    theirs = _statsmodels_cohen(a, b)
    if np.isnan(ours):  # p_e = 1: both raters used one and the same category throughout
        assert len(set(a) | set(b)) == 1
    else:
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 5).flatmap(lambda m: st.lists(st.lists(st.integers(0, 2), min_size=m, max_size=m),
                                                      min_size=2, max_size=25)))
def test_fleiss_matches_statsmodels_random(items):
    table, _ = aggregate_raters(np.array(items))
    ours = fleiss_kappa(table)
    if np.isnan(ours):
        assert len({v for item in items for v in item}) == 1
    else:
        assert ours == pytest.approx(sm_fleiss(table, method="fleiss"), rel=1e-9, abs=1e-12)


def test_two_rater_alpha_is_fleiss_like_small_sample_correction():
    """For two raters and no missing data α = 1 − (2N − 1)/(2N) · (1 − p_o)/(1 − p_e'), with p_e' from the
    pooled marginals: checks the coincidence-matrix route against this closed form."""
    n = len(R1)
    pooled = np.bincount(R1 + R2, minlength=3) / (2 * n)
    p_o = np.mean(np.array(R1) == np.array(R2))
    expected = 1 - (2 * n - 1) / (2 * n) * (1 - p_o) / (1 - (pooled**2).sum())
    assert krippendorff_alpha([R1, R2]) == pytest.approx(expected, rel=1e-12)


def test_alpha_counts_equals_matrix_form():
    units = [[r[u] for r in ALPHA_MISSING] for u in range(8)]
    table = np.array([[sum(1 for v in unit if v == k) for k in range(3)] for unit in units])
    assert krippendorff_alpha_counts(table) == pytest.approx(ALPHA_MISSING_VALUE, abs=1e-7)


# ---------------------------------------------------------------- undefined cases are NaN, never raise

def test_undefined_values_are_nan():
    assert np.isnan(cohen_kappa([], []))
    assert np.isnan(cohen_kappa([0, N], [N, 1]))  # no item rated by both
    assert np.isnan(cohen_kappa([1, 1], [1, 1]))  # p_e = 1
    assert np.isnan(fleiss_kappa(np.zeros((0, 3))))
    assert np.isnan(fleiss_kappa([[2, 0], [1, 2]]))  # raters per item not fixed
    assert np.isnan(krippendorff_alpha([[0, N], [N, 1]]))  # no pairable unit
    assert np.isnan(krippendorff_alpha([[1, 1], [1, 1]]))  # one category only: D_e = 0
    with pytest.raises(ValueError):
        cohen_kappa([0, 1], [0])


def test_perfect_agreement_is_one():
    assert cohen_kappa([0, 1, 2], [0, 1, 2]) == 1.0
    assert krippendorff_alpha([[0, 1, 2, N], [0, 1, 2, 2]]) == pytest.approx(1.0)
    assert fleiss_kappa_labels([[0, 0], [1, 1], [2, 2]]) == pytest.approx(1.0)


# ---------------------------------------------------------------- items from votes

def _vote(q, a, b, who, winner):
    return {"query_id": q, "model_a": a, "model_b": b, "annotator_id": who, "winner": winner}


def test_swapped_orientation_is_the_same_item_with_labels_flipped():
    votes = pd.DataFrame([
        _vote("q1", "alpha", "beta", "u1", "model_a"),   # alpha wins, shown alpha | beta
        _vote("q1", "beta", "alpha", "u2", "model_b"),   # alpha wins, shown beta | alpha
        _vote("q1", "beta", "alpha", "u3", "model_a"),   # beta wins, shown swapped
        _vote("q1", "beta", "alpha", "u4", "tie (bothbad)"),
    ])
    items = items_from_votes(votes)
    assert items[["model_1", "model_2"]].drop_duplicates().values.tolist() == [["alpha", "beta"]]
    assert items["label"].tolist() == ["left", "left", "right", "tie"]
    assert items["swapped"].tolist() == [False, True, True, True]
    summary = agreement_summary(items)
    assert summary["n_items"] == 1 and summary["fleiss_raters_per_item"] == 4
    pair = pairwise_cohen(items).set_index(["annotator_1", "annotator_2"])
    assert pair.loc[("u1", "u2"), "n_items"] == 1


def test_orientation_canonicalisation_gives_identical_agreement():
    rng = np.random.default_rng(0)
    rows = []
    for q in range(40):
        truth = rng.choice(["model_a", "model_b", "tie"])
        for who in ("u1", "u2", "u3"):
            label = truth if rng.random() < 0.8 else rng.choice(["model_a", "model_b", "tie"])
            rows.append(_vote(f"q{q}", "m1", "m2", who, label))
    straight = pd.DataFrame(rows)
    flip = {"model_a": "model_b", "model_b": "model_a", "tie": "tie"}
    shown_swapped = rng.random(len(rows)) < 0.5
    mixed = straight.copy()
    mixed.loc[shown_swapped, ["model_a", "model_b"]] = mixed.loc[shown_swapped, ["model_b", "model_a"]].to_numpy()
    mixed.loc[shown_swapped, "winner"] = mixed.loc[shown_swapped, "winner"].map(flip)
    a, b = agreement_summary(items_from_votes(straight)), agreement_summary(items_from_votes(mixed))
    assert a["n_items"] == b["n_items"] == 40
    assert a["krippendorff_alpha"] == pytest.approx(b["krippendorff_alpha"], rel=1e-12)
    assert a["fleiss_kappa"] == pytest.approx(b["fleiss_kappa"], rel=1e-12)
    assert [p["kappa"] for p in a["cohen_kappa"]] == pytest.approx([p["kappa"] for p in b["cohen_kappa"]])
    # Without canonicalisation (comparing shown labels) the agreement would drop:
    assert a["krippendorff_alpha"] > 0.5


def test_items_skip_votes_without_key_and_keep_first_duplicate():
    votes = pd.DataFrame([
        _vote("q1", "a", "b", "u1", "model_a"),
        _vote("q1", "b", "a", "u1", "model_a"),  # same item, same annotator again: dropped
        _vote(None, "a", "b", "u2", "model_a"),
        _vote("q1", "a", "b", None, "model_b"),
    ])
    items = items_from_votes(votes)
    assert len(items) == 1 and items["label"].tolist() == ["left"]
    assert items_from_votes(votes.drop(columns="query_id")).empty
    empty = agreement_summary(items_from_votes(votes.iloc[:0]))
    assert empty["n_items"] == 0 and np.isnan(empty["krippendorff_alpha"]) and empty["cohen_kappa"] == []


def test_majority_agreement():
    votes = pd.DataFrame([
        _vote("q1", "a", "b", "u1", "model_a"), _vote("q1", "a", "b", "u2", "model_a"),
        _vote("q1", "a", "b", "u3", "model_b"),
        _vote("q2", "a", "b", "u1", "tie"), _vote("q2", "a", "b", "u2", "model_b"),  # no strict majority for u1/u2
        _vote("q2", "a", "b", "u3", "tie"),
    ])
    maj = majority_agreement(items_from_votes(votes)).set_index("annotator_id")
    # q1: u1 vs others {a, b}: no strict majority; u3 vs others {a, a}: disagrees.
    # q2: u1 vs {right, tie}: none; u2 vs {tie, tie}: disagrees; u3 vs {tie, right}: none.
    assert maj.loc["u3", "n_items"] == 1 and maj.loc["u3", "agreement"] == 0.0
    assert maj.loc["u2", "n_items"] == 1 and maj.loc["u2", "agreement"] == 0.0
    assert maj.loc["u1", "n_items"] == 0 and np.isnan(maj.loc["u1", "agreement"])


def test_fleiss_uses_modal_rater_count():
    votes = pd.DataFrame(
        [_vote(f"q{i}", "a", "b", u, w) for i, labels in enumerate(FLEISS_ITEMS)
         for u, w in zip(("u1", "u2", "u3"), [("model_a", "model_b", "tie")[k] for k in labels])]
        + [_vote("q9", "a", "b", "u1", "model_a"), _vote("q9", "a", "b", "u2", "model_b")])
    summary = agreement_summary(items_from_votes(votes), min_items=1)  # a reference value on 7 items
    assert summary["fleiss_raters_per_item"] == 3 and summary["fleiss_n_items"] == 6
    assert summary["fleiss_kappa"] == pytest.approx(FLEISS_KAPPA, abs=1e-7)
    assert summary["n_items"] == 7
    assert item_counts(items_from_votes(votes)).sum() == 20


# ---------------------------------------------------------------- real data

def _peer_matrix(name: str) -> list[list]:
    frame = pd.read_csv(shared_file(f"peers/{name}"), header=None)  # rows = coders, columns = units
    return [[None if pd.isna(v) else v for v in row] for row in frame.itertuples(index=False)]


@pytest.mark.parametrize(("name", "expected"), list(EVALICA_ALPHA.items()))
def test_alpha_on_peer_inputs(name, expected):
    """evalica's test inputs (peers/PROVENANCE.md); evalica's tests expect 0.7434211 (Krippendorff's
    textbook example) and 0.0833333; cross-checked against the ``krippendorff`` package when installed."""
    data = _peer_matrix(name)
    ours = krippendorff_alpha(data)
    assert ours == pytest.approx(expected, abs=1e-7)
    try:
        import krippendorff
    except ImportError:
        return
    def key(v):
        return float(v) if isinstance(v, (int, float, np.number)) else str(v)

    values = sorted({key(v) for row in data for v in row if v is not None}, key=str)
    coded = np.array([[np.nan if v is None else values.index(key(v)) for v in row] for row in data], dtype=float)
    assert ours == pytest.approx(krippendorff.alpha(reliability_data=coded, level_of_measurement="nominal"),
                                 rel=1e-9)


def test_alpha_matches_krippendorff_package_random():
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(1)
    for _ in range(20):
        data = rng.integers(0, 3, size=(4, 15)).astype(float)
        data[rng.random(data.shape) < 0.3] = np.nan
        ours = krippendorff_alpha([[None if np.isnan(v) else int(v) for v in row] for row in data])
        try:
            theirs = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        except ValueError:
            continue
        assert ours == pytest.approx(theirs, rel=1e-9)


def pandalm_votes() -> pd.DataFrame:
    """testset-v1.json (pandalm_testset/PROVENANCE.md): cmp_key = "<model 1>_<model 2>", labels
    1 = response1 better, 2 = response2 better, 0 = tie (int or str)."""
    records = json.loads(shared_file("pandalm_testset/testset-v1.json").read_text())
    outcome = {"1": "model_a", "2": "model_b", "0": "tie"}
    rows = []
    for rec in records:
        left, right = rec["cmp_key"].split("_")
        for who in ("annotator1", "annotator2", "annotator3"):
            rows.append(_vote(str(rec["idx"]), left, right, who, outcome[str(rec[who]).strip()]))
    return pd.DataFrame(rows)


def test_pandalm_cohen_kappa_per_pair():
    """PROVENANCE.md: reproduced κ 0.852 / 0.879 / 0.862 (published 0.85 / 0.88 / 0.86)."""
    items = items_from_votes(pandalm_votes())
    pairs = pairwise_cohen(items).set_index(["annotator_1", "annotator_2"])
    assert (pairs["n_items"] == 999).all()
    assert pairs.loc[("annotator1", "annotator2"), "kappa"] == pytest.approx(0.852, abs=5e-4)
    assert pairs.loc[("annotator1", "annotator3"), "kappa"] == pytest.approx(0.879, abs=5e-4)
    assert pairs.loc[("annotator2", "annotator3"), "kappa"] == pytest.approx(0.862, abs=5e-4)
    summary = agreement_summary(items)
    assert summary["n_items"] == 999 and summary["fleiss_raters_per_item"] == 3
    table, _ = aggregate_raters(np.array([[{"left": 0, "right": 1, "tie": 2}[x] for x in g["label"]]
                                          for _, g in items.groupby("query_id", sort=False)]))
    assert summary["fleiss_kappa"] == pytest.approx(sm_fleiss(table, method="fleiss"), rel=1e-9)
    # statsmodels Cohen on the first pair, from its own contingency table
    wide = items.pivot(index="query_id", columns="annotator_id", values="label")
    sm = cohens_kappa(to_table(wide[["annotator1", "annotator2"]].to_numpy())[0], return_results=False)
    assert pairs.loc[("annotator1", "annotator2"), "kappa"] == pytest.approx(sm, rel=1e-9)
    assert 0.8 < summary["krippendorff_alpha"] < 0.9


_votes = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", None]), st.sampled_from(["a", "b", "c", "d"]),
                            st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(["r1", "r2", "r3", None]),
                            st.sampled_from(["model_a", "model_b", "tie", "tie (bothbad)"])),
                  min_size=0, max_size=60).map(lambda rows: [r for r in rows if r[1] != r[2]])


@settings(max_examples=80, deadline=None)
@given(_votes, st.booleans())
def test_fast_agreement_equals_the_item_table_path(rows, categorical):
    from core.annotators.agreement import agreement_from_votes

    frame = pd.DataFrame(rows, columns=["query_id", "model_a", "model_b", "annotator_id", "winner"])
    if categorical:
        frame = frame.astype("category")
    fast = agreement_from_votes(frame)
    slow = agreement_summary(items_from_votes(frame))
    assert json.dumps(fast, sort_keys=True, default=str) == json.dumps(slow, sort_keys=True, default=str)


@settings(max_examples=80, deadline=None)
@given(_votes)
def test_pairwise_cohen_equals_cohen_kappa_pair_by_pair(rows):
    items = items_from_votes(pd.DataFrame(rows, columns=["query_id", "model_a", "model_b", "annotator_id",
                                                         "winner"]))
    table = pairwise_cohen(items)
    keyed = items.assign(item=items["query_id"] + "|" + items["model_1"] + "|" + items["model_2"])
    for rec in table.to_dict("records"):
        one = keyed[keyed["annotator_id"] == rec["annotator_1"]].set_index("item")["label"]
        two = keyed[keyed["annotator_id"] == rec["annotator_2"]].set_index("item")["label"]
        common = one.index.intersection(two.index)
        assert rec["n_items"] == len(common)
        assert rec["kappa"] == pytest.approx(cohen_kappa(list(one[common]), list(two[common])), nan_ok=True)
