"""The Judge page's table when a model has no length-controlled win rate (no answer lengths): its LC cells show
an em dash, not "None" (Streamlit's drawing of a missing number), and a caption says why; columns without a
missing number stay numbers with their formats."""

from __future__ import annotations

import pytest

from core.report.judge_tables import without_lc
from core.samples.judge import judge_demo
from tests.test_app_judge import csv_bytes, judge_page, stored, table

NO_LENGTHS = "nimbus-1b"


@pytest.fixture
def no_lengths(db_path) -> int:
    frame = judge_demo(n_prompts=40, seed=1)
    frame.loc[frame["model"] == NO_LENGTHS, "len_model"] = None
    return stored(db_path, csv_bytes(frame), "no_lengths")


def test_a_model_without_lengths_shows_a_dash_and_why(no_lengths):
    at = judge_page(no_lengths)
    shown = table(at).set_index("model")
    assert shown.loc[NO_LENGTHS, "length_controlled_winrate"] == "—"
    assert shown.loc[NO_LENGTHS, "lc_ci_low"] == "—" and shown.loc[NO_LENGTHS, "avg_length"] == "—"
    assert not shown.isna().any().any()  # nothing left for Streamlit to draw as "None"
    lc = shown.drop(index=NO_LENGTHS)["length_controlled_winrate"]
    assert all(len(v.split(".")[1]) == 2 for v in lc)  # two decimals, as the numeric columns show
    assert shown["win_rate"].dtype.kind == "f"  # a column without a missing number stays a number
    [why] = [c.value for c in at.main.caption if c.value.startswith("— in length_controlled_winrate")]
    assert NO_LENGTHS in why.replace("\\", "") and "no answer lengths" in why


def test_every_model_with_lengths_needs_no_caption(db_path):
    at = judge_page(stored(db_path, csv_bytes(judge_demo(n_prompts=40, seed=1)), "with_lengths"))
    assert not [c for c in at.main.caption if c.value.startswith("— in")]
    assert table(at)["length_controlled_winrate"].dtype.kind == "f"


def test_why_each_model_has_no_rate():
    notes = ["a: no length-controlled win rate (no answer lengths)",
             "b: no length-controlled win rate (only 3 prompts with answer lengths (the GLM needs 10))"]
    doc = {"models": [{"model": "a", "length_controlled_winrate": None},
                      {"model": "b", "length_controlled_winrate": float("nan")},
                      {"model": "c", "length_controlled_winrate": 51.0}], "params": {"notes": notes}}
    assert without_lc(doc) == {"a": "no answer lengths",
                               "b": "only 3 prompts with answer lengths (the GLM needs 10)"}
    failed = {"models": [{"model": "a", "length_controlled_winrate": None}],
              "params": {"notes": ["no length-controlled win rate: the fit did not converge"]}}
    assert without_lc(failed) == {"a": "the fit did not converge"}
