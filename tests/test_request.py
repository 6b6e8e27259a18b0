"""One request, one prepared value (core.ranking.request): one dimension at a time, items vs judgements, and one
annotator policy that rank, bias, annotators and report all apply and state."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.annotators.screen as screen_module
from core.annotators import render as annotator_render
from core.annotators import report as annotator_report
from core.bias import render as bias_report
from core.bias.diagnose import diagnose
from core.cli import main
from core.io.votes import votes_from_frame
from core.ranking import RankSettings
from core.ranking.inputs import parse_by, rank_input
from core.ranking.render import to_json, to_markdown
from core.ranking.request import (
    DimensionError,
    count_items,
    dimension_order,
    item_codes,
    one_row_per_item,
    prepare_votes,
)

MODELS = ("alpha", "beta", "gamma", "delta")
NO_CI = RankSettings(ci="none")


def campaign_votes(n_items: int = 60, seed: int = 0, dimensions=("overall", "helpfulness"), n_golden: int = 4,
                   copy_winners: bool = False) -> pd.DataFrame:
    """Votes shaped as a campaign publishes them: one row per (item, dimension), a golden item only under
    the first dimension. 'careful' answers goldens right and slowly, 'hasty' clicks in 1 s, 'wrong'
    fails every golden question."""
    rng = np.random.default_rng(seed)
    rows = []
    annotators = ("careful", "hasty", "wrong")
    for i in range(n_items):
        who = annotators[i % 3]
        a, b = rng.choice(len(MODELS), 2, replace=False)
        golden = i < n_golden * 3
        answer = "model_a" if rng.random() < 0.5 else "model_b"
        first = None
        for d, dim in enumerate(dimensions):
            if golden and d > 0:
                break
            if golden:
                winner = answer if who == "careful" else ("model_b" if answer == "model_a" else "model_a")
            elif copy_winners and first is not None:
                winner = first
            else:
                winner = "model_a" if rng.random() < (0.5 + 0.1 * (b - a)) else "model_b"
            first = first or winner
            rows.append({"query_id": f"g{i}" if golden else f"q{i}", "model_a": MODELS[a], "model_b": MODELS[b],
                         "winner": winner, "annotator_id": who, "dimension": dim,
                         "timestamp": 1_760_000_000 + 60 * i, "response_time_s": 1.0 if who == "hasty" else 12.0,
                         "is_golden": golden, "golden_answer": answer if golden else None})
    return votes_from_frame(pd.DataFrame(rows), "campaign")[0]


def one_dimension(votes: pd.DataFrame, name: str = "overall") -> pd.DataFrame:
    kept = votes[votes["dimension"].astype(str) == name].drop(columns="dimension")
    return votes_from_frame(kept.astype({"winner": object, "model_a": object, "model_b": object,
                                         "annotator_id": object}), "one")[0]


# ------------------------------------------------------------------ items and judgements


def test_rows_of_one_item_share_a_code_and_one_dimension_is_one_item_per_row():
    votes = campaign_votes(n_items=12, n_golden=1)
    codes = item_codes(votes)
    assert len(np.unique(codes)) == 12 and len(votes) == 12 + 9  # 3 golden items judged once
    assert count_items(votes) == 12 and len(one_row_per_item(votes)) == 12
    single = one_dimension(votes)
    assert list(item_codes(single)) == list(range(len(single)))


def test_identical_rows_without_ids_pair_up_by_order_within_each_dimension():
    rows = [{"model_a": "x", "model_b": "y", "winner": "model_a", "dimension": d} for d in ("one", "two") * 3]
    votes = pd.DataFrame(rows)
    assert count_items(votes) == 3  # three items, each judged on both dimensions: not 1, not 6
    assert dimension_order(votes) == ["one", "two"]


def test_dimension_order_is_the_order_the_rows_show_not_the_alphabet():
    votes = campaign_votes(n_items=6, n_golden=0, dimensions=("overall", "accuracy"))
    assert dimension_order(votes) == ["overall", "accuracy"]  # the store's categories are sorted


# ------------------------------------------------------------------ one dimension at a time


def test_several_dimensions_analyse_the_first_by_default_and_say_so():
    votes = campaign_votes()
    prepared = prepare_votes(votes, "keep")
    assert prepared.dimension.analysed == ("overall",) and prepared.dimension.chosen == "default"
    assert prepared.dimension.describe() == "dimension: overall (1 of 2; choose with --dimension)"
    counts = prepared.counts()
    assert counts["n_judgements"] == counts["n_items"] == 60 - 12  # golden items apart
    ranking = rank_input("votes", votes, NO_CI, annotators="keep")
    assert ranking.n_votes == 48 and ranking.policy.n_items == 48
    md = to_markdown(ranking)
    assert "from 48 judged items" in md and "Dimension: overall (1 of 2; choose with --dimension)." in md


def test_a_requested_dimension_is_analysed_and_an_unknown_one_is_named(capsys, tmp_path):
    votes = campaign_votes()
    ranking = rank_input("votes", votes, NO_CI, annotators="keep", dimension="helpfulness")
    assert ranking.policy.dimension.analysed == ("helpfulness",) and ranking.n_votes == 48
    with pytest.raises(DimensionError, match="the dimensions are overall, helpfulness"):
        prepare_votes(votes, dimension="style")
    path = tmp_path / "votes.csv"
    votes.to_csv(path, index=False)
    assert main(["rank", str(path), "--dimension", "style"]) == 2
    assert "no dimension 'style'" in capsys.readouterr().err


def test_by_dimension_ranks_every_dimension_on_its_own():
    votes = campaign_votes()
    groups = rank_input("votes", votes, NO_CI, by=parse_by("dimension"), annotators="keep")
    assert list(groups) == [("helpfulness",), ("overall",)]
    assert all(r.n_votes == 48 and r.policy.n_items == 48 for r in groups.values())
    assert "Dimensions: overall, helpfulness (one ranking per dimension)." in to_markdown(groups, ["dimension"])


# ------------------------------------------------------------------ a second dimension changes nothing by default


def _without_dimension(doc):
    """A JSON output without the blocks that list the available dimensions (they differ by design)."""
    if isinstance(doc, dict):
        return {k: _without_dimension(v) for k, v in doc.items() if k != "dimension"}
    if isinstance(doc, list):
        return [_without_dimension(v) for v in doc]
    return doc


def _default_outputs(votes: pd.DataFrame, policy: str) -> dict:
    prepared = prepare_votes(votes, policy)
    out = {"annotators": json.loads(annotator_render.to_json(annotator_report.build_prepared(prepared)))}
    try:
        ranking = rank_input("votes", votes, RankSettings(replicates=60, seed=3), annotators=policy)
        out["rank"] = json.loads(to_json(ranking))
    except ValueError as exc:  # nothing left to rank: the same error either way
        out["rank"] = str(exc)
    out["bias"] = json.loads(bias_report.to_json(diagnose(prepared.votes), prepared))
    return _without_dimension(out)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_items=st.integers(12, 40), n_golden=st.integers(0, 4),
       policy=st.sampled_from(["exclude", "keep", "downweight"]))
def test_duplicating_every_vote_into_a_second_dimension_leaves_every_default_output_unchanged(
        seed, n_items, n_golden, policy):
    one = campaign_votes(n_items, seed, dimensions=("overall",), n_golden=n_golden)
    rng = np.random.default_rng(seed)
    rows = []
    for record in one.astype(object).to_dict("records"):  # each vote, then its copy on a second dimension
        rows.append(record)
        copy = {**record, "dimension": "helpfulness"}
        if not record["is_golden"]:  # the copy's verdict may differ: it answers another question
            copy["winner"] = "model_a" if rng.random() < 0.5 else "model_b"
        rows.append(copy)
    two = votes_from_frame(pd.DataFrame(rows), "two")[0]
    assert _default_outputs(two, policy) == _default_outputs(one, policy)


# ------------------------------------------------------------------ one annotator policy


def test_quality_counts_items_and_sees_golden_items_whatever_the_dimension_analysed():
    votes = campaign_votes()
    for dimension in ("overall", "helpfulness"):
        prepared = prepare_votes(votes, dimension=dimension)
        q = prepared.quality.set_index("annotator_id")
        assert q["n_votes"].to_dict() == {"careful": 20, "hasty": 20, "wrong": 20}  # items, not judgements
        assert q.loc["wrong", "n_golden"] == 4 and q.loc["wrong", "status"] == "unqualified"
        assert prepared.unqualified == ("hasty", "wrong")


@pytest.mark.parametrize("policy", ["exclude", "keep", "downweight"])
def test_rank_and_bias_use_the_same_votes_and_give_the_same_elo(policy):
    votes = campaign_votes(n_items=150, seed=4)
    ranking = rank_input("votes", votes, NO_CI, annotators=policy)
    prepared = prepare_votes(votes, policy)
    bias = diagnose(prepared.votes)
    assert bias.n_votes == ranking.n_votes == prepared.counts()["n_judgements"]
    corrected = {r.model: r for r in bias.corrections.rows}
    for row in ranking.rows:
        assert corrected[row.model].elo == pytest.approx(row.rating, abs=1e-9)
        assert corrected[row.model].n_votes == row.n_votes


def test_every_cli_output_states_the_policy_and_what_it_left_out(capsys, tmp_path):
    votes = campaign_votes(n_items=90, seed=2)
    path = tmp_path / "votes.csv"
    votes.to_csv(path, index=False)
    prepared = prepare_votes(votes)
    left = prepared.policy
    assert left.unqualified == ("hasty", "wrong") and left.judgements == 30 + 30  # first dimension, goldens in
    sentence = "Annotator policy exclude: 60 judgements (60 items) of 2 unqualified annotators left out"
    outputs = {}
    for command, fmt in (("rank", "markdown"), ("rank", "json"), ("rank", "csv"), ("bias", "markdown"),
                         ("bias", "json"), ("annotators", "markdown"), ("annotators", "json")):
        assert main([command, str(path), "--format", fmt, "--bootstrap", "20"][:None if command == "rank" else 4]) \
            == 0
        outputs[command, fmt] = capsys.readouterr().out
    for key in (("rank", "markdown"), ("bias", "markdown"), ("annotators", "markdown")):
        assert sentence in outputs[key], key
        assert "Dimension: overall (1 of 2; choose with --dimension)" in outputs[key], key
    assert json.loads(outputs["rank", "json"])["params"]["annotator_policy"]["judgements_left_out"] == 60
    for command in ("bias", "annotators"):
        policy = json.loads(outputs[command, "json"])["annotator_policy"]
        assert policy["policy"] == "exclude" and policy["judgements_left_out"] == 60
        assert policy["annotators_left_out"] == 2
    header, first = outputs["rank", "csv"].splitlines()[:2]
    assert header.endswith(",dimension,annotator_policy,judgements_left_out,annotators_left_out")
    assert first.endswith(",overall,exclude,60,2")


def test_policy_option_is_the_same_everywhere_and_annotators_is_its_alias(capsys, tmp_path):
    votes = campaign_votes(n_items=90, seed=2)
    path = tmp_path / "votes.csv"
    votes.to_csv(path, index=False)
    docs = {}
    for option in ("--policy", "--annotators"):
        for command in ("rank", "bias", "annotators"):
            assert main([command, str(path), option, "keep", "--format", "json"]) == 0
            docs[option, command] = json.loads(capsys.readouterr().out)
    assert docs["--policy", "rank"] == docs["--annotators", "rank"]
    assert docs["--policy", "rank"]["params"]["annotator_policy"]["policy"] == "keep"
    assert docs["--policy", "bias"]["annotator_policy"]["judgements_of_unqualified"] == 60
    effect = docs["--policy", "annotators"]["exclusion_effect"]
    assert effect["policy"] == "keep" and effect["votes_excluded"] == 0 and effect["rank_changes"] == []
    assert docs["--policy", "bias"]["n_votes"] == docs["--policy", "rank"]["n_votes"]


def test_report_reads_one_prepared_value(tmp_path):
    from core.report.build import build_report
    from core.report.bundle import ReportSettings

    votes = campaign_votes(n_items=90, seed=2)
    result = build_report("votes", votes, tmp_path / "out", ReportSettings(bootstrap=20, png=False),
                          {"source": "campaign"})
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["params"]["annotator_policy"]["judgements_left_out"] == 60
    assert doc["rank"]["n_votes"] == doc["bias"]["n_votes"] == 90 - 12 - 2 * 26  # careful's non-golden items
    assert doc["annotators"]["exclusion_effect"]["votes_excluded"] == 60
    text = (tmp_path / "out" / "BT_ANALYSIS_REPORT.md").read_text()
    assert "Annotator policy exclude: 60 judgements (60 items) of 2 unqualified annotators left out" in text
    assert result.kind == "votes"


def test_a_counts_table_with_dimensions_is_ranked_one_dimension_at_a_time():
    rows = [("x", "y", "model_a", 30, d) for d in ("overall", "style")] + \
        [("y", "x", "model_a", 10, d) for d in ("overall", "style")]
    counts = pd.DataFrame(rows, columns=["model_a", "model_b", "winner", "count", "dimension"])
    ranking = rank_input("counts", counts, NO_CI)
    assert ranking.n_votes == 40 and ranking.policy.dimension.analysed == ("overall",)
    assert "Dimension: overall (1 of 2; choose with --dimension)." in to_markdown(ranking)
    assert sum(r.n_votes for r in rank_input("counts", counts, NO_CI, by=["dimension"]).values()) == 80


@pytest.mark.parametrize("command", ["rank", "bias", "annotators", "robustness", "drift", "plan"])
def test_every_votes_command_applies_the_qualification_rules_it_is_given(command, tmp_path, monkeypatch):
    """--qualify is one of the request options every votes command takes: each must hand it to the request
    (a command that forgot it would ignore the user's screen rule without a word)."""
    calls = []
    real = screen_module.screen_votes
    monkeypatch.setattr(screen_module, "screen_votes",
                        lambda votes, *a, **k: calls.append(len(votes)) or real(votes, *a, **k))
    path = tmp_path / "votes.csv"
    rows = ["model_a,model_b,winner,annotator_id,timestamp"]
    rows += [f"A,B,{'model_a' if i % 3 else 'model_b'},u{i % 4},2026-01-{1 + i // 10:02d}T00:00:00Z" for i in range(80)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    extra = ["--period", "week", "--min-votes", "1"] if command == "drift" else []
    main([command, str(path), "--qualify", "screen", *extra, "--output", str(tmp_path / "out.txt")])
    assert calls, f"evalboard {command} did not run the screen it was asked for"
