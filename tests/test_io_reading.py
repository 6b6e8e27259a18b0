"""Reading files whose shape detection cannot settle alone: proposals, outcome mappings for empty and
numeric winners, the missing-score rule, query_id aliases, pair and annotator columns, and the
content fingerprint that recognises the same data however it arrives."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.io import InputError, detection, load, load_lm_eval, parse_pairs, propose_mapping
from core.io.mapping import peek

LONG_WITH_ODD_NAMES = ("model,instruction_id,dataset,preference,score\n"
                       "m1,0,koala,1.75,0.75\nm1,1,oasst,1.25,0.25\nm2,0,koala,1.5,0.5\nm2,1,oasst,2.0,1.0\n")


def write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


def test_unsure_detection_says_what_it_guessed_and_proposes_a_mapping(tmp_path):
    path = write(tmp_path / "prefs.csv", LONG_WITH_ODD_NAMES)
    with pytest.raises(InputError) as caught:
        load(path)
    message = str(caught.value)
    assert "detection guessed a wide score table (one row per model, keyed by 'model')" in message
    assert "no task column" in message and "'model' repeats on 4 rows" in message
    assert ("--kind eval_runs --map model_id=model --map task_id=instruction_id --map score=score "
            "--map category=dataset") in message
    kind, proposal = detection(peek(path))
    assert kind is None and proposal.columns == {"model_id": "model", "task_id": "instruction_id",
                                                 "score": "score", "category": "dataset"}
    loaded = load(path, kind=proposal.kind, columns=proposal.columns)
    assert loaded.frame.groupby("model_id")["score"].mean().to_dict() == {"m1": 0.5, "m2": 0.75}


def test_a_true_wide_table_is_not_questioned(tmp_path):
    path = write(tmp_path / "wide.csv", "model,t1,t2\nm1,0.5,1\nm2,0,0.25\n")
    assert detection(peek(path)) == ("eval_runs_wide", None)
    assert load(path).kind == "eval_runs"


def test_proposal_against_a_baseline_leaves_unknown_values_to_the_user(tmp_path):
    text = "model,instruction_id,preference,baseline\nm1,0,2.0,base\nm1,1,1.0,base\nm1,2,,base\nm1,3,0,base\n"
    proposal = propose_mapping(peek(write(tmp_path / "v1.csv", text)))
    assert proposal.kind == "votes"
    assert proposal.columns == {"model_a": "baseline", "model_b": "model", "winner": "preference",
                                "query_id": "instruction_id"}
    assert proposal.outcomes == {"1.0": "model_a", "2.0": "model_b"}
    assert proposal.open_values == ("0", "")
    assert "--outcome =drop" in proposal.options()


# -- outcomes: empty cells, drop, thresholds -------------------------------------------------------------

EMPTY_WINNERS = "model_a,model_b,winner\nx,y,model_a\nx,y,\ny,x,model_b\nx,y,\n"


def test_empty_winners_are_refused_with_the_way_out(tmp_path):
    with pytest.raises(InputError, match=r"(?s)empty winner.*--outcome =drop.*2 rows: 2 \(empty\), 4 \(empty\)"):
        load(write(tmp_path / "v.csv", EMPTY_WINNERS))


def test_empty_winners_mapped_to_an_outcome_or_dropped(tmp_path):
    path = write(tmp_path / "v.csv", EMPTY_WINNERS)
    tied = load(path, outcomes={"": "tie"})
    assert tied.frame["winner"].astype(str).tolist() == ["model_a", "tie", "model_b", "tie"]
    dropped = load(path, outcomes={"": "drop"})
    assert dropped.frame["winner"].astype(str).tolist() == ["model_a", "model_b"]
    assert "2 rows dropped by the outcome mapping" in " ".join(dropped.notes)
    assert tied.sha256 != dropped.sha256


def test_a_value_mapped_to_drop(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,a\nx,y,garbage\ny,x,b\n")
    loaded = load(path, outcomes={"garbage": "drop"})
    assert loaded.frame["winner"].astype(str).tolist() == ["model_a", "model_b"]


def test_numeric_thresholds_and_equal_numbers(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,1.2\nx,y,1.5\ny,x,1.93\nx,y,1.50\nx,y,2\n")
    loaded = load(path, outcomes={"<1.5": "model_a", "1.5": "tie", ">1.5": "model_b"})
    assert loaded.frame["winner"].astype(str).tolist() == ["model_a", "tie", "model_b", "tie", "model_b"]


def test_unknown_outcome_target_is_named(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner\nx,y,a\n")
    with pytest.raises(InputError, match="or to 'drop'"):
        load(path, outcomes={"a": "left-ish"})


def test_parse_pairs_empty_key_only_for_outcomes():
    assert parse_pairs(["=drop", "a=tie"], "--outcome", empty_key=True) == {"": "drop", "a": "tie"}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_pairs(["=x"], "--map")


def test_cli_outcome_drop_is_counted(tmp_path, capsys):
    path = write(tmp_path / "v.csv", EMPTY_WINNERS)
    db = tmp_path / "s.db"
    assert main(["ingest", str(path), "--db", str(db)]) == 2
    assert "--outcome =drop" in capsys.readouterr().err
    assert main(["ingest", str(path), "--db", str(db), "--outcome", "=drop"]) == 0
    out = capsys.readouterr().out
    assert "stored 2 votes rows" in out and "2 rows dropped" in out


# -- the missing-score rule ------------------------------------------------------------------------------

WIDE_GAPS = "task_id,m1,m2\nt1,1,\nt2,0,1\nt3,1,NA\n"
LONG_GAPS = "model_id,task_id,score\nm1,t1,1\nm1,t2,0\nm1,t3,1\nm2,t1,\nm2,t2,1\n"  # m2/t3 absent


@pytest.mark.parametrize("rule, m2_mean, m2_rows", [("skip", 1.0, 1), ("zero", 1 / 3, 3)])
def test_one_missing_rule_for_wide_and_long(tmp_path, rule, m2_mean, m2_rows):
    wide = load(write(tmp_path / "wide.csv", WIDE_GAPS), missing=rule)
    long = load(write(tmp_path / "long.csv", LONG_GAPS), missing=rule)
    for loaded in (wide, long):
        means = loaded.frame.groupby("model_id")["score"].mean()
        assert means["m2"] == pytest.approx(m2_mean) and means["m1"] == pytest.approx(2 / 3)
        assert (loaded.frame["model_id"] == "m2").sum() == m2_rows
        assert f"missing={rule}" in " ".join(loaded.notes)
        assert loaded.frame["score"].notna().all()
    key = ["model_id", "task_id"]
    pd.testing.assert_frame_equal(wide.frame.sort_values(key).reset_index(drop=True),
                                  long.frame.sort_values(key).reset_index(drop=True))
    assert wide.sha256 == long.sha256  # the same content, whichever shape it came in


def test_zero_names_the_models_that_miss_cells(tmp_path):
    loaded = load(write(tmp_path / "wide.csv", WIDE_GAPS), missing="zero")
    assert "2 (model, task) cells have no score" in loaded.notes[-1] and "m2 2" in loaded.notes[-1]


def test_non_numeric_score_is_still_refused(tmp_path):
    with pytest.raises(InputError, match="score is not a finite number"):
        load(write(tmp_path / "long.csv", "model_id,task_id,score\nm1,t1,abc\n"))


def test_unknown_missing_rule():
    with pytest.raises(ValueError, match="missing must be one of skip, zero"):
        load(b"model_id,task_id,score\nm,t,1\n", missing="mean")


def test_leaderboard_states_the_rule_and_the_missing_tasks(tmp_path, capsys):
    path = write(tmp_path / "long.csv", LONG_GAPS)
    assert main(["leaderboard", str(path), "--bootstrap", "20", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["params"]["missing"] == "skip"
    assert {r["model_id"]: r["tasks_missing"] for r in doc["rows"]} == {"m1": 0, "m2": 2}
    assert main(["leaderboard", str(path), "--bootstrap", "20", "--format", "markdown", "--missing", "zero"]) == 0
    out = capsys.readouterr().out
    assert "Every model is scored on all 3 tasks; cells without a score were scored 0 (missing=zero)." in out
    assert main(["leaderboard", str(path), "--bootstrap", "20", "--format", "markdown"]) == 0
    assert "1 of 2 models miss tasks (of 3): m2 2; cells without a score are not scored" in capsys.readouterr().out


def test_leaderboard_missing_zero_on_a_stored_dataset(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert main(["ingest", str(write(tmp_path / "long.csv", LONG_GAPS)), "--db", str(db), "--name", "gaps"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "gaps", "--db", str(db), "--bootstrap", "20", "--missing", "zero"]) == 0
    rows = {r["model_id"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["m2"]["mean_score"] == pytest.approx(1 / 3) and rows["m2"]["tasks_missing"] == 0


# -- aliases, pair columns, several annotators -----------------------------------------------------------

def test_query_id_from_a_repeating_id_and_not_from_a_row_number(tmp_path):
    repeating = load(write(tmp_path / "a.csv", "id,prompt,left,right,winner\n0,p,x,y,left\n0,p,x,y,tie\n"))
    assert repeating.frame["query_id"].astype(str).tolist() == ["0", "0"]
    assert "column 'id' read as query_id (also possible: prompt" in " ".join(repeating.notes)
    row_numbers = load(write(tmp_path / "b.csv", "id,prompt,left,right,winner\n0,p,x,y,left\n1,p,x,y,tie\n"))
    assert row_numbers.frame["query_id"].astype(str).tolist() == ["p", "p"]
    explicit = load(write(tmp_path / "c.csv", "id,question_id,left,right,winner\n0,q,x,y,left\n0,q,x,y,tie\n"))
    assert explicit.frame["query_id"].astype(str).tolist() == ["q", "q"]


def test_prompt_texts_are_not_a_query_id(tmp_path):
    text = ('id,instance_id,prompt,model_a,model_b,winner\n1,task_2,"Rewrite this:\n  text",x,y,a\n'
            '2,task_2,"Rewrite this:\n  text",x,y,b\n')
    loaded = load(write(tmp_path / "t.csv", text))
    assert loaded.frame["query_id"].astype(str).tolist() == ["task_2", "task_2"]
    no_ids = load(write(tmp_path / "u.csv", 'prompt,model_a,model_b,winner\n"two\nlines",x,y,a\n'))
    assert "query_id" not in no_ids.frame


def test_instruction_id_is_a_query_id(tmp_path):
    loaded = load(write(tmp_path / "a.csv", "instruction_id,model_a,model_b,winner\n7,x,y,a\n"))
    assert loaded.frame["query_id"].astype(str).tolist() == ["7"]


def test_dataset_is_the_category_of_a_wide_table(tmp_path):
    loaded = load(write(tmp_path / "w.csv", "task_id,dataset,m1,m2\nt1,koala,1,0\nt2,oasst,0,1\n"))
    assert sorted(loaded.frame["category"].unique()) == ["koala", "oasst"]
    assert "column 'dataset' read as the task category" in " ".join(loaded.notes)


PANDALM_LIKE = json.dumps([
    {"idx": 0, "cmp_key": "llama-7b_opt-7b", "annotator1": 1, "annotator2": "2", "annotator3": 0},
    {"idx": 1, "cmp_key": "bloom-7b_llama-7b", "annotator1": 2, "annotator2": 2, "annotator3": 2},
])


def test_pair_column_and_one_vote_per_annotator_column(tmp_path):
    path = write(tmp_path / "t.json", PANDALM_LIKE)
    proposal = propose_mapping(peek(path))
    assert proposal.columns == {"pair": "cmp_key", "winner": "annotator1,annotator2,annotator3", "query_id": "idx"}
    loaded = load(path, kind="votes", columns=proposal.columns, outcomes={"0": "tie"})
    frame = loaded.frame
    assert frame["annotator_id"].astype(str).tolist() == ["annotator1"] * 2 + ["annotator2"] * 2 + ["annotator3"] * 2
    assert frame["model_a"].astype(str).tolist() == ["llama-7b", "bloom-7b"] * 3
    assert frame["model_b"].astype(str).tolist() == ["opt-7b", "llama-7b"] * 3
    assert frame["winner"].astype(str).tolist() == ["model_a", "model_b", "model_b", "model_b", "tie", "model_b"]


def test_a_pair_column_without_one_separator_is_refused(tmp_path):
    path = write(tmp_path / "p.csv", "pair,winner\na_b,1\nab,2\n")
    with pytest.raises(InputError, match="must name two models joined by one separator"):
        load(path, kind="votes", columns={"pair": "pair", "winner": "winner"})


# -- the same content however it arrives -----------------------------------------------------------------

def lm_eval_doc(model: str, acc: float) -> str:
    return json.dumps({"results": {"arc": {"acc": acc, "acc_stderr": 0.01}, "piqa": {"acc": acc / 2}},
                       "config": {"model_args": f"pretrained={model}", "num_fewshot": 0}})


def test_lm_eval_folder_list_and_order_give_one_fingerprint(tmp_path, store):
    folder = tmp_path / "evals"
    (folder / "sub").mkdir(parents=True)
    a = write(folder / "a.json", lm_eval_doc("org/a", 0.5))
    b = write(folder / "sub" / "b.json", lm_eval_doc("org/b", 0.75))
    copy = tmp_path / "elsewhere"
    copy.mkdir()
    b2 = write(copy / "renamed.json", b.read_text())
    first = store.ingest(load_lm_eval([folder]))
    assert first.created
    for sources in ([b, a], [a, b2], [str(a), str(b)]):
        again = store.ingest(load_lm_eval(sources))
        assert not again.created and again.dataset.id == first.dataset.id
    assert len(store.datasets()) == 1


def test_vote_order_still_counts(tmp_path):
    one = load(b"model_a,model_b,winner\nx,y,a\ny,x,a\n", name="v.csv")
    two = load(b"model_a,model_b,winner\ny,x,a\nx,y,a\n", name="v.csv")
    assert one.sha256 != two.sha256  # file order is the order of last resort for drift tests
    renamed = load(b"model_a,model_b,winner\nx,y,a\ny,x,a\n", name="other-name.csv")
    assert renamed.sha256 == one.sha256
    assert np.array_equal(one.frame["winner"].cat.codes, renamed.frame["winner"].cat.codes)
