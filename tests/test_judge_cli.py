"""`evalboard judge`: JSON, markdown and CSV of docs/design.md "Command line", errors with exit status 2."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from core.cli import main
from core.judge.types import MODEL_FIELDS

ROWS = ("model,baseline,query_id,preference,dataset,len_model,len_baseline\n"
        "strong,base,q1,2,math,100,50\nstrong,base,q2,1.75,code,90,60\nstrong,base,q3,1.5,code,80,70\n"
        "weak,base,q1,1,math,40,50\nweak,base,q2,1.25,code,30,60\nweak,base,q3,,code,20,70\n")


@pytest.fixture
def prefs_csv(tmp_path):
    path = tmp_path / "prefs.csv"
    path.write_text(ROWS, encoding="utf-8")
    return path


def run(capsys, *args) -> tuple[int, str, str]:
    status = main(["judge", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def test_json(capsys, prefs_csv):
    status, out, _ = run(capsys, prefs_csv, "--bootstrap", 200, "--seed", 3)
    assert status == 0
    data = json.loads(out)
    assert set(data) == {"baseline", "models", "categories", "params"} and data["baseline"] == "base"
    assert [m["model"] for m in data["models"]] == ["strong", "base", "weak"]
    strong = data["models"][0]
    assert set(strong) == {*MODEL_FIELDS, "categories"}
    assert strong["win_rate"] == pytest.approx(100 * (1 + 0.75 + 0.5) / 3)
    assert (strong["n_wins"], strong["n_wins_base"], strong["n_draws"], strong["n_total"]) == (2, 0, 1, 3)
    assert strong["avg_length"] == 90 and strong["categories"]["code"]["win_rate"] == pytest.approx(62.5)
    weak = data["models"][2]
    assert weak["n_total"] == 2  # the empty judgement is a judge failure, left out
    assert data["params"]["bootstrap"] == 200 and data["params"]["seed"] == 3
    notes = " ".join(data["params"]["notes"])
    assert "1 rows without a judgement" in notes and "standard_error is AlpacaEval's" in notes


def test_markdown(capsys, prefs_csv):
    status, out, _ = run(capsys, prefs_csv, "--format", "markdown", "--bootstrap", 100, "--alpha", 0.1)
    assert status == 0
    assert out.startswith("Win rates (percent) against the baseline base\n\n| Model | LC win rate | LC 90% CI | "
                          "Win rate | 90% CI | SE | LC SE | Wins | Baseline wins | Draws | Prompts | Discrete | "
                          "Avg length |")
    assert ("| base (baseline) | 50.00 | 50.00-50.00 | 50.00 | 50.00-50.00 | 0.00 | 0.00 | 0 | 0 | 3 | 3 | 50.00 | "
            "60 |") in out
    assert "Win rate per category\n\n| Model | code | math |" in out
    assert "\n\nNotes:\n- " in out and "nan" not in out.lower()


def test_csv_one_row_per_model_and_output_file(capsys, prefs_csv, tmp_path):
    target = tmp_path / "judge.csv"
    status, out, _ = run(capsys, prefs_csv, "--format", "csv", "-o", target, "--bootstrap", 0)
    assert status == 0 and out == ""
    table = pd.read_csv(io.StringIO(target.read_text(encoding="utf-8")))
    assert list(table.columns) == [*MODEL_FIELDS, "category:code", "category:math"]
    assert table["model"].tolist() == ["strong", "base", "weak"]
    assert table["win_rate_ci_low"].isna().all()  # --bootstrap 0: no interval, an empty cell


@pytest.mark.parametrize("args, message", [
    (["--baseline", "other"], "no rows against baseline 'other'; the baselines are: base"),
    (["--bootstrap", "-1"], "`bootstrap` must be a non-negative integer"),
    (["--alpha", "0"], "`alpha` must lie strictly between 0 and 1"),
])
def test_bad_settings_exit_2(capsys, prefs_csv, args, message):
    status, out, err = run(capsys, prefs_csv, *args)
    assert status == 2 and out == "" and message in err


def test_bad_file_exit_2_naming_rows_and_columns(capsys, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("model,baseline,query_id,preference\nm,b,q1,2\nm,b,q2,7\n", encoding="utf-8")
    status, out, err = run(capsys, path)
    assert status == 2 and out == ""
    assert "bad.csv: rejected, nothing was stored" in err and "[column 'preference']" in err and "1 row: 2 ('7')" in err


def test_a_score_table_is_read_as_preferences_and_refused(capsys, tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("model_id,task_id,score\nm,t1,0.5\n", encoding="utf-8")
    status, _, err = run(capsys, path)
    assert status == 2 and "missing required columns for preferences" in err and "--map preference=score" in err
    path.write_text("model,baseline,query_id,preference\n", encoding="utf-8")
    status, _, err = run(capsys, path)
    assert status == 2 and "the file has a header but no data rows" in err


def test_column_mapping(capsys, tmp_path):
    path = tmp_path / "odd.csv"
    path.write_text("system,reference,item,p\nm,b,q1,0.75\nm,b,q2,0.25\n", encoding="utf-8")
    status, out, _ = run(capsys, path, "--map", "model=system", "--map", "baseline=reference", "--map", "query_id=item",
                         "--map", "preference=p", "--bootstrap", 0)
    assert status == 0 and json.loads(out)["models"][0]["win_rate"] == pytest.approx(50.0)


def test_a_stored_dataset_of_another_kind_is_refused(capsys, tmp_path, db_path):
    votes = tmp_path / "votes.csv"
    votes.write_text("model_a,model_b,winner\nx,y,model_a\ny,x,tie\n", encoding="utf-8")
    assert main(["ingest", str(votes), "--name", "some votes", "--db", str(db_path)]) == 0
    capsys.readouterr()
    status, out, err = run(capsys, "some votes", "--db", db_path)
    assert status == 2 and out == "" and "some votes: rejected, nothing was stored: holds votes, not judged " \
        "preferences" in err
    status, _, err = run(capsys, "no such thing", "--db", db_path)
    assert status == 2 and "no such file, and no stored dataset of that name" in err
