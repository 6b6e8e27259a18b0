"""`evalboard rank` (core.cli): the JSON contract of docs/design.md "CLI", markdown and CSV made safe for
hostile model names, options, exit status 2 on invalid input, and every pairwise input kind."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core.cli import main
from tests import reference_values
from tests.conftest import shared_file
from tests.reference_values import D1_MODELS, D1_NAMED

ATOL_ELO_MM = 1e-3  # docs/methods.md §0: MM fits, abs 1e-3 on Elo
TOP_KEYS = {"scheme", "n_votes", "n_models", "identifiable", "params", "models"}  # docs/design.md "CLI"
MODEL_KEYS = {"model", "rank", "rating", "strength", "ci_low", "ci_high", "rank_low", "rank_high", "win_rate",
              "n_votes"}
MARKDOWN_HEADER = "| Rank | Model | Elo | 95% CI | Rank range | Win rate (raw) | Votes |"

# docs/methods.md §2, Reference D1 (left, right, left wins, right wins, ties) and its Elo (tests/reference_values.py).
D1 = D1_NAMED
D1_ELO = dict(zip(D1_MODELS, reference_values.D1_ELO))
D1_ELO_ANCHORED_D = dict(zip(D1_MODELS, reference_values.D1_ELO_ANCHORED_D))
HOSTILE = ["a|b", "<script>", "=cmd"]


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(["rank", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def rank_json(capsys, *args) -> dict:
    code, out, err = run(capsys, *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def ratings(doc: dict) -> dict[str, float]:
    return {m["model"]: m["rating"] for m in doc["models"]}


@pytest.fixture
def d1_file(tmp_path):
    lines = ["model_a,model_b,winner"]
    for a, b, wins_a, wins_b, ties in D1:
        lines += [f"{a},{b},model_a"] * wins_a + [f"{a},{b},model_b"] * wins_b + [f"{a},{b},tie"] * ties
    path = tmp_path / "d1.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def hostile_file(tmp_path):
    """Votes among models named a|b, <script> and =cmd, in two games; =cmd wins most."""
    rows = [("a|b", "<script>", "model_a", "g1"), ("<script>", "=cmd", "model_b", "g1"),
            ("=cmd", "a|b", "tie", "g2"), ("a|b", "=cmd", "model_b", "g2"), ("<script>", "a|b", "model_a", "g1"),
            ("=cmd", "<script>", "model_a", "g2"), ("a|b", "<script>", "tie", "g2"), ("=cmd", "a|b", "model_b", "g1")]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["model_a", "model_b", "winner", "game_id"])
    writer.writerows(rows)
    path = tmp_path / "hostile.csv"
    path.write_text(out.getvalue())
    return path


# --- JSON contract -------------------------------------------------------------------------------


def test_json_has_exactly_the_contract_keys(capsys, d1_file):
    doc = rank_json(capsys, d1_file, "--bootstrap", 50)
    assert set(doc) == TOP_KEYS
    assert doc["scheme"] == "bt" and doc["n_votes"] == 52 and doc["n_models"] == 4 and doc["identifiable"] is True
    assert doc["params"]["bootstrap"] == 50 and doc["params"]["seed"] == 0 and doc["params"]["alpha"] == 0.05
    assert doc["params"]["rating_scale"] == "elo"
    assert len(doc["models"]) == 4
    for m in doc["models"]:
        assert MODEL_KEYS <= set(m)
        assert m["ci_low"] <= m["rating"] <= m["ci_high"]
        assert m["rank_low"] <= m["rank"] <= m["rank_high"]
    assert [m["model"] for m in doc["models"]] == ["A", "B", "C", "D"]
    assert [m["rank"] for m in doc["models"]] == [1, 2, 3, 4]
    for model, elo in ratings(doc).items():
        assert elo == pytest.approx(D1_ELO[model], abs=ATOL_ELO_MM)  # docs/methods.md §2, D1


def test_json_without_intervals_uses_null(capsys, d1_file):
    doc = rank_json(capsys, d1_file, "--ci", "none")
    assert all(m["ci_low"] is None and m["rank_low"] is None for m in doc["models"])


def test_winrate_scheme_reports_the_win_rate_scale(capsys, d1_file):
    doc = rank_json(capsys, d1_file, "--scheme", "winrate", "--bootstrap", 50)
    assert doc["scheme"] == "winrate" and doc["params"]["rating_scale"] == "win_rate"
    assert ratings(doc)["A"] == pytest.approx(19 / 26)
    assert all(0 <= m["ci_low"] <= m["rating"] <= m["ci_high"] <= 1 for m in doc["models"])


def test_by_game_id_gives_groups(capsys, hostile_file):
    doc = rank_json(capsys, hostile_file, "--by", "game_id", "--bootstrap", 30)
    assert set(doc) == {"scheme", "by", "n_votes", "groups"}
    assert doc["by"] == ["game_id"] and doc["n_votes"] == 8
    assert [g["group"] for g in doc["groups"]] == [{"game_id": "g1"}, {"game_id": "g2"}]
    for group in doc["groups"]:
        assert TOP_KEYS <= set(group)
        assert all(MODEL_KEYS <= set(m) for m in group["models"])
    assert sum(g["n_votes"] for g in doc["groups"]) == 8


def test_anchor_option(capsys, d1_file):
    doc = rank_json(capsys, d1_file, "--anchor", "D=1000", "--bootstrap", 50)
    assert doc["params"]["anchor"] == {"model": "D", "rating": 1000.0}
    got = ratings(doc)
    assert got["D"] == 1000.0
    for model, elo in D1_ELO_ANCHORED_D.items():  # docs/methods.md §2, D1 anchored D = 1000
        assert got[model] == pytest.approx(elo, abs=ATOL_ELO_MM)


# --- markdown and CSV with hostile model names ------------------------------------------------------


def table_cells(line: str) -> list[str]:
    """Cells of a markdown table row, split on pipes that are not backslash-escaped."""
    return re.split(r"(?<!\\)\|", line.strip())[1:-1]


def test_markdown_table_escapes_pipes_and_html(capsys, hostile_file):
    code, out, err = run(capsys, hostile_file, "--format", "markdown", "--bootstrap", 30)
    assert code == 0, err
    lines = out.splitlines()
    header = lines.index(MARKDOWN_HEADER)
    rows = [line for line in lines[header + 2:] if line.startswith("|")]
    assert len(rows) == 3
    assert all(len(table_cells(row)) == 7 for row in lines[header:header + 2 + len(rows)])
    models = {table_cells(row)[1].strip() for row in rows}
    assert models == {r"a\|b", r"\<script\>", "=cmd"}
    assert "<script>" not in out


def test_csv_neutralises_formulas(capsys, hostile_file):
    code, out, err = run(capsys, hostile_file, "--format", "csv", "--bootstrap", 30)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["model"] for r in rows} == {"'=cmd", "a|b", "<script>"}
    assert MODEL_KEYS <= set(rows[0])
    assert not any(cell.startswith(("=", "+", "@")) for r in rows for cell in r.values())


def test_output_writes_the_file(capsys, d1_file, tmp_path):
    target = tmp_path / "out" / "ranking.json"
    target.parent.mkdir()
    code, out, _ = run(capsys, d1_file, "--ci", "none", "--output", target)
    assert code == 0 and out == ""
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert set(doc) == TOP_KEYS and target.read_text().endswith("\n")


# --- invalid input ------------------------------------------------------------------------------


def test_invalid_input_exits_2_and_names_the_file(capsys, tmp_path):
    bad = tmp_path / "broken votes.csv"
    bad.write_text("model_a,model_b,winner\nx,y,model_a\nx,x,model_b\ny,z,perhaps\n")
    code, out, err = run(capsys, bad)
    assert code == 2 and out == ""
    assert str(bad) in err
    assert "perhaps" in err and "model_a == model_b" in err


def test_unknown_anchor_model_exits_2(capsys, d1_file):
    code, _, err = run(capsys, d1_file, "--anchor", "Z=1000", "--ci", "none")
    assert code == 2
    assert "--anchor names 'Z'" in err


def test_anchor_without_a_number_exits_2(capsys, d1_file):
    code, _, err = run(capsys, d1_file, "--anchor", "D=high")
    assert code == 2 and "--anchor needs a number" in err


def test_missing_file_and_dataset_exits_2(capsys, db_path, tmp_path):
    missing = tmp_path / "nope.csv"
    code, _, err = run(capsys, missing, "--db", db_path)
    assert code == 2 and str(missing) in err and "no stored dataset" in err


def test_unknown_group_column_exits_2(capsys, d1_file):
    code, _, err = run(capsys, d1_file, "--by", "annotator_id")
    assert code == 2 and "--by takes" in err


# --- other inputs -------------------------------------------------------------------------------


def test_rank_a_stored_dataset_by_name(capsys, db_path, d1_file):
    assert main(["ingest", str(d1_file), "--name", "d1 votes", "--db", str(db_path)]) == 0
    capsys.readouterr()
    doc = rank_json(capsys, "d1 votes", "--db", db_path, "--ci", "none")
    assert doc["n_votes"] == 52
    assert_allclose([ratings(doc)[m] for m in "ABCD"], [D1_ELO[m] for m in "ABCD"], atol=ATOL_ELO_MM)


def test_rank_a_counts_table(capsys, tmp_path):
    lines = ["model_a,model_b,winner,count"]
    for a, b, wins_a, wins_b, ties in D1:
        lines += [f"{a},{b},model_a,{wins_a}", f"{a},{b},model_b,{wins_b}", f"{a},{b},tie,{ties}"]
    path = tmp_path / "d1_counts.csv"
    path.write_text("\n".join(lines) + "\n")
    doc = rank_json(capsys, path, "--bootstrap", 50)
    assert doc["n_votes"] == 52
    assert_allclose([ratings(doc)[m] for m in "ABCD"], [D1_ELO[m] for m in "ABCD"], atol=ATOL_ELO_MM)


def d1_rate_matrices(tmp_path):
    """docs/methods.md §2 "Win-rate route": r_AB = 0.65, r_AC = 0.75, r_AD = 5/6, r_BC = 0.5, r_BD = 0.75,
    r_CD = 0.5 with n = 10, 10, 6, 10, 8, 8."""
    r = {("A", "B"): (0.65, 10), ("A", "C"): (0.75, 10), ("A", "D"): (5 / 6, 6), ("B", "C"): (0.5, 10),
         ("B", "D"): (0.75, 8), ("C", "D"): (0.5, 8)}
    names = "ABCD"
    rates = np.full((4, 4), np.nan)
    counts = np.zeros((4, 4))
    for (a, b), (rate, n) in r.items():
        i, j = names.index(a), names.index(b)
        rates[i, j], rates[j, i] = rate, 1 - rate
        counts[i, j] = counts[j, i] = n

    def write(path, m):
        body = [",".join(["model", *names])]
        body += [",".join([names[i], *("" if np.isnan(v) else repr(float(v)) for v in m[i])]) for i in range(4)]
        path.write_text("\n".join(body) + "\n")
        return path

    return write(tmp_path / "rates.csv", rates), write(tmp_path / "counts.csv", counts)


def test_rank_a_win_rate_matrix(capsys, tmp_path, db_path):
    rates, counts = d1_rate_matrices(tmp_path)
    doc = rank_json(capsys, rates)  # no counts: each pair counts once (a different estimator, noted)
    assert doc["n_models"] == 4 and doc["identifiable"] is True
    assert any("counts as one comparison" in note for note in doc["params"]["notes"])
    assert [m["model"] for m in doc["models"]][0] == "A"
    # With counts (stored with ingest --counts) the matrix reproduces D1 exactly.
    assert main(["ingest", str(rates), "--counts", str(counts), "--name", "d1 rates", "--db", str(db_path)]) == 0
    capsys.readouterr()
    doc = rank_json(capsys, "d1 rates", "--db", db_path)
    assert doc["n_votes"] == 52
    assert_allclose([ratings(doc)[m] for m in "ABCD"], [D1_ELO[m] for m in "ABCD"], atol=ATOL_ELO_MM)
    assert all(m["ci_low"] <= m["rating"] <= m["ci_high"] for m in doc["models"])


def test_rank_llmfao_crowd_comparisons(capsys):
    path = shared_file("llmfao/crowd-comparisons.csv")
    doc = rank_json(capsys, path, "--bootstrap", 100, "--annotators", "keep")
    assert doc["n_votes"] == 8931 and doc["n_models"] == 59 and doc["identifiable"] is True
    assert all(np.isfinite(m["rating"]) and m["ci_low"] <= m["rating"] <= m["ci_high"] for m in doc["models"])
    code, out, err = run(capsys, path, "--format", "markdown", "--ci", "none")
    assert code == 0 and MARKDOWN_HEADER in out, err
