"""evalboard leaderboard: the JSON report and the markdown table of docs/design.md "CLI", to the character."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.cli import main
from core.formats import dumps
from core.leaderboard.aggregate import LeaderboardSettings, aggregate
from core.leaderboard.render import leaderboard_dict, to_markdown
from core.samples.demo import SAMPLES_DIR
from tests.reference_values import D3_X, D3_Y, D3_Z

# docs/methods.md §8, Reference D3: tasks 1–5 "math", 6–10 "code"
D3 = {"X": D3_X, "Y": D3_Y, "Z": D3_Z}  # tests/reference_values.py
HEADER = "| Rank | Model | Mean | 95% CI | Win rate | Tasks |\n|---:|---|---:|---|---:|---:|"


def d3_runs(names=("X", "Y", "Z")) -> pd.DataFrame:
    rows = []
    for name, key in zip(names, D3):
        for t, score in enumerate(D3[key], start=1):
            rows.append({"model_id": name, "task_id": f"t{t:02d}", "metric_name": "acc", "score": score,
                         "category": "math" if t <= 5 else "code"})
    return pd.DataFrame(rows)


@pytest.fixture
def d3_csv(tmp_path):
    path = tmp_path / "d3.csv"
    d3_runs().to_csv(path, index=False)
    return path


def test_markdown_table_to_the_character():
    board = aggregate(d3_runs(), LeaderboardSettings(replicates=1000, seed=0))
    lines = to_markdown(board).splitlines()
    assert "\n".join(lines[:2]) == HEADER
    # X: mean 0.73, bootstrap CI (0.61975, 0.83) (docs/methods.md §3 D3 reference), win rate 8/10
    assert lines[2] == "| 1 | X | 0.73 | 0.62-0.83 | 0.80 | 10 |"
    assert lines[3].startswith("| 2 | Y | 0.66 | ") and lines[3].endswith(" | 0.40 | 10 |")
    assert lines[4].startswith("| 3 | Z | 0.49 | ") and lines[4].endswith(" | 0.10 | 10 |")


def test_ranking_by_win_rate_orders_the_table_by_it():
    runs = d3_runs()
    # give Z the best score on three extra tasks so that its win rate, not its mean, leads
    extra = pd.DataFrame([{"model_id": m, "task_id": f"x{i}", "metric_name": "acc", "score": 1.0 if m == "Z" else 0.0,
                           "category": "code"} for i in range(12) for m in "XYZ"])
    board = aggregate(pd.concat([runs, extra]), LeaderboardSettings(rank_by="win_rate", replicates=200))
    assert [r.model_id for r in board.rows][0] == "Z"
    assert to_markdown(board).splitlines()[2].startswith("| 1 | Z | ")


def test_ids_are_cut_to_20_characters_and_pipes_escaped():
    runs = d3_runs(names=("a-very-long-model-identifier-v2", "pipe|model", "<b>bold</b>"))
    lines = to_markdown(aggregate(runs, LeaderboardSettings(replicates=100))).splitlines()
    assert "| a-very-long-model-id |" in lines[2]
    assert r"| pipe\|model |" in lines[3]
    assert r"\<b\>bold\</b\>" in lines[4]
    assert all(line.count("|") - line.count(r"\|") == 7 for line in lines)  # no cell broke the table


def test_json_report_has_the_contract_keys(d3_csv, capsys):
    assert main(["leaderboard", str(d3_csv), "--bootstrap", "200", "--seed", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"rows", "pairwise", "params"}
    row = report["rows"][0]
    assert {"rank", "model_id", "mean_score", "mean_ci_lo", "mean_ci_hi", "win_rate", "tasks_completed",
            "categories"} <= set(row)
    assert row["model_id"] == "X" and row["categories"] == pytest.approx({"code": 0.66, "math": 0.80})
    assert {"model_a", "model_b", "diff", "ci_lo", "ci_hi", "significant"} <= set(report["pairwise"][0])
    assert len(report["pairwise"]) == 3
    params = report["params"]
    assert (params["rank_by"], params["bootstrap"], params["seed"], params["alpha"]) == ("mean", 200, 3, 0.05)
    assert params["friedman"]["chi2"] == pytest.approx(10.7567568, rel=1e-6)  # docs/methods.md §8 D3


def test_markdown_format_from_the_cli(d3_csv, capsys, tmp_path):
    out = tmp_path / "board.md"
    assert main(["leaderboard", str(d3_csv), "--format", "markdown", "--bootstrap", "1000", "--output",
                 str(out)]) == 0
    text = out.read_text()
    assert text.startswith(HEADER) and "| 1 | X | 0.73 | 0.62-0.83 | 0.80 | 10 |" in text
    # then the pairwise table (docs/methods.md §3 D3: X−Y 0.07, CI (0.0, 0.14), not significant; Y−Z significant)
    assert "| Model A | Model B | A − B | 95% CI | Verdict | Tasks |" in text
    assert "| X | Y | +0.07 | 0.00 to 0.14 | tie | 10 |" in text
    assert "| Y | Z | +0.17 | 0.07 to 0.25 | differs | 10 |" in text
    assert "2 of 3 pairs differ" in text and "Friedman χ² = 10.757" in text


def test_score_out_of_range_exits_2_naming_the_row(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("model_id,task_id,score\nm1,t1,0.5\nm1,t2,1.5\n")
    assert main(["leaderboard", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "score above 1" in err and "1 row: 2 (" in err


def test_votes_are_not_a_leaderboard(capsys):
    assert main(["leaderboard", str(SAMPLES_DIR / "arena_demo.csv")]) == 2
    assert "evalboard rank" in capsys.readouterr().err


def test_sample_and_stored_dataset(db_path, capsys):
    assert main(["leaderboard", str(SAMPLES_DIR / "evalruns_demo.csv"), "--format", "markdown"]) == 0
    first = capsys.readouterr().out
    assert first.splitlines()[2].startswith("| 1 | atlas-70b |")
    assert main(["samples", "--db", str(db_path)]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "evalruns_demo", "--db", str(db_path), "--format", "markdown"]) == 0
    assert capsys.readouterr().out == first


def test_report_dict_is_json_safe_with_missing_cells():
    runs = d3_runs().iloc[:-3]  # Z misses three tasks
    report = leaderboard_dict(aggregate(runs, LeaderboardSettings(replicates=100)))
    parsed = json.loads(dumps(report))  # NaN becomes null; plain json.dumps would write NaN
    z = next(r for r in parsed["rows"] if r["model_id"] == "Z")
    assert z["tasks_completed"] == 7 and z["tasks_missing"] == 3
