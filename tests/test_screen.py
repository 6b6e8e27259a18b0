"""The sequential annotator screen (docs/methods.md §17): its arithmetic against a hand computation, its time
order, what it leaves out, its error rates on planted populations, and the qualification rule "screen"."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.annotators.quality import DEFAULT_RULES, parse_rules
from core.annotators.screen import RELIABILITIES, SCREEN_ALPHA, mark_unqualified, screen_votes
from core.annotators.screen_sample import population
from core.charts.annotators import screen_path
from core.cli import main
from core.errors import SettingError
from core.io.votes import votes_from_frame
from core.ranking.request import prepare_votes


def _mixture(qs: list[float | None]) -> list[float]:
    """The running log of the equal-weight mixture over η of Π (η q + (1 − η)(1 − q)) / q; None = a tie."""
    products, out = np.ones(len(RELIABILITIES)), []
    for q in qs:
        if q is not None:
            products = products * np.array([(e * q + (1 - e) * (1 - q)) / q for e in RELIABILITIES])
        out.append(float(np.log(products.mean())))
    return out


def _toy() -> pd.DataFrame:
    # x votes a, b, a, tie (in time order; rows shuffled); y votes a, a. Half-tie BT of two models: P(a beats b)
    # = a's score share = (4 + 0.5) / 6 = 0.75.
    rows = [("x", 3, "model_a"), ("y", 1, "model_a"), ("x", 1, "model_a"), ("x", 4, "tie"), ("y", 2, "model_a"),
            ("x", 2, "model_b")]
    return pd.DataFrame({"annotator_id": [r[0] for r in rows], "model_a": "a", "model_b": "b",
                         "winner": [r[2] for r in rows],
                         "timestamp": [pd.Timestamp("2026-01-01") + pd.Timedelta(minutes=r[1]) for r in rows]})


def test_the_running_ratio_is_the_hand_computed_mixture():
    result = screen_votes(_toy())
    np.testing.assert_allclose(result.running_log_lr("x"), _mixture([0.75, 0.25, 0.75, None]), rtol=1e-5)
    np.testing.assert_allclose(result.running_log_lr("y"), _mixture([0.75, 0.75]), rtol=1e-5)
    row = result.annotators.set_index("annotator_id").loc["x"]
    assert (row["votes_seen"], row["decisive"], row["flagged"]) == (4, 3, False)


def test_a_tie_leaves_the_ratio_unchanged_and_a_categorical_frame_gives_the_same_path():
    plain = screen_votes(_toy())
    parsed = screen_votes(votes_from_frame(_toy(), "toy")[0])
    path = plain.running_log_lr("x")
    assert path[3] == path[2]
    np.testing.assert_allclose(parsed.running_log_lr("x"), path, rtol=1e-9)


def test_votes_are_read_in_time_order_then_vote_id():
    frame, _ = population(seed=3, n_annotators=20, votes_each=30)
    result = screen_votes(frame)
    shuffled = screen_votes(frame.sample(frac=1.0, random_state=1))
    pd.testing.assert_frame_equal(result.annotators, shuffled.annotators)
    one = result.annotators["annotator_id"].iloc[0]
    mine = frame[frame["annotator_id"] == one].sort_values("timestamp")
    # the same votes at one instant: vote_id decides; reversing the ids reverses the path's order of steps
    same_time = frame.assign(timestamp=pd.Timestamp("2026-01-01"), vote_id=frame["timestamp"].rank().astype(int))
    np.testing.assert_allclose(screen_votes(same_time).running_log_lr(one), result.running_log_lr(one))
    assert len(result.running_log_lr(one)) == len(mine)


def test_the_flag_is_the_first_vote_at_one_over_alpha():
    frame, kinds = population(seed=0)
    result = screen_votes(frame)
    threshold = np.log(1 / SCREEN_ALPHA)
    assert result.flagged
    for row in result.annotators.to_dict("records"):
        path = result.running_log_lr(row["annotator_id"])
        above = np.flatnonzero(path >= threshold)
        if row["flagged"]:
            assert row["flagged_at_vote"] == above[0] + 1
            assert row["log_lr"] == pytest.approx(path[above[0]]) and row["log_lr"] >= threshold
            assert 1 <= row["flagged_at_vote"] <= row["votes_seen"] == len(path)
        else:
            assert len(above) == 0 and row["flagged_at_vote"] == 0
            assert row["log_lr"] == pytest.approx(path[-1]) and row["max_log_lr"] < threshold


def test_golden_questions_and_votes_without_an_annotator_are_left_out():
    frame, _ = population(seed=1, n_annotators=10, votes_each=20)
    golden = frame.assign(is_golden=frame.index % 4 == 0)
    golden.loc[golden.index % 7 == 0, "annotator_id"] = None
    result = screen_votes(golden)
    kept = (~golden["is_golden"]) & golden["annotator_id"].notna()
    assert result.n_votes == int(kept.sum()) == int(result.annotators["votes_seen"].sum())


def test_one_vote_is_screened_and_flags_only_when_the_model_all_but_rules_it_out():
    frame, _ = population(seed=2, n_annotators=20, votes_each=40, reversed_share=0, random_share=0)
    strongest, weakest = "m00", "m09"
    # an annotator with a single vote for the favourite: screened, not flagged
    favourite = screen_votes(pd.concat([frame, pd.DataFrame([{"vote_id": -1, "model_a": strongest, "model_b": weakest,
                                                              "winner": "model_a", "annotator_id": "solo",
                                                              "timestamp": pd.Timestamp("2026-02-01")}])]))
    solo = favourite.annotators.set_index("annotator_id").loc["solo"]
    assert (solo["votes_seen"], solo["flagged"]) == (1, False)
    # one vote against a favourite the model gives 1 − q: the mixture is (1/6)·Σ(η q + (1 − η)(1 − q))/q
    upset = screen_votes(pd.concat([frame, pd.DataFrame([{"vote_id": -1, "model_a": strongest, "model_b": weakest,
                                                          "winner": "model_b", "annotator_id": "solo",
                                                          "timestamp": pd.Timestamp("2026-02-01")}])]))
    row = upset.annotators.set_index("annotator_id").loc["solo"]
    assert row["votes_seen"] == 1 and row["log_lr"] > solo["log_lr"]
    assert row["flagged"] == (row["log_lr"] >= np.log(20))


def test_no_annotator_column_says_so():
    result = screen_votes(pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "winner": ["model_a"]}))
    assert result.flagged == () and "no annotator_id column" in result.reason
    assert result.as_dict()["flagged"] == [] and result.as_dict()["reason"] == result.reason


def test_bad_alpha_is_a_setting_error():
    with pytest.raises(SettingError, match="alpha"):
        screen_votes(_toy(), alpha=1.5)


# ------------------------------------------------------------------------------------------- error rates


def test_reversed_annotators_are_flagged_and_honest_ones_are_not():
    """Issue check: 30 % reversed, 10 % random, no golden questions; 100 annotators of 50 votes, 10 models
    600 Elo apart end to end, 50 seeds: ≥ 90 % of the reversed flagged, ≤ 5 % of the honest."""
    caught, false = [], []
    for seed in range(50):
        frame, kinds = population(seed=seed)
        flagged = set(screen_votes(frame).flagged)
        caught += [a in flagged for a, k in kinds.items() if k == "reversed"]
        false += [a in flagged for a, k in kinds.items() if k == "honest"]
    assert np.mean(caught) >= 0.90
    assert np.mean(false) <= 0.05


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_an_honest_population_is_flagged_at_most_alpha(alpha):
    """Ville: each honest annotator is flagged with probability ≤ α (the fit is estimated, so about that)."""
    rates = [np.mean([len(screen_votes(population(seed=seed, n_annotators=200, votes_each=60, reversed_share=0,
                                                  random_share=0, tie_share=0.1)[0], alpha).flagged) / 200])
             for seed in range(20)]
    assert np.mean(rates) <= alpha


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_annotators=st.integers(1, 8), votes_each=st.integers(1, 12),
       tie_share=st.sampled_from([0.0, 0.3]))
def test_any_small_population_gives_finite_consistent_rows(seed, n_annotators, votes_each, tie_share):
    frame, _ = population(seed=seed, n_models=4, n_annotators=n_annotators, votes_each=votes_each,
                          tie_share=tie_share)
    result = screen_votes(frame)
    rows = result.annotators
    assert len(rows) == n_annotators and int(rows["votes_seen"].sum()) == len(frame) == result.n_votes
    assert np.isfinite(result.path).all() and np.isfinite(rows[["log_lr", "max_log_lr"]].to_numpy()).all()
    assert (rows["flagged_at_vote"] <= rows["votes_seen"]).all()
    assert (rows["flagged"] == (rows["max_log_lr"] >= np.log(1 / SCREEN_ALPHA))).all()


# ------------------------------------------------------------------------------------ qualification rule


def test_the_rule_screen_makes_the_flagged_unqualified_and_the_default_changes_nothing():
    frame, kinds = population(seed=4)
    default = prepare_votes(frame, "exclude")
    assert default.policy.rules == DEFAULT_RULES and default.unqualified == () and default.screen is None
    assert "qualification_rules" not in default.as_dict()["annotator_policy"]
    screened = prepare_votes(frame, "exclude", qualify="golden,fast,screen")
    flagged = set(screened.screen.flagged)
    assert flagged and set(screened.unqualified) == flagged
    assert not set(screened.votes["annotator_id"]) & flagged
    assert screened.as_dict()["annotator_policy"]["qualification_rules"] == ["golden", "fast", "screen"]
    assert "qualification rules: golden, fast, screen" in " ".join(screened.lines())
    quality = screened.quality.set_index("annotator_id")
    assert all(any("sequential screen" in r for r in quality.loc[a, "reasons"]) for a in flagged)
    # without golden answers or timings nobody was evaluable; the screen makes the cleared ones qualified
    assert set(quality["status"]) == {"qualified", "unqualified"}
    assert set(default.quality["status"]) == {"not_evaluable"}


def test_parse_rules():
    assert parse_rules(None) == DEFAULT_RULES
    assert parse_rules("screen, golden") == ("golden", "screen")
    for bad in ("", "golden,speed"):
        with pytest.raises(SettingError, match="--qualify"):
            parse_rules(bad)


def test_mark_unqualified_leaves_an_unscreened_table_alone():
    quality = pd.DataFrame({"annotator_id": ["z"], "status": ["not_evaluable"], "reasons": [[]]})
    assert mark_unqualified(quality, screen_votes(_toy())).equals(quality)


# ------------------------------------------------------------------------------------- command line


def test_annotators_command_reports_the_screen(tmp_path, capsys):
    frame, kinds = population(seed=5)
    path = tmp_path / "votes.csv"
    frame.to_csv(path, index=False)
    assert main(["annotators", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    screen = data["screen"]
    assert screen["alpha"] == SCREEN_ALPHA and "Ville" in screen["method"]
    assert screen["flagged"] and all(set(f) == {"annotator_id", "votes_seen", "flagged_at_vote", "log_lr"}
                                     for f in screen["flagged"])
    named = {f["annotator_id"] for f in screen["flagged"]}
    assert np.mean([a in named for a, k in kinds.items() if k == "reversed"]) >= 0.9
    assert not {a for a, k in kinds.items() if k == "honest"} & named
    assert data["annotator_policy"]["unqualified_annotators"] == []  # the default rules: nothing changes
    assert main(["annotators", str(path), "--format", "json", "--qualify", "golden,fast,screen"]) == 0
    applied = json.loads(capsys.readouterr().out)
    assert applied["annotator_policy"]["unqualified_annotators"] == sorted(f["annotator_id"] for f in screen["flagged"])
    assert main(["annotators", str(path), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "## Sequential screen" in markdown and f"{len(screen['flagged'])} of 100 annotators flagged" in markdown


def test_rank_with_the_screen_rule_leaves_the_flagged_out(tmp_path, capsys):
    frame, _ = population(seed=6)
    path = tmp_path / "votes.csv"
    frame.to_csv(path, index=False)
    assert main(["rank", str(path), "--ci", "none", "--qualify", "screen"]) == 0
    ranked = json.loads(capsys.readouterr().out)
    flagged = screen_votes(frame).flagged
    policy = ranked["params"]["annotator_policy"]
    assert policy["unqualified_annotators"] == sorted(flagged) and policy["qualification_rules"] == ["screen"]
    assert policy["judgements_left_out"] == int(frame["annotator_id"].isin(flagged).sum())


def test_a_wrong_rule_exits_2(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    _toy().to_csv(path, index=False)
    assert main(["annotators", str(path), "--qualify", "golden,vibes"]) == 2
    assert "--qualify" in capsys.readouterr().err


def test_votes_without_annotators_get_a_clear_screen_message(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    _toy().drop(columns="annotator_id").to_csv(path, index=False)
    assert main(["annotators", str(path), "--format", "markdown"]) == 0
    assert "Not available: no annotator\\_id column" in capsys.readouterr().out


def test_the_report_bundle_carries_the_screen(tmp_path):
    frame, _ = population(seed=7, n_annotators=30, votes_each=30)
    path = tmp_path / "votes.csv"
    frame.to_csv(path, index=False)
    assert main(["report", str(path), "--out", str(tmp_path / "out"), "--bootstrap", "20", "--no-png",
                 "--qualify", "golden,fast,screen"]) == 0
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    flagged = [f["annotator_id"] for f in data["annotators"]["screen"]["flagged"]]
    assert flagged == list(screen_votes(frame).flagged)
    assert data["annotators"]["annotator_policy"]["unqualified_annotators"] == sorted(flagged)
    assert "Sequential screen" in (tmp_path / "out" / "BT_ANALYSIS_REPORT.md").read_text()


def test_the_running_log_lr_chart_draws_the_line_and_the_flag():
    frame, _ = population(seed=0)
    result = screen_votes(frame)
    row = result.annotators[result.annotators["flagged"]].iloc[0]
    fig = screen_path(result.running_log_lr(row["annotator_id"]), result.threshold, row["annotator_id"],
                      int(row["flagged_at_vote"]))
    line, flag = fig.data
    assert len(line.y) == row["votes_seen"] and list(flag.x) == [row["flagged_at_vote"]]
    assert fig.layout.shapes[0].y0 == pytest.approx(np.log(20))


def test_a_model_filtered_away_does_not_change_the_fit():
    frame, _ = population(seed=8, n_annotators=20, votes_each=30)
    parsed = votes_from_frame(frame, "votes")[0]
    without = parsed[(parsed["model_a"] != "m09") & (parsed["model_b"] != "m09")]  # m09 stays a category
    plain = frame[(frame["model_a"] != "m09") & (frame["model_b"] != "m09")]
    np.testing.assert_allclose(screen_votes(without).path, screen_votes(plain).path, rtol=1e-9)
