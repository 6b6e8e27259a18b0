"""Agreement on real overlap only (core.annotators.agreement): golden items set apart, items judged once ignored,
sides normalised, dimensions kept apart, and no coefficient below MIN_OVERLAP_ITEMS overlapping items."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.annotators import render as annotator_render
from core.annotators import report as annotator_report
from core.annotators.agreement import MIN_OVERLAP_ITEMS, agreement_from_votes, agreement_summary, items_from_votes
from core.io import load
from core.store import Store
from tests.app_pages import app_router, open_page  # noqa: F401 - fixtures
from tests.test_app_data import texts

FLIP = {"model_a": "model_b", "model_b": "model_a", "tie": "tie", "tie (bothbad)": "tie (bothbad)"}


def vote(q, a, b, who, winner, golden=False, dimension="overall"):
    return {"query_id": q, "model_a": a, "model_b": b, "annotator_id": who, "winner": winner, "is_golden": golden,
            "golden_answer": "model_a" if golden else None, "dimension": dimension}


def agreeing(n_items: int, raters=("u1", "u2"), start: int = 0) -> list[dict]:
    """Items every rater judges alike (the left model wins on even items, the right on odd ones)."""
    return [vote(f"q{i}", "m1", "m2", who, "model_a" if i % 2 == 0 else "model_b")
            for i in range(start, start + n_items) for who in raters]


def golden_disagreement(n_items: int) -> list[dict]:
    """Golden items on which u1 is right and u2 wrong every time."""
    return [vote(f"golden:{i}", "golden:correct", "golden:wrong", who, winner, golden=True)
            for i in range(n_items) for who, winner in (("u1", "model_a"), ("u2", "model_b"))]


def test_the_minimum_is_ten_items():
    assert MIN_OVERLAP_ITEMS == 10


def test_golden_items_are_set_apart():
    votes = pd.DataFrame(agreeing(12) + golden_disagreement(6))
    ag = agreement_from_votes(votes)
    assert ag["n_items"] == 12 and ag["n_golden_items"] == 6 and ag["reason"] is None
    assert ag["krippendorff_alpha"] == pytest.approx(1.0) and ag["fleiss_kappa"] == pytest.approx(1.0)
    assert [p["kappa"] for p in ag["cohen_kappa"]] == pytest.approx([1.0])
    # Counted as overlap, the golden items would have pulled α down: the exclusion is what keeps it at 1.
    mixed = agreement_from_votes(votes.assign(is_golden=False))
    assert mixed["n_items"] == 18 and mixed["krippendorff_alpha"] < 0.8


def test_items_judged_by_one_annotator_do_not_count():
    alone = [vote(f"s{i}", "m1", "m2", "u1" if i % 2 else "u2", "tie") for i in range(50)]
    ag = agreement_from_votes(pd.DataFrame(agreeing(10) + alone))
    assert ag["n_items"] == 10 and ag["n_items_total"] == 60
    assert ag["krippendorff_alpha"] == pytest.approx(1.0)


def test_too_little_overlap_gives_no_number_and_says_why():
    short = agreement_from_votes(pd.DataFrame(agreeing(MIN_OVERLAP_ITEMS - 1)))
    assert short["n_items"] == 9
    assert np.isnan(short["krippendorff_alpha"]) and np.isnan(short["fleiss_kappa"])
    assert all(np.isnan(p["kappa"]) for p in short["cohen_kappa"])
    assert short["reason"] == "not enough overlap: 9 items judged by two or more annotators, at least 10 needed"
    enough = agreement_from_votes(pd.DataFrame(agreeing(MIN_OVERLAP_ITEMS)))
    assert enough["reason"] is None and enough["krippendorff_alpha"] == pytest.approx(1.0)


def test_the_reports_say_not_enough_overlap():
    # policy keep: u2 fails the golden questions, and excluding u2 would leave no pair to compare
    report = annotator_report.build(pd.DataFrame(agreeing(4) + golden_disagreement(5)), policy="keep")
    data = json.loads(annotator_render.to_json(report))["agreement"]
    assert data["krippendorff_alpha"] is None and data["fleiss_kappa"] is None
    assert data["cohen_kappa"] == [{"annotator_1": "u1", "annotator_2": "u2", "n_items": 4, "kappa": None}]
    assert data["reason"].startswith("not enough overlap: 4 items") and data["min_overlap_items"] == 10
    assert data["n_golden_items"] == 5
    md = annotator_render.to_markdown(report)
    assert "**Not enough overlap: 4 items judged by two or more annotators, at least 10 needed.**" in md
    assert "- Krippendorff α (nominal): –" in md and "| u1 | u2 | 4 | – (fewer than 10 shared) |" in md
    assert "Golden items are not part of it (5 rated by several annotators)" in md


def test_a_pair_below_the_minimum_has_no_kappa_while_the_others_do():
    votes = pd.DataFrame(agreeing(12) + agreeing(5, raters=("u1", "u3"), start=100))
    pairs = {(p["annotator_1"], p["annotator_2"]): p for p in agreement_from_votes(votes)["cohen_kappa"]}
    assert pairs[("u1", "u2")]["n_items"] == 12 and pairs[("u1", "u2")]["kappa"] == pytest.approx(1.0)
    assert pairs[("u1", "u3")]["n_items"] == 5 and np.isnan(pairs[("u1", "u3")]["kappa"])


def test_sides_are_normalised_one_annotator_sees_the_pair_the_other_way_round():
    rows = []
    for row in agreeing(12):
        if row["annotator_id"] == "u2":  # u2 saw m2 on the left and picked the same model
            row = {**row, "model_a": "m2", "model_b": "m1", "winner": FLIP[row["winner"]]}
        rows.append(row)
    ag = agreement_from_votes(pd.DataFrame(rows))
    assert ag["n_items"] == 12 and ag["krippendorff_alpha"] == pytest.approx(1.0)
    assert ag["cohen_kappa"][0]["kappa"] == pytest.approx(1.0)


def test_two_dimensions_are_two_units_of_one_item_and_never_compared_with_each_other():
    overall = agreeing(10)
    style = [{**row, "dimension": "style", "winner": "tie"} for row in agreeing(10)]
    ag = agreement_from_votes(pd.DataFrame(overall + style))
    assert ag["n_items"] == 10 and ag["n_units"] == 20 and ag["cohen_kappa"][0]["n_items"] == 10
    assert ag["krippendorff_alpha"] == pytest.approx(1.0)
    # One annotator judged only "overall", the other only "style": the same items, but no shared judgement.
    crossed = [r for r in overall if r["annotator_id"] == "u1"] + [r for r in style if r["annotator_id"] == "u2"]
    none = agreement_from_votes(pd.DataFrame(crossed))
    assert none["n_items"] == 0 and none["cohen_kappa"] == []


def test_overlap_alpha_equals_the_krippendorff_package_on_the_overlap_units():
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(7)
    rows = []
    for i in range(40):
        raters = rng.choice(["u1", "u2", "u3", "u4"], size=rng.integers(1, 4), replace=False)
        for who in raters:
            winner = rng.choice(["model_a", "model_b", "tie"])
            a, b = ("m1", "m2") if rng.random() < 0.5 else ("m2", "m1")
            rows.append(vote(f"q{i}", a, b, who, winner))
    rows += golden_disagreement(8)
    votes = pd.DataFrame(rows)
    ours = agreement_from_votes(votes, min_items=1)
    items = items_from_votes(votes)
    items = items[~items["is_golden"]]
    wide = items.pivot(index="annotator_id", columns="query_id", values="label")
    coded = wide.apply(lambda col: col.map({"left": 0, "right": 1, "tie": 2})).to_numpy(dtype=float)
    assert ours["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=coded, level_of_measurement="nominal"), rel=1e-9)


_rows = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", None]), st.sampled_from(["a", "b", "c"]),
                           st.sampled_from(["a", "b", "c"]), st.sampled_from(["r1", "r2", "r3", None]),
                           st.sampled_from(["model_a", "model_b", "tie"]), st.booleans(),
                           st.sampled_from(["overall", "style", None])),
                 max_size=60).map(lambda rows: [r for r in rows if r[1] != r[2]])


@settings(max_examples=60, deadline=None)
@given(_rows, st.integers(1, 3))
def test_fast_path_equals_the_item_table_path_with_golden_and_dimensions(rows, minimum):
    frame = pd.DataFrame(rows, columns=["query_id", "model_a", "model_b", "annotator_id", "winner", "is_golden",
                                        "dimension"])
    fast = agreement_from_votes(frame, min_items=minimum)
    slow = agreement_summary(items_from_votes(frame), min_items=minimum)
    assert json.dumps(fast, sort_keys=True, default=str) == json.dumps(slow, sort_keys=True, default=str)


def test_the_annotators_page_says_not_enough_overlap(app_router):
    with Store() as store:
        # both annotators right on every golden question, so the page's default policy (exclude) keeps both
        golden = [vote(f"golden:{i}", "golden:correct", "golden:wrong", who, "model_a", golden=True)
                  for i in range(5) for who in ("u1", "u2")]
        csv = pd.DataFrame(agreeing(4) + golden).to_csv(index=False).encode()
        dataset = store.ingest(load(csv, name="few.csv")).dataset
    at = open_page("annotators", dataset.id)
    assert not at.exception
    [warning] = texts(at.main.warning)
    assert warning.startswith("Not enough overlap: 4 items judged by two or more annotators, at least 10 needed")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Krippendorff's α"] == "–" and metrics["Fleiss' κ"] == "–"
    assert metrics["Items rated by several annotators"] == "4"
    assert any("5 judged by several annotators" in c for c in texts(at.main.caption))
