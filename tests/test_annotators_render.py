"""The annotators report's ranking before and after the policy is computed once (core.annotators.report)
and drawn from there: the exclusion effect of the JSON and the Annotators page's comparison table agree."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.annotators import report as annotator_report
from core.annotators.quality import response_times, status_counts
from core.annotators.render import coefficient, comparison_table, kappa_table, quality_table
from core.annotators.report import PolicyComparison, RankShift


def spam_votes() -> pd.DataFrame:
    """An honest annotator ranks alpha > beta > gamma; a fast clicker (unqualified) always votes gamma."""
    rows = []
    for i in range(30):
        for a, b in (("alpha", "beta"), ("beta", "gamma"), ("alpha", "gamma")):
            rows.append({"query_id": f"h{i}{a}{b}", "model_a": a, "model_b": b, "annotator_id": "honest",
                         "winner": "model_a" if i % 5 else "model_b", "response_time_s": 10.0})
    for i in range(120):
        a, b = ("gamma", "alpha") if i % 2 else ("gamma", "beta")
        rows.append({"query_id": f"s{i}", "model_a": a, "model_b": b, "annotator_id": "spam",
                     "winner": "model_a", "response_time_s": 1.0})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def spam_report():
    return annotator_report.build(spam_votes())


def test_the_comparison_holds_every_model_and_the_effect_lists_its_changes(spam_report):
    comparison = spam_report.comparison
    assert [r.model for r in comparison.rows] == ["alpha", "beta", "gamma"] and comparison.reason is None
    by_model = {r.model: r for r in comparison.rows}
    assert (by_model["gamma"].rank_before, by_model["gamma"].rank_after) == (1, 3)
    listed = [(c["model"], c["rank_before"], c["rank_after"]) for c in spam_report.exclusion_effect["rank_changes"]]
    assert listed == [(r.model, r.rank_before, r.rank_after) for r in comparison.changed]
    assert spam_report.exclusion_effect["n_models"] == len(comparison.rows)


def test_comparison_table_is_ranked_after_the_policy(spam_report):
    table = comparison_table(spam_report.comparison)
    assert list(table["Model"]) == ["alpha", "beta", "gamma"]
    assert list(table["Rank (qualified only)"]) == [1, 2, 3]
    assert table.loc[table["Model"] == "gamma", "Rank change"].item() == -2


def test_a_model_left_without_votes_comes_last_with_no_rank():
    comparison = PolicyComparison("exclude", (RankShift("a", 2, 1490.0, 1, 1500.0),
                                              RankShift("b", 1, 1510.0, None, np.nan),
                                              RankShift("c", 3, 1480.0, 2, 1470.0)))
    table = comparison_table(comparison)
    assert list(table["Model"]) == ["a", "c", "b"]
    assert table["Rank (qualified only)"].isna().tolist() == [False, False, True]
    assert table["Rank change"].tolist()[:2] == [1, 1] and pd.isna(table["Rank change"].iloc[2])
    assert comparison.moved == 2 and [r.model for r in comparison.changed] == ["a", "b", "c"]


def test_no_ranking_gives_a_reason_and_an_unavailable_effect():
    votes = pd.DataFrame([{"query_id": f"q{i}", "model_a": "x", "model_b": "y", "annotator_id": "only",
                           "winner": "model_a", "is_golden": True, "golden_answer": "model_a"} for i in range(4)])
    report = annotator_report.build(votes)
    assert report.comparison.rows == () and report.comparison.reason
    assert report.exclusion_effect == {**report.exclusion_effect, "available": False,
                                       "reason": report.comparison.reason}


def test_quality_table_shows_dashes_for_what_cannot_be_measured(spam_report):
    table = quality_table(spam_report.quality).set_index("Annotator")
    assert table.loc["spam", "Golden accuracy"] == "–" and table.loc["spam", "Golden CI"] == "–"
    assert table.loc["spam", "Fast rate"] == "100.0%" and table.loc["honest", "Fast rate"] == "0.0%"
    assert coefficient(None) == "–" and coefficient(float("nan")) == "–" and coefficient(0.12345) == "0.123"


def test_response_times():
    assert response_times(pd.DataFrame({"response_time_s": [1.5, None]})).tolist()[0] == 1.5
    assert response_times(pd.DataFrame({"winner": ["model_a"]})).size == 0


def test_status_counts_name_every_status(spam_report):
    assert status_counts(spam_report.quality) == {"qualified": 1, "unqualified": 1, "not_evaluable": 0}
    assert status_counts(spam_report.quality.iloc[:0]) == {"qualified": 0, "unqualified": 0, "not_evaluable": 0}


def test_kappa_table_names_its_columns():
    table = kappa_table({"cohen_kappa": [{"annotator_1": "a", "annotator_2": "b", "n_items": 12, "kappa": 0.5}]})
    assert list(table.columns) == ["Annotator 1", "Annotator 2", "Shared items", "κ"]
