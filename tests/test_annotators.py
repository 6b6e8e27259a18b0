"""Annotator quality and the ``evalboard annotators`` report (docs/methods.md §7): golden accuracy with a
Wilson CI, fast answers, status rules at their exact thresholds, the JSON contract of docs/design.md "CLI",
and the exclusion effect on the BT ranking."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.annotators import render as annotator_render
from core.annotators import report as annotator_report
from core.annotators.quality import annotator_quality, apply_policy
from core.io.votes import votes_from_frame
from core.samples import RANDOM_CLICKERS, arena_demo
from tests.conftest import shared_file
from tests.reference_values import U1_GOLDEN_WILSON

CONTRACT_ANNOTATOR_KEYS = {"annotator_id", "n_votes", "n_golden", "golden_accuracy", "golden_ci_low",
                           "golden_ci_high", "fast_rate", "status", "reasons"}
CONTRACT_AGREEMENT_KEYS = {"n_items", "krippendorff_alpha", "fleiss_kappa", "cohen_kappa"}
CONTRACT_PAIR_KEYS = {"annotator_1", "annotator_2", "n_items", "kappa"}


def annotator_votes(who: str, n_votes: int, n_golden: int, n_correct: int, n_fast: int, timed: bool = True):
    """``n_votes`` votes of one annotator: the first ``n_golden`` golden (``n_correct`` right), the first
    ``n_fast`` answered in 1.5 s, the others in 3.0 s (exactly 3.0 s is not fast) or without a duration."""
    rows = []
    for i in range(n_votes):
        golden = i < n_golden
        rows.append({
            "query_id": f"{who}-q{i}", "model_a": "alpha", "model_b": "beta", "annotator_id": who,
            "winner": "model_a" if (not golden or i < n_correct) else "model_b",
            "is_golden": golden, "golden_answer": "model_a" if golden else None,
            "response_time_s": (1.5 if i < n_fast else 3.0) if timed else np.nan,
        })
    return rows


@pytest.fixture
def u_votes() -> pd.DataFrame:
    """The five annotators of docs/methods.md §7 "Ref"."""
    return pd.DataFrame(
        annotator_votes("u1", 20, 5, 4, 4)
        + annotator_votes("u2", 20, 2, 2, 6)
        + annotator_votes("u3", 10, 5, 2, 0)
        + annotator_votes("u4", 10, 4, 3, 4)
        + annotator_votes("u5", 10, 5, 3, 0)
    )


def test_methods_7_reference_table(u_votes):
    q = annotator_quality(u_votes).set_index("annotator_id")
    assert q["status"].to_dict() == {"u1": "qualified", "u2": "qualified", "u3": "unqualified",
                                     "u4": "unqualified", "u5": "qualified"}
    # u1: 4/5 golds, 4/20 fast ⇒ qualified, accuracy Wilson (0.3755346, 0.9637759)
    assert q.loc["u1", "golden_accuracy"] == pytest.approx(0.8)
    assert q.loc["u1", "golden_ci_low"] == pytest.approx(U1_GOLDEN_WILSON[0], abs=1e-7)
    assert q.loc["u1", "golden_ci_high"] == pytest.approx(U1_GOLDEN_WILSON[1], abs=1e-7)
    assert q.loc["u1", "fast_rate"] == pytest.approx(0.2)
    # u2: 2/2 golds (accuracy not evaluable), 6/20 fast = 0.30 exactly ⇒ qualified
    assert q.loc["u2", "n_golden"] == 2 and q.loc["u2", "fast_rate"] == pytest.approx(0.30)
    assert q.loc["u2", "reasons"] == []
    # u3: 2/5 = 0.4 ⇒ unqualified on accuracy only
    assert q.loc["u3", "reasons"] == ["golden accuracy 0.40 < 0.60"]
    # u4: 3/4 golds pass, 4/10 fast = 0.4 ⇒ unqualified on speed only
    assert q.loc["u4", "golden_accuracy"] == pytest.approx(0.75)
    assert len(q.loc["u4", "reasons"]) == 1 and "faster than 3 s" in q.loc["u4", "reasons"][0]
    # u5: 3/5 = 0.60 exactly ⇒ qualified
    assert q.loc["u5", "golden_accuracy"] == pytest.approx(0.6) and q.loc["u5", "status"] == "qualified"


def test_not_evaluable_without_golds_or_durations():
    votes = pd.DataFrame(annotator_votes("x", 6, 2, 2, 0, timed=False) + annotator_votes("y", 6, 3, 1, 0, timed=False))
    q = annotator_quality(votes).set_index("annotator_id")
    assert q.loc["x", "status"] == "not_evaluable" and np.isnan(q.loc["x", "fast_rate"])
    assert q.loc["y", "status"] == "unqualified"  # 1/3 golds: the accuracy rule alone decides


def test_policy_counts(u_votes):
    kept, summary = apply_policy(u_votes, "exclude")
    assert summary["unqualified_annotators"] == ["u3", "u4"] and summary["unqualified_votes"] == 20
    assert len(kept) == len(u_votes) - 20
    weighted, _ = apply_policy(u_votes, "downweight")
    assert weighted["weight"].sum() == pytest.approx(len(u_votes) - 10)


def test_crowdkit_toy_golden_accuracy():
    """crowd-kit's toy YSDA data (peers/PROVENANCE.md): gold t1 = t2 = yes. Accuracy on golds:
    w1 1/2, w2 2/2, w3 1/1, w4 1/2, w5 0/2 (the gold-majority-vote skills of crowd-kit's tests);
    fewer than 3 golds each, so none is judged on accuracy (docs/methods.md §7)."""
    answers = pd.read_csv(shared_file("peers/toy_ysda_answers.csv"))
    gold = pd.read_csv(shared_file("peers/toy_ysda_gold.csv"))
    gold_col = [c for c in gold.columns if c != "task"][0]
    truth = dict(zip(gold["task"], gold[gold_col]))
    side = {"yes": "model_a", "no": "model_b"}
    votes = pd.DataFrame({
        "query_id": answers["task"], "model_a": "yes", "model_b": "no", "annotator_id": answers["worker"],
        "winner": answers["label"].map(side), "is_golden": answers["task"].isin(truth),
        "golden_answer": answers["task"].map(truth).map(side),
    })
    q = annotator_quality(votes).set_index("annotator_id")
    assert q["golden_accuracy"].to_dict() == pytest.approx({"w1": 0.5, "w2": 1.0, "w3": 1.0, "w4": 0.5, "w5": 0.0})
    assert q["n_golden"].to_dict() == {"w1": 2, "w2": 2, "w3": 1, "w4": 2, "w5": 2}
    assert set(q["status"]) == {"not_evaluable"}
    report = annotator_report.build(votes)
    # Agreement counts real overlap only: the 2 golden tasks are set apart, 3 tasks rated by all 5 remain.
    assert report.agreement["n_items"] == 3 and report.agreement["n_golden_items"] == 2
    assert len(report.agreement["cohen_kappa"]) == 10


# ---------------------------------------------------------------- the report on the Arena demo

@pytest.fixture(scope="module")
def demo_report():
    votes = votes_from_frame(arena_demo(), "arena_demo")[0]
    return annotator_report.build(votes, alpha=0.05)


def test_random_clickers_flagged_unqualified(demo_report):
    q = demo_report.quality.set_index("annotator_id")
    for who in RANDOM_CLICKERS:
        assert q.loc[who, "status"] == "unqualified"
        assert q.loc[who, "fast_rate"] > 0.30
        assert any("faster than 3 s" in r for r in q.loc[who, "reasons"])
    assert set(RANDOM_CLICKERS) <= set(demo_report.exclusion_effect["unqualified_annotators"])


def test_json_has_exactly_the_contract_keys(demo_report):
    data = json.loads(annotator_render.to_json(demo_report))
    assert set(data) >= {"annotators", "agreement"}
    # the extras: the exclusion effect, the sequential screen and the request (items, judgements, dimension,
    # annotator policy)
    assert set(data) - {"annotators", "agreement"} <= {"exclusion_effect", "screen", "n_items", "n_judgements",
                                                       "n_golden", "dimension", "annotator_policy"}
    assert {"flagged", "alpha", "method"} <= set(data["screen"])
    assert all(set(row) == CONTRACT_ANNOTATOR_KEYS for row in data["annotators"])
    assert CONTRACT_AGREEMENT_KEYS <= set(data["agreement"])
    assert all(set(p) == CONTRACT_PAIR_KEYS for p in data["agreement"]["cohen_kappa"])
    assert {r["status"] for r in data["annotators"]} <= {"qualified", "unqualified", "not_evaluable"}
    assert data["agreement"]["n_items"] > 0
    assert -1 <= data["agreement"]["krippendorff_alpha"] <= 1
    assert data["agreement"]["fleiss_raters_per_item"] >= 2
    ann = {r["annotator_id"]: r for r in data["annotators"]}
    assert all(isinstance(r["reasons"], list) for r in ann.values())
    eff = data["exclusion_effect"]
    assert eff["available"] and eff["votes_excluded"] > 0 and eff["n_models"] == 12


def test_json_nan_becomes_null(u_votes):
    data = json.loads(annotator_render.to_json(annotator_report.build(u_votes)))
    u2 = next(r for r in data["annotators"] if r["annotator_id"] == "u2")
    assert u2["golden_accuracy"] == 1.0
    assert data["agreement"]["n_items"] == 0  # every query was rated once
    assert data["agreement"]["krippendorff_alpha"] is None and data["agreement"]["fleiss_kappa"] is None
    assert data["agreement"]["cohen_kappa"] == []


def test_markdown_report(demo_report):
    md = annotator_render.to_markdown(demo_report)
    assert md.startswith("# Annotators")
    assert "| Annotator | Votes | Golden |" in md and "## Agreement" in md and "Krippendorff α" in md
    for who in RANDOM_CLICKERS:
        assert f"| {who} |" in md
    assert "## Excluding the unqualified" in md


def test_markdown_escapes_annotator_names():
    votes = pd.DataFrame(annotator_votes("a|b<script>", 4, 0, 0, 0))
    md = annotator_render.to_markdown(annotator_report.build(votes))
    assert "a\\|b\\<script\\>" in md and "<script>" not in md


def test_exclusion_effect_reports_rank_changes():
    """An unqualified annotator who alone makes 'gamma' look best: excluding them changes the ranking."""
    rows = []
    for i in range(30):  # honest: alpha > beta > gamma
        for a, b in (("alpha", "beta"), ("beta", "gamma"), ("alpha", "gamma")):
            rows.append({"query_id": f"h{i}{a}{b}", "model_a": a, "model_b": b, "annotator_id": "honest",
                         "winner": "model_a" if i % 5 else "model_b", "response_time_s": 10.0})
    for i in range(120):  # a fast clicker always voting for gamma
        a, b = ("gamma", "alpha") if i % 2 else ("gamma", "beta")
        rows.append({"query_id": f"s{i}", "model_a": a, "model_b": b, "annotator_id": "spam",
                     "winner": "model_a", "response_time_s": 1.0})
    report = annotator_report.build(pd.DataFrame(rows))
    eff = report.exclusion_effect
    assert eff["unqualified_annotators"] == ["spam"] and eff["votes_excluded"] == 120
    changed = {c["model"]: (c["rank_before"], c["rank_after"]) for c in eff["rank_changes"]}
    assert changed["gamma"] == (1, 3)
    assert "changes the BT rank" in annotator_render.to_markdown(report)


def test_exclusion_effect_unavailable_is_reported_not_raised():
    votes = pd.DataFrame(annotator_votes("only", 4, 4, 4, 0))  # golden votes only: nothing to rank
    eff = annotator_report.build(votes).exclusion_effect
    assert eff["available"] is False and "reason" in eff


def test_a_policy_decided_once_applies_the_same_to_a_column_subset():
    from core.samples import arena_demo

    votes = arena_demo(n_votes=4000, seed=5)
    for policy in ("exclude", "downweight", "keep"):
        full, summary = apply_policy(votes, policy)
        subset = votes[["model_a", "model_b", "winner", "annotator_id", "weight"]]
        again, _ = apply_policy(subset, policy, unqualified=summary["unqualified_annotators"])
        assert summary["unqualified_annotators"]  # the sample's random clickers
        assert again.index.equals(full.index) and again["weight"].equals(full["weight"])
