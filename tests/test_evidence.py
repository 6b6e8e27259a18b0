"""No number without the evidence for it.

An interval the data cannot give (one vote, one task, resamples that cannot vary) is absent with its
reason, a rating lies inside its interval, rank ranges cover the models the data cannot separate
(core.stats.evidence); weightless votes and tasks are refused; no NaN or infinity reaches a JSON, markdown or
CSV output (core.formats); an annotator policy that leaves no votes says so.
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import main
from core.formats import NonFiniteOutputError, csv_table, dumps, markdown_table, markdown_text, number
from core.io.votes import votes_from_frame
from core.leaderboard.aggregate import LeaderboardSettings, aggregate
from core.leaderboard.render import full_markdown, leaderboard_dict
from core.leaderboard.render import to_csv as leaderboard_csv
from core.leaderboard.scores import LeaderboardError
from core.ranking import CI_METHODS, SCHEMES, RankingError, RankSettings, rank_votes
from core.ranking.render import to_csv, to_json, to_markdown
from core.stats.evidence import check_intervals, widen_rank_ranges

B = 60  # replicates: enough to vary, few enough for property tests


def votes(rows, **columns) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])
    for name, values in columns.items():
        frame[name] = values
    return votes_from_frame(frame, "test votes")[0]


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# --- one vote -----------------------------------------------------------------------------------------


@pytest.fixture
def one_vote(tmp_path) -> str:
    return write(tmp_path, "one.csv", "model_a,model_b,winner\nalpha,beta,model_a\n")


@pytest.mark.parametrize("scheme", ["bt", "winrate", "ipw"])
def test_one_vote_gives_no_interval_and_a_shared_rank_range(capsys, one_vote, scheme):
    # Before: Elo CI 1585.8–1585.8, rank ranges 1–1 and 2–2, the rating 3e-5 outside its own CI.
    code, out, err = cli(capsys, "rank", one_vote, "--scheme", scheme, "--format", "json", "--bootstrap", B)
    assert code == 0, err
    doc = json.loads(out)
    for m in doc["models"]:
        assert m["ci_low"] is None and m["ci_high"] is None
        assert m["interval_note"] == "1 vote: too few for an interval"
        assert (m["rank_low"], m["rank_high"]) == (1, 2)


def test_one_vote_markdown_and_csv_say_why(capsys, one_vote):
    code, out, _ = cli(capsys, "rank", one_vote, "--format", "markdown", "--bootstrap", B)
    assert code == 0
    assert "| 1 | alpha | 1585.8 | – | 1–2 |" in out
    assert "No interval: alpha, beta (1 vote: too few for an interval)." in out
    code, out, _ = cli(capsys, "rank", one_vote, "--format", "csv", "--bootstrap", B)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["ci_low"], r["ci_high"], r["rank_low"], r["rank_high"]) for r in rows] == [("", "", "1", "2")] * 2
    assert all(r["interval_note"] == "1 vote: too few for an interval" for r in rows)


def test_votes_that_never_disagree_give_no_interval():
    # Twelve identical votes: every resample is the same twelve votes, so a BT bootstrap cannot vary.
    ranking = rank_votes(votes([("a", "b", "model_a")] * 12), RankSettings(replicates=B))
    for r in ranking.rows:
        assert math.isnan(r.ci_low) and "no variation" in r.interval_note
        assert (r.rank_low, r.rank_high) == (1, 2)
    # The Wilson interval of 12/12 is real evidence and stays; the rank range still covers both models,
    # whose Wilson intervals overlap.
    rates = rank_votes(votes([("a", "b", "model_a")] * 3), RankSettings("winrate", replicates=B))
    assert all(r.interval_note is None and r.ci_low < r.rating <= r.ci_high or r.ci_low <= r.rating < r.ci_high
               for r in rates.rows)
    assert all((r.rank_low, r.rank_high) == (1, 2) for r in rates.rows)


def test_check_intervals_rules():
    ev = check_intervals([0.5, 0.5, 0.7, 0.3], [0.2, 0.5, 0.6, 0.30003], [0.8, 0.5, 0.69, 0.4], [10, 10, 1, 10])
    assert ev.notes[0] is None and (ev.low[0], ev.high[0]) == (0.2, 0.8)
    assert "no variation" in ev.notes[1] and math.isnan(ev.low[1])
    assert ev.notes[2] == "1 vote: too few for an interval"
    assert ev.notes[3] is None and ev.low[3] == 0.3  # the estimate pulled inside its interval
    lo, hi = widen_rank_ranges(np.array([1, 2, 3]), np.array([1, 2, 3]), np.array([False, True, False]))
    assert lo.tolist() == [1, 1, 2] and hi.tolist() == [2, 3, 3]


# --- the invariant, over random small vote sets, every scheme and CI method ----------------------------

MODELS = ["m1", "m2", "m3", "m4"]
vote_rows = st.lists(st.tuples(st.sampled_from(MODELS), st.sampled_from(MODELS),
                               st.sampled_from(["model_a", "model_b", "tie", "tie (bothbad)"]),
                               st.integers(0, 10**6), st.integers(20, 2000), st.integers(20, 2000)),
                     min_size=1, max_size=14).map(lambda rows: [r for r in rows if r[0] != r[1]]).filter(bool)
COMBOS = [(s, c, "half") for s in SCHEMES for c in CI_METHODS] + [("bt", c, "davidson") for c in CI_METHODS]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=vote_rows, seed=st.integers(0, 3))
def test_every_rating_lies_inside_its_interval_and_no_interval_has_zero_width(rows, seed):
    start = pd.Timestamp("2024-01-01")
    frame = votes([r[:3] for r in rows], timestamp=[start + pd.Timedelta(seconds=r[3]) for r in rows],
                  len_a=[r[4] for r in rows], len_b=[r[5] for r in rows])
    for scheme, ci, ties in COMBOS:
        try:
            ranking = rank_votes(frame, RankSettings(scheme, ties, ci, B, 0.05, seed))
        except RankingError:
            continue  # a clear refusal (e.g. one model only, or no finite adjusted fit) is allowed
        k = ranking.n_models
        for r in ranking.rows:
            assert math.isfinite(r.rating), (scheme, ci, ties, r)
            if math.isnan(r.ci_low):
                assert math.isnan(r.ci_high)
                assert r.interval_note or ci == "none", (scheme, ci, ties, r)
            else:
                assert r.ci_low <= r.rating <= r.ci_high, (scheme, ci, ties, r)
                assert r.ci_high - r.ci_low > 1e-6 * max(1.0, abs(r.rating)), (scheme, ci, ties, r)
            if r.interval_note and r.rank_low is not None:
                assert (r.rank_low, r.rank_high) == (1, k), (scheme, ci, ties, r)
        # every writer accepts the result (no NaN reaches an output)
        json.loads(to_json(ranking))
        to_markdown(ranking)
        to_csv(ranking)


# --- leaderboard ------------------------------------------------------------------------------------


@pytest.fixture
def one_task(tmp_path) -> str:
    return write(tmp_path, "one_task.csv", "model_id,task_id,metric_name,score\na,t1,acc,0.9\nb,t1,acc,0.5\n"
                                           "c,t1,acc,0.1\n")


def test_leaderboard_on_one_task_claims_no_difference(capsys, one_task):
    # Before: "3 of 3 pairs differ" with CI 0.10–0.10.
    code, out, err = cli(capsys, "leaderboard", one_task, "--format", "markdown", "--bootstrap", B)
    assert code == 0, err
    assert "0 of 3 pairs differ" in out and "3 without an interval, so no verdict" in out
    assert "| 1 | a | 0.90 | – | 1.00 | 1 |" in out and "differs" not in out.split("pairs differ")[0]
    assert "No interval: a, b, c (1 task: too few for an interval)." in out
    code, out, _ = cli(capsys, "leaderboard", one_task, "--format", "json", "--bootstrap", B)
    doc = json.loads(out)
    assert all(r["mean_ci_lo"] is None and (r["rank_lo"], r["rank_hi"]) == (1, 3) for r in doc["rows"])
    assert all(p["ci_lo"] is None and not p["significant"] and p["note"] for p in doc["pairwise"])


def test_a_constant_difference_is_not_a_zero_width_verdict():
    runs = pd.DataFrame([{"model_id": m, "task_id": f"t{t}", "score": s + 0.1 * (m == "a")}
                         for t, s in enumerate([0.2, 0.5, 0.7]) for m in "ab"])
    board = aggregate(runs, LeaderboardSettings(replicates=B))
    (pair,) = board.pairwise
    assert not pair.significant and "no variation" in pair.note and math.isnan(pair.ci_lo)
    assert all((r.rank_lo, r.rank_hi) == (1, 2) for r in board.rows)
    leaderboard_csv(board)  # writable


def test_friedman_on_two_identically_ranked_tasks(capsys, tmp_path):
    # Before: "Iman–Davenport F = inf, p = 0".
    path = write(tmp_path, "two.csv", "model_id,task_id,score\n" + "".join(
        f"{m},t{t},{s - 0.1 * t}\n" for t in (1, 2) for m, s in (("a", 0.9), ("b", 0.5), ("c", 0.3))))
    code, out, err = cli(capsys, "leaderboard", path, "--format", "markdown", "--bootstrap", B)
    assert code == 0, err
    assert "inf" not in out.lower().replace("information", "")
    assert "Iman–Davenport F undefined" in out and "Friedman χ² = 4.000" in out
    code, out, _ = cli(capsys, "leaderboard", path, "--format", "json", "--bootstrap", B)
    friedman = json.loads(out)["params"]["friedman"]
    assert friedman["ff"] is None and friedman["ff_p_value"] is None and "identically" in friedman["note"]


score_tables = st.lists(st.lists(st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.none()), min_size=1,
                                 max_size=5), min_size=2, max_size=4)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=score_tables, stratified=st.booleans(), rank_by=st.sampled_from(["mean", "win_rate"]))
def test_leaderboard_intervals_hold_their_estimates_and_verdicts_need_intervals(table, stratified, rank_by):
    width = min(len(r) for r in table)
    runs = pd.DataFrame([{"model_id": f"m{i}", "task_id": f"t{t}", "score": s, "category": "ab"[t % 2]}
                         for i, row in enumerate(table) for t, s in enumerate(row[:width]) if s is not None])
    if runs.empty:
        return
    board = aggregate(runs, LeaderboardSettings(rank_by, B, 0.05, 0, stratified))
    for r in board.rows:
        if math.isnan(r.mean_ci_lo):
            assert r.interval_note or r.tasks_completed == 0
        else:
            assert r.mean_ci_lo <= r.mean_score <= r.mean_ci_hi and r.mean_ci_hi - r.mean_ci_lo > 1e-6
    for p in board.pairwise:
        if p.significant:
            assert p.note is None and p.ci_hi - p.ci_lo > 1e-6 and (p.ci_lo > 0 or p.ci_hi < 0)
        if p.note is None and p.n_tasks:
            assert p.ci_lo <= p.diff <= p.ci_hi
    json.loads(dumps(leaderboard_dict(board)))
    full_markdown(board)
    leaderboard_csv(board)


# --- weights of zero ---------------------------------------------------------------------------------


@pytest.fixture
def weightless(tmp_path) -> str:
    return write(tmp_path, "w0.csv", "model_a,model_b,winner,weight\n" + "".join(
        f"{a},{b},{w},0\n" for a, b, w in [("x", "y", "model_a"), ("y", "x", "model_a"), ("x", "z", "model_b"),
                                           ("z", "y", "tie"), ("y", "z", "model_b")]))


@pytest.mark.parametrize("scheme", ["winrate", "bt", "stratified", "ipw", "adjusted"])
@pytest.mark.parametrize("fmt", ["csv", "json", "markdown"])
def test_all_vote_weights_zero_is_refused(capsys, weightless, scheme, fmt):
    # Before: winrate CSV printed nan, bt put every model at 1500 without a word.
    code, out, err = cli(capsys, "rank", weightless, "--scheme", scheme, "--format", fmt, "--bootstrap", B)
    assert code == 2 and out == ""
    assert "every vote has weight 0" in err


def test_a_model_whose_votes_all_weigh_zero_is_named():
    frame = votes([("x", "y", "model_a"), ("y", "x", "tie"), ("x", "z", "model_b")], weight=[1.0, 2.0, 0.0])
    with pytest.raises(RankingError, match="every vote of z has weight 0"):
        rank_votes(frame, RankSettings("winrate", ci="none"))


def test_stratified_uses_vote_weights():
    # Side only (no timestamps). x on the left: wins weigh 3, the loss 1 ⇒ r = 3/4 (unweighted 1/2);
    # x on the right: one win of weight 1 ⇒ r = 1. Corrected = mean of the two strata.
    rows = [("x", "y", "model_a"), ("x", "y", "model_b"), ("y", "x", "model_b")]
    weighted = votes(rows, weight=[3.0, 1.0, 1.0])
    plain = {r.model: r.rating for r in rank_votes(votes(rows), RankSettings("stratified", ci="none")).rows}
    rated = {r.model: r.rating for r in rank_votes(weighted, RankSettings("stratified", ci="none")).rows}
    assert plain["x"] == pytest.approx((0.5 + 1.0) / 2)
    assert rated["x"] == pytest.approx((0.75 + 1.0) / 2) and rated["y"] == pytest.approx((0.25 + 0.0) / 2)


def test_all_task_weights_zero_is_refused(capsys, tmp_path):
    # Before: markdown printed "+nan".
    path = write(tmp_path, "tw0.csv", "model_id,task_id,score,weight\n" + "".join(
        f"{m},t{t},{s},0\n" for t in (1, 2) for m, s in (("a", 0.9), ("b", 0.5))))
    code, out, err = cli(capsys, "leaderboard", path, "--format", "markdown")
    assert code == 2 and out == "" and "every task has weight 0" in err
    runs = pd.DataFrame({"model_id": ["a", "a", "b"], "task_id": ["t1", "t2", "t2"], "score": [0.9, 0.8, 0.5],
                         "weight": [1.0, 0.0, 0.0]})
    with pytest.raises(LeaderboardError, match="b: every scored task has weight 0"):
        aggregate(runs, LeaderboardSettings(replicates=B))


# --- the writers refuse NaN and infinity ----------------------------------------------------------------


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_writers_refuse_non_finite_numbers(bad):
    with pytest.raises(NonFiniteOutputError, match=r"\$\.rows\[1\]\.x"):
        dumps({"rows": [{"x": 1.0}, {"x": bad}]})
    with pytest.raises(NonFiniteOutputError, match="CSV row 1, column 'b'"):
        csv_table(["a", "b"], [["m", bad]])
    with pytest.raises(NonFiniteOutputError, match="markdown table row 1"):
        markdown_table(["a", "b"], [["m", bad]])
    with pytest.raises(NonFiniteOutputError):
        number(bad, 2)


@pytest.mark.parametrize("text", ["+nan", "nan", "inf", "-inf", "0.10–nan", "NaN%"])
def test_markdown_refuses_formatted_non_finite_text(text):
    with pytest.raises(NonFiniteOutputError):
        markdown_table(["Model", "Value"], [["m", text]])


def test_names_that_read_nan_are_names():
    assert "| nan | 0.50 |" in markdown_table(["Model", "Mean"], [[markdown_text("nan"), number(0.5, 2)]])
    assert dumps({"model": "inf", "ci_low": None}) == '{\n  "model": "inf",\n  "ci_low": null\n}'
    assert csv_table(["model", "ci"], [["nan", None]]) == "model,ci\nnan,\n"
    assert number(None, 2) == "–" and number(0.25, 2, sign=True) == "+0.25"


def test_leaderboard_outputs_hold_no_nan_for_missing_categories():
    runs = pd.DataFrame({"model_id": ["a", "b", "a"], "task_id": ["t1", "t1", "t2"], "score": [0.9, 0.5, 0.7],
                         "category": ["math", "math", "code"]})
    board = aggregate(runs, LeaderboardSettings(replicates=B))
    doc = leaderboard_dict(board)
    assert {r["model_id"]: r["categories"]["code"] for r in doc["rows"]} == {"a": 0.7, "b": None}
    dumps(doc), full_markdown(board), leaderboard_csv(board)


# --- the annotator policy -------------------------------------------------------------------------------


@pytest.fixture
def hasty(tmp_path) -> str:
    rows = "".join(f"{'abc'[i % 3]},{'bca'[i % 3]},{'model_a' if i % 2 else 'model_b'},u{i % 3},1.0\n"
                   for i in range(30))
    return write(tmp_path, "hasty.csv", "model_a,model_b,winner,annotator_id,response_time_s\n" + rows)


def test_a_policy_that_leaves_no_votes_says_so(capsys, hasty):
    code, out, err = cli(capsys, "rank", hasty)
    assert code == 2 and out == ""
    assert "annotator policy 'exclude' left no votes" in err and "--annotators keep" in err
    assert "golden-question" not in err
    code, out, err = cli(capsys, "rank", hasty, "--annotators", "keep", "--bootstrap", B)
    assert code == 0 and json.loads(out)["params"]["unqualified_votes"] == 30


def test_golden_only_votes_blame_the_golden_questions():
    frame = votes([("a", "b", "model_a")] * 3, is_golden=[True] * 3, golden_answer=["model_a"] * 3)
    with pytest.raises(RankingError, match="all 3 votes are golden-question votes"):
        rank_votes(frame)


def test_report_takes_the_annotator_policy(capsys, hasty, tmp_path):
    code, out, err = cli(capsys, "report", hasty, "--out", tmp_path / "r1", "--no-png", "--bootstrap", B)
    assert code == 2 and "--annotators keep" in err
    code, out, err = cli(capsys, "report", hasty, "--out", tmp_path / "r2", "--no-png", "--bootstrap", B,
                         "--annotators", "keep")
    assert code == 0, err
    doc = json.loads((tmp_path / "r2" / "report.json").read_text())
    assert doc["params"]["annotators"] == "keep" and doc["params"]["unqualified_votes"] == 30
    assert ("Annotator policy keep: 30 judgements (30 items) of 3 unqualified annotators kept"
            in (tmp_path / "r2" / "BT_ANALYSIS_REPORT.md").read_text())


def test_without_intervals_there_is_nothing_to_explain():
    ranking = rank_votes(votes([("a", "b", "model_a")]), RankSettings(ci="none"))
    assert all(r.interval_note is None and r.rank_low is None for r in ranking.rows)
    assert "No interval" not in to_markdown(ranking)
    assert all(m["ci_low"] is None for m in json.loads(to_json(ranking))["models"])


def test_an_anchor_among_models_without_intervals_still_says_why(capsys, tmp_path):
    # Three identical votes: alpha's resamples cannot vary, beta is the anchor; both say why.
    path = write(tmp_path, "three.csv", "model_a,model_b,winner\n" + "alpha,beta,model_a\n" * 3)
    code, out, err = cli(capsys, "rank", path, "--anchor", "beta=1000", "--bootstrap", B)
    assert code == 0, err
    models = {m["model"]: m for m in json.loads(out)["models"]}
    assert models["beta"]["ci_low"] is None and models["beta"]["rating"] == 1000
    assert "anchor" in models["beta"]["interval_note"] and "no variation" in models["alpha"]["interval_note"]


def test_fractional_vote_counts_are_counted_as_the_reason_counts_them():
    # A win-rate matrix without counts gives each pair one comparison of fractional wins: a model's
    # total is 1.9999999 votes. It is two votes, so it keeps its interval (the reason would say "2 votes").
    estimate = np.array([1563.7, 1468.0])
    result = check_intervals(estimate, estimate - 200, estimate + 200, np.array([2 - 1e-12, 2.0]))
    assert np.isfinite(result.low).all() and result.notes == (None, None)
