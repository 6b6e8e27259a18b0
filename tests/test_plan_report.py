"""`evalboard report` (votes): the "How many more votes" section and report.json["plan"] (docs/methods.md §14)."""

from __future__ import annotations

import json

import pandas as pd

from core.cli import main
from core.samples import SAMPLES_DIR
from tests.test_report import table_rows_ok

ARENA = SAMPLES_DIR / "arena_demo.csv"


def bundle(tmp_path, source, *extra):
    out = tmp_path / "bundle"
    assert main(["report", str(source), "--out", str(out), "--bootstrap", "50", "--no-png", *extra]) == 0
    return (out / "BT_ANALYSIS_REPORT.md").read_text(), json.loads((out / "report.json").read_text())


def section(markdown: str) -> str:
    return markdown.split("## How many more votes\n", 1)[1].split("\n## ", 1)[0]


def test_section_and_json_agree_with_evalboard_plan(tmp_path, capsys):
    text, doc = bundle(tmp_path, ARENA, "--alpha", "0.1")
    table_rows_ok(text)
    capsys.readouterr()
    assert main(["plan", str(ARENA), "--alpha", "0.1"]) == 0
    alone = json.loads(capsys.readouterr().out)
    block = doc["plan"]
    assert block["available"] and block["alpha"] == 0.1 and block["power"] == 0.8
    assert block["pairs"] == alone["pairs"] and block["ranking"] == [m["model"] for m in doc["rank"]["models"]]
    part = section(text)
    assert "| Model A | Model B |" in part and "scheduler" in part
    assert part.count("\n- ") == len(block["pairs"])  # one sentence per pair


def test_two_tied_models_say_why(tmp_path):
    path = tmp_path / "votes.csv"
    pd.DataFrame({"model_a": ["A", "A"], "model_b": ["B", "B"], "winner": ["tie", "tie"]}).to_csv(path, index=False)
    text, doc = bundle(tmp_path, path)
    assert doc["plan"]["available"] is True  # two models with ties: a plan (the gap is zero: not reachable)
    assert doc["plan"]["pairs"][0]["extra_votes_direct"] is None
    assert "No feasible number of votes" in section(text)
