"""Kind ``preferences`` (core.io.preferences): every spelling of a judgement read onto P(model beats baseline)
in [0, 1], AlpacaEval's annotations.json read as it is, and every broken rule named with its rows and columns."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.io import InputError, detect_kind, load
from core.schema import PREFERENCE_COLUMNS


def write_csv(tmp_path, text: str, name: str = "prefs.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_unit_scale_is_read_as_it_is_with_its_optional_columns(tmp_path):
    path = write_csv(tmp_path, "model,baseline,query_id,preference,category,len_model,len_baseline,judge\n"
                               "m1,base,q1,0.25,math,10,20,gpt4\n"
                               "m1,base,q2,1,code,30,5,gpt4\n"
                               "m2,base,q1,0.5,math,7,20,gpt4\n")
    loaded = load(path)
    assert loaded.kind == "preferences"
    frame = loaded.frame
    assert list(frame.columns) == list(PREFERENCE_COLUMNS)
    assert frame["preference"].tolist() == [0.25, 1.0, 0.5]
    assert frame["preference"].dtype == np.float64 and frame["len_model"].dtype == np.float64
    assert frame["query_id"].tolist() == ["q1", "q2", "q1"]
    assert not any("raw scale" in n for n in loaded.notes)


def test_alpaca_eval_raw_scale_with_zero_as_draw_and_failures_left_out(tmp_path):
    path = write_csv(tmp_path, "model,baseline,instruction_id,preference\n"
                               "m1,base,0,2\nm1,base,1,1\nm1,base,2,0\nm1,base,3,1.5\nm1,base,4,\nm1,base,5,1.25\n")
    loaded = load(path)
    assert loaded.frame["preference"].tolist() == [1.0, 0.0, 0.5, 0.5, 0.25]
    assert loaded.frame["query_id"].tolist() == ["0", "1", "2", "3", "5"]
    notes = " ".join(loaded.notes)
    assert "raw scale because some value exceeds 1" in notes
    assert "1 rows without a judgement (the judge gave none) left out" in notes and "(m1 1)" in notes


def test_winner_labels_and_empty_winner_as_judge_failure(tmp_path):
    path = write_csv(tmp_path, "model,baseline,query_id,winner\n"
                               "m1,base,q1,model\nm1,base,q2,Baseline\nm1,base,q3,tie\nm1,base,q4,draw\n"
                               "m1,base,q5,\nm2,base,q1,\n")
    loaded = load(path)
    assert loaded.frame["preference"].tolist() == [1.0, 0.0, 0.5, 0.5]
    assert "models with no judgement at all, hence not shown: m2" in " ".join(loaded.notes)


def test_zero_one_column_is_ambiguous_and_says_so_and_preference_raw_names_the_raw_scale(tmp_path):
    text = "model,baseline,query_id,preference\nm1,base,q1,1\nm1,base,q2,1\nm1,base,q3,0\n"
    path = write_csv(tmp_path, text)
    loaded = load(path)
    assert loaded.frame["preference"].tolist() == [1.0, 1.0, 0.0]
    assert "--map preference_raw=preference" in " ".join(loaded.notes)
    raw = load(path, kind="preferences", columns={"preference_raw": "preference"})
    assert raw.frame["preference"].tolist() == [0.0, 0.0, 0.5]  # 1 = baseline preferred, 0 = draw


def test_annotations_json_of_alpaca_eval_read_as_it_is(tmp_path):
    records = [
        {"instruction": "Say hi.\n", "output_1": "Hi!", "generator_1": "gpt4_1106_preview", "dataset": "helpful_base",
         "output_2": "Hello there, friend.", "generator_2": "my-model", "annotator": "weighted_alpaca_eval_gpt4_turbo",
         "preference": 1.8, "time_per_example": 0.5, "price_per_example": 0.01,
         "raw_completion": {"logprobs": None}},
        {"instruction": "  Add 2 and 2.", "output_1": "4", "generator_1": "gpt4_1106_preview", "dataset": "vicuna",
         "output_2": "", "generator_2": "my-model", "annotator": "weighted_alpaca_eval_gpt4_turbo",
         "preference": 1.0, "time_per_example": 0.5, "price_per_example": 0.01,
         "raw_completion": {"logprobs": None}},
    ]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    loaded = load(path)
    assert loaded.kind == "preferences"
    frame = loaded.frame
    assert frame["model"].tolist() == ["my-model"] * 2 and frame["baseline"].tolist() == ["gpt4_1106_preview"] * 2
    assert frame["query_id"].tolist() == ["Say hi.\n", "  Add 2 and 2."]  # the text itself, as it is
    assert frame["preference"].tolist() == pytest.approx([0.8, 0.0])
    assert frame["len_model"].tolist() == [20.0, 0.0] and frame["len_baseline"].tolist() == [3.0, 1.0]
    assert frame["category"].tolist() == ["helpful_base", "vicuna"]
    assert frame["judge"].tolist() == ["weighted_alpaca_eval_gpt4_turbo"] * 2
    notes = " ".join(loaded.notes)
    assert "query_id is the instruction text" in notes
    assert "len_model computed as the character length of 'output_2'" in notes


def test_detection_prefers_votes_for_pairwise_files_and_finds_preferences():
    assert detect_kind(pd.DataFrame(columns=["model", "baseline", "instruction_id", "preference"])) == "preferences"
    assert detect_kind(pd.DataFrame(columns=["generator_1", "generator_2", "instruction", "preference"])) == \
        "preferences"
    assert detect_kind(pd.DataFrame(columns=["model_a", "model_b", "winner", "baseline"])) == "votes"
    assert detect_kind(pd.DataFrame(columns=["model", "task", "score"])) == "eval_runs"


@pytest.mark.parametrize("text, columns, message, rows", [
    ("model,baseline,query_id,preference\nm,b,q1,0.4\nm,b,q2,2\nm,b,q3,0.5\nm,b,q4,2.5\n", ("preference",),
     "preference outside AlpacaEval's raw scale", "3 rows: 1 ('0.4'), 3 ('0.5'), 4 ('2.5')"),
    ("model,baseline,query_id,preference\nm,b,q1,-0.1\nm,b,q2,0.5\n", ("preference",), "preference below 0",
     "1 row: 1 ('-0.1')"),
    ("model,baseline,query_id,preference\nm,b,q1,0.1\nm,b,q1,0.5\nm,b,q2,0.5\n", ("model", "baseline", "query_id"),
     "the same model, baseline and query_id on more than one row", "2 rows: 1 ('m'), 2 ('m')"),
    ("model,baseline,query_id,winner\nm,b,q1,left\nm,b,q2,tie\n", ("winner",), "unknown winner label",
     "1 row: 1 ('left')"),
    ("model,baseline,query_id,preference\n,b,q1,0.1\nm,b,q2,oops\n", ("model",), "empty model", "1 row: 1"),
    ("model,baseline,query_id,preference\nm,b,q1,0.1\nm,b,q2,oops\n", ("preference",),
     "preference is not a finite number", "1 row: 2 ('oops')"),
])
def test_every_broken_rule_is_named_with_rows_and_columns(tmp_path, text, columns, message, rows):
    with pytest.raises(InputError) as caught:
        load(write_csv(tmp_path, text), kind="preferences")
    problem = next(p for p in caught.value.problems if p.message.startswith(message))
    assert problem.columns == columns
    assert rows in problem.describe()
    assert "prefs.csv: rejected, nothing was stored" in str(caught.value)


def test_missing_columns_are_named_with_what_the_file_has(tmp_path):
    with pytest.raises(InputError) as caught:
        load(write_csv(tmp_path, "model,query_id,score\nm,q1,0.5\n"), kind="preferences")
    message = str(caught.value)
    assert "missing required columns for preferences" in message
    assert "'baseline', 'preference (or winner)'" in message and "(the file has: model, query_id, score)" in message
    assert "--map preference=score" in message  # the hint says how to name other columns


def test_a_model_against_itself_is_allowed(tmp_path):
    """AlpacaEval's file holds the baseline against itself at 1.5 (a draw)."""
    loaded = load(write_csv(tmp_path, "model,baseline,query_id,preference\nb,b,q1,1.5\nm,b,q1,2\n"))
    assert loaded.frame["preference"].tolist() == [0.5, 1.0]


def test_outcome_mapping_is_refused_for_preferences(tmp_path):
    path = write_csv(tmp_path, "model,baseline,query_id,winner\nm,b,q1,model\n")
    with pytest.raises(ValueError, match="winner labels are model, baseline and tie"):
        load(path, kind="preferences", outcomes={"model": "model_a"})
