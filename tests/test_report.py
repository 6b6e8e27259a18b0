"""`evalboard report` (core.report): the bundle's files, well-formed markdown, CSV = JSON, the JSON
contract blocks, escaping of hostile model names, exit status 2, and real PNGs (when exportable)."""

from __future__ import annotations

import json
import re
import struct

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.report import votes_data
from core.samples import SAMPLES_DIR

ARENA = SAMPLES_DIR / "arena_demo.csv"
EVALRUNS = SAMPLES_DIR / "evalruns_demo.csv"
FAST = ["--bootstrap", "100"]
RANK_KEYS = {"scheme", "n_votes", "n_models", "identifiable", "params", "models"}
MODEL_KEYS = {"model", "rank", "rating", "strength", "ci_low", "ci_high", "rank_low", "rank_high", "win_rate",
              "n_votes"}
BIAS_KEYS = {"n_votes", "position", "order", "model_position", "time_exposure", "length", "pairing", "ipw"}
VOTES_FIGURES = {"winrate_predicted", "rank_vs_dimension", "winrate_scatter", "winrate_diff_heatmap_all",
                 "winrate_share_stacked", "elo_share_stacked", "forest", "battles", "bias_panel"}


def report(tmp_path, source, *extra) -> tuple[int, str]:
    out = tmp_path / "bundle"
    code = main(["report", str(source), "--out", str(out), *extra])
    return code, out


@pytest.fixture(scope="module")
def arena_bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("arena") / "bundle"
    assert main(["report", str(ARENA), "--out", str(out), *FAST, "--no-png"]) == 0
    return out


def table_rows_ok(markdown: str) -> None:
    """Every row of every table has as many unescaped pipes as its header."""
    header_pipes = None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            header_pipes = None
            continue
        pipes = len(re.findall(r"(?<!\\)\|", line))
        if header_pipes is None:
            header_pipes = pipes
        assert pipes == header_pipes, line


def test_votes_bundle_files_and_markdown(arena_bundle):
    assert {p.name for p in arena_bundle.iterdir()} == {"BT_ANALYSIS_REPORT.md", "BT_ANALYSIS_REPORT.csv",
                                                         "report.json"}
    text = (arena_bundle / "BT_ANALYSIS_REPORT.md").read_text()
    table_rows_ok(text)
    for heading in ("## Global ranking", "## Per game", "## Per dimension", "## Per game × dimension",
                    "## Bias diagnostics", "## Annotators", "## Figures"):
        assert heading in text
    assert "PNG figures were not written" in text


def test_votes_json_contract(arena_bundle):
    doc = json.loads((arena_bundle / "report.json").read_text())
    assert RANK_KEYS <= set(doc["rank"]) and all(MODEL_KEYS <= set(m) for m in doc["rank"]["models"])
    assert set(doc["groups"]) == {"game", "dimension", "game_dimension"}
    assert len(doc["groups"]["game_dimension"]) == 9
    assert all(RANK_KEYS <= set(g) and "group" in g for gs in doc["groups"].values() for g in gs)
    assert BIAS_KEYS <= set(doc["bias"])
    assert {"annotators", "agreement"} <= set(doc["annotators"])
    assert re.fullmatch(r"[0-9a-f]{64}", doc["input"]["sha256"])
    assert set(doc["versions"]) == {"numpy", "pandas", "scipy", "plotly", "streamlit", "evalboard"}
    assert doc["versions"]["numpy"] == np.__version__
    p = doc["params"]
    assert (p["scheme"], p["ties"], p["ci"], p["bootstrap"], p["annotators"], doc["seed"]) == \
        ("bt", "half", "bootstrap", 100, "exclude", 0)
    assert doc["png"] is False and doc["png_note"] == "PNG export turned off"
    assert VOTES_FIGURES <= set(doc["figures"]) and "winrate_chat_style" in doc["figures"]


def test_csv_matches_json(arena_bundle):
    csv = pd.read_csv(arena_bundle / "BT_ANALYSIS_REPORT.csv", keep_default_na=False)
    assert list(csv.columns) == ["scope", "game_id", "dimension", "model", "rank", "rating", "ci_low", "ci_high",
                                 "rank_low", "rank_high", "n_votes", "interval_note"]
    doc = json.loads((arena_bundle / "report.json").read_text())
    glob = csv[csv["scope"] == "global"].set_index("model")
    for m in doc["rank"]["models"]:
        row = glob.loc[m["model"]]
        assert np.allclose([row.rating, row.ci_low, row.ci_high], [m["rating"], m["ci_low"], m["ci_high"]])
        assert (row["rank"], row.rank_low, row.rank_high, row.n_votes) == \
            (m["rank"], m["rank_low"], m["rank_high"], m["n_votes"])
    assert set(csv["scope"]) == {"global", "game", "dimension", "game_dimension"}
    cell = csv[(csv.scope == "game_dimension") & (csv.game_id == "chat") & (csv.dimension == "style")]
    assert len(cell) == 12


def test_hostile_names_are_escaped(tmp_path):
    votes = pd.read_csv(ARENA, nrows=3000)
    votes["model_a"] = votes["model_a"].replace({"lumen-9b": "a|b", "fjord-7b": "=cmd"})
    votes["model_b"] = votes["model_b"].replace({"lumen-9b": "a|b", "fjord-7b": "=cmd"})
    src = tmp_path / "hostile.csv"
    votes.to_csv(src, index=False)
    code, out = report(tmp_path, src, *FAST, "--no-png")
    assert code == 0
    text = (out / "BT_ANALYSIS_REPORT.md").read_text()
    table_rows_ok(text)
    assert "a\\|b" in text
    csv_text = (out / "BT_ANALYSIS_REPORT.csv").read_text()
    assert ",'=cmd," in csv_text and ",=cmd," not in csv_text


def test_evalruns_bundle(tmp_path):
    code, out = report(tmp_path, EVALRUNS, *FAST, "--no-png")
    assert code == 0
    assert {p.name for p in out.iterdir()} == {"leaderboard.json", "LEADERBOARD.md", "LEADERBOARD.csv", "report.json"}
    board = json.loads((out / "leaderboard.json").read_text())
    assert set(board) == {"rows", "pairwise", "params"}
    table = pd.read_csv(out / "LEADERBOARD.csv")
    assert list(table["model_id"]) == [r["model_id"] for r in board["rows"]]
    assert table["mean_score"].tolist() == pytest.approx([r["mean_score"] for r in board["rows"]])
    categories = [c for c in table.columns if c.startswith("category:")]
    assert categories == [f"category:{c}" for c in board["params"]["categories"]]
    assert table[categories[0]].tolist() == pytest.approx(
        [r["categories"][categories[0].split(":", 1)[1]] for r in board["rows"]])
    text = (out / "LEADERBOARD.md").read_text()
    table_rows_ok(text)
    assert "| Rank | Model | Mean | 95% CI | Win rate | Tasks |" in text
    doc = json.loads((out / "report.json").read_text())
    assert doc["params"]["bootstrap"] == 100 and doc["png"] is False
    assert {"leaderboard_bars", "pairwise_matrix"} <= set(doc["figures"])


def test_invalid_input_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("model_a,model_b,winner\nx,y,sideways\n")
    assert report(tmp_path, bad, "--no-png")[0] == 2
    assert report(tmp_path, tmp_path / "missing.csv", "--no-png")[0] == 2


def test_head_to_head_definition():
    """Stratified A vs B = mean over non-empty (side × period) strata; raw = pooled."""
    from core.io.votes import votes_from_frame

    rows = ([("A", "B", "model_a", "2026-01-01")] * 3 + [("B", "A", "model_a", "2026-01-01")] * 1
            + [("A", "B", "model_b", "2026-02-01")] * 1 + [("B", "A", "model_b", "2026-02-01")] * 3)
    frame = pd.DataFrame(rows, columns=["model_a", "model_b", "winner", "timestamp"])
    votes = votes_from_frame(frame, "t")[0]
    strat, raw, models = votes_data.head_to_head(votes)
    a, b = models.index("A"), models.index("B")
    # A: left/early 3/3, right/early 0/1, left/late 0/1, right/late 3/3 -> (1 + 0 + 0 + 1) / 4
    assert strat[a, b] == pytest.approx(0.5) and raw[a, b] == pytest.approx(6 / 8)
    assert np.isnan(strat[a, a])


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_png_figures(tmp_path):
    export = pytest.importorskip("core.charts.export")
    pytest.importorskip("core.charts.votes")
    if not export.png_available():
        pytest.skip("PNG export unavailable")
    votes = pd.read_csv(ARENA, nrows=4000)
    src = tmp_path / "small.csv"
    votes.to_csv(src, index=False)
    code, out = report(tmp_path, src, *FAST)
    assert code == 0
    doc = json.loads((out / "report.json").read_text())
    assert doc["png"] is True
    pngs = {p.stem: p for p in (out / "figures").glob("*.png")}
    assert set(doc["figures"]) == set(pngs) and VOTES_FIGURES <= set(pngs)
    for path in pngs.values():
        width, height = _png_size(path)
        assert width > 100 and height > 100
    assert "![forest](figures/forest.png)" in (out / "BT_ANALYSIS_REPORT.md").read_text()
