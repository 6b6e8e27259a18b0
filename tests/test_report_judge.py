"""`evalboard report` of judged preferences (core.report.judge): JUDGE_REPORT.md, judge.csv, report.json and
figures/lc_vs_raw.png (or a note), from a file or a stored dataset; the baseline chosen with --baseline."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import plotly.graph_objects as go
import pytest

from core.charts import export
from core.cli import main
from core.report.judge import scatter_png
from core.samples.files import SAMPLES_DIR
from core.samples.judge import JUDGE_MODELS, JUDGE_SAMPLE, judge_demo
from tests.test_report import _png_size

SAMPLE = SAMPLES_DIR / JUDGE_SAMPLE
FAST = ["--bootstrap", "30"]
REPORT_KEYS = {"kind", "params", "seed", "input", "versions", "judge", "png", "png_note", "figures", "notes",
               "timings"}
MODEL_KEYS = {"model", "win_rate", "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total",
              "discrete_win_rate", "length_controlled_winrate", "lc_standard_error", "avg_length",
              "win_rate_ci_low", "win_rate_ci_high", "lc_ci_low", "lc_ci_high", "lc_warning", "categories"}


def report(tmp_path, source, *extra) -> tuple[int, object]:
    out = tmp_path / "bundle"
    return main(["report", str(source), "--out", str(out), *extra]), out


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("judge") / "bundle"
    assert main(["report", str(SAMPLE), "--out", str(out), *FAST, "--no-png"]) == 0
    return out


def test_files_and_json_contract(bundle):
    assert sorted(p.name for p in bundle.iterdir()) == ["JUDGE_REPORT.md", "judge.csv", "report.json"]
    text = (bundle / "report.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text)
    assert set(doc) == REPORT_KEYS and doc["kind"] == "preferences"
    assert doc["params"] == {"baseline": "gpt-base", "bootstrap": 30, "lc_bootstrap": 30, "alpha": 0.05, "seed": 0}
    assert doc["input"]["source"].endswith(JUDGE_SAMPLE) and doc["input"]["rows"] == 960
    assert doc["png"] is False and doc["png_note"] == "PNG export turned off" and doc["figures"] == ["lc_vs_raw"]
    judged = doc["judge"]
    assert judged["baseline"] == "gpt-base" and set(judged["categories"]) == {"coding", "writing", "reasoning", "chat"}
    assert len(judged["models"]) == len(JUDGE_MODELS) + 1
    assert all(MODEL_KEYS <= set(m) for m in judged["models"])
    base = next(m for m in judged["models"] if m["model"] == "gpt-base")
    assert base["win_rate"] == 50 and base["length_controlled_winrate"] == 50


def test_csv_matches_json(bundle):
    doc = json.loads((bundle / "report.json").read_text())["judge"]
    rows = list(csv.DictReader(io.StringIO((bundle / "judge.csv").read_text())))
    assert [r["model"] for r in rows] == [m["model"] for m in doc["models"]]
    for row, model in zip(rows, doc["models"]):
        for field in ("win_rate", "length_controlled_winrate", "lc_ci_low", "standard_error"):
            value = float(row[field]) if row[field] else None  # an empty cell is JSON's null
            assert value == pytest.approx(model[field])


def test_markdown_has_the_table_the_notes_and_says_why_no_png(bundle):
    text = (bundle / "JUDGE_REPORT.md").read_text()
    assert text.startswith("# Judged preferences\n\n8 models judged against the baseline gpt-base on 120 prompts")
    assert "verbose-7b" in text and "lc\\_standard\\_error" in text
    assert "PNG figures were not written: PNG export turned off" in text


def test_stored_dataset_and_several_baselines(tmp_path, capsys):
    two = pd.concat([judge_demo(n_prompts=20, seed=1),
                     judge_demo(n_prompts=20, seed=2).assign(baseline="other-base")])
    src = tmp_path / "two.csv"
    two.to_csv(src, index=False)
    db = str(tmp_path / "store.db")
    assert main(["ingest", str(src), "--name", "two", "--db", db]) == 0
    capsys.readouterr()
    code, _ = report(tmp_path, "two", "--db", db, "--no-png", *FAST)
    assert code == 2 and "other-base" in capsys.readouterr().err  # which baseline? the error names the choices
    code, out = report(tmp_path, "two", "--db", db, "--no-png", *FAST, "--baseline", "other-base")
    assert code == 0
    doc = json.loads((out / "report.json").read_text())
    assert doc["judge"]["baseline"] == "other-base" and doc["input"]["source"].startswith("dataset two")


def test_png_figure(tmp_path):
    if not export.png_available():
        pytest.skip("PNG export unavailable")
    code, out = report(tmp_path, SAMPLE, "--bootstrap", "0")
    assert code == 0
    doc = json.loads((out / "report.json").read_text())
    assert doc["png"] is True and doc["png_note"] is None
    width, height = _png_size(out / "figures" / "lc_vs_raw.png")
    assert width >= 800 and height >= 700
    assert "![lc_vs_raw](figures/lc_vs_raw.png)" in (out / "JUDGE_REPORT.md").read_text()


def test_page_png_of_a_figure(tmp_path):
    if not export.png_available():
        pytest.skip("PNG export unavailable")
    data = scatter_png(go.Figure(go.Scatter(x=[1, 2], y=[2, 1])).to_json())
    path = tmp_path / "x.png"
    path.write_bytes(data)
    assert _png_size(path)[0] > 100
