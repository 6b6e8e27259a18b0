"""`evalboard report` (votes): the "Style control" section, its ``style_control`` block in report.json and
``figures/style_control.png``; without any style feature the section says why and no figure is made."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.io import load
from core.ranking import RankSettings
from core.ranking.inputs import rank_input
from core.report.votes_style import FIGURE
from core.samples import SAMPLES_DIR
from tests.conftest import shared_file
from tests.test_report import _png_size, table_rows_ok
from tests.test_style_scheme import votes_with_texts

ARENA = SAMPLES_DIR / "arena_demo.csv"
STYLE_KEYS = {"available", "n_votes", "features", "features_dropped", "features_unavailable", "level", "interval",
              "coefficients", "moves", "n_moved", "movers", "notes"}


def bundle(tmp_path, source, *extra):
    out = tmp_path / "bundle"
    assert main(["report", str(source), "--out", str(out), "--bootstrap", "50", *extra]) == 0
    return out, (out / "BT_ANALYSIS_REPORT.md").read_text(), json.loads((out / "report.json").read_text())


def section(markdown: str) -> str:
    return markdown.split("## Style control\n", 1)[1].split("\n## ", 1)[0]


def test_demo_section_and_json(tmp_path):
    out, text, doc = bundle(tmp_path, ARENA, "--no-png")
    table_rows_ok(text)
    style = doc["style_control"]
    assert set(style) == STYLE_KEYS and style["available"] is True
    assert style["features"] == ["length"] and style["features_unavailable"] == ["headers", "lists", "bold"]
    expected = rank_input("votes", load(ARENA).frame, RankSettings("style", ci="sandwich"))
    [length] = style["coefficients"]
    assert length["estimate"] == pytest.approx(expected.covariates[0].estimate, rel=1e-12)
    assert length["odds"] == pytest.approx(math.exp(expected.covariates[0].estimate), rel=1e-12)
    moves = {m["model"]: m for m in style["moves"]}
    plain = {r.model: r.rank for r in expected.plain.rows}
    assert {m: (v["plain_rank"], v["controlled_rank"]) for m, v in moves.items()} == \
        {r.model: (plain[r.model], r.rank) for r in expected.rows}
    assert style["n_moved"] == sum(v["change"] != 0 for v in moves.values())
    words = section(text)
    assert length["sentence"].replace("_", "\\_") in words
    for model in style["movers"]:
        assert f"| {model} | {moves[model]['plain_rank']} | {moves[model]['controlled_rank']} |" in words
    assert "evalboard rank VOTES --scheme style" in words and "Not available: headers, lists, bold" in words
    assert FIGURE in doc["figures"] and FIGURE in doc["figure_definitions"]
    # the other sections keep their order around the new one
    assert text.index("## Per game × dimension") < text.index("## Style control") < text.index("## Bias diagnostics")


def test_no_feature_says_why_and_draws_nothing(tmp_path):
    votes = pd.read_csv(ARENA, nrows=2000).drop(columns=["len_a", "len_b"])
    src = tmp_path / "no_lengths.csv"
    votes.to_csv(src, index=False)
    out, text, doc = bundle(tmp_path, src, "--no-png")
    assert doc["style_control"]["available"] is False
    assert "answer texts or per-side style counts" in doc["style_control"]["reason"]
    assert section(text).startswith("\nNo style-controlled ranking: scheme style needs answer texts")
    assert FIGURE not in doc["figures"]


def test_answer_texts_give_every_feature_and_the_png(tmp_path):
    export = pytest.importorskip("core.charts.export")
    if not export.png_available():
        pytest.skip("PNG export unavailable")
    src = tmp_path / "texts.csv"
    votes_with_texts(300, seed=7).to_csv(src, index=False)
    out, text, doc = bundle(tmp_path, src)
    style = doc["style_control"]
    assert style["features"] == ["length", "headers", "lists", "bold"] and style["notes"] == []
    odds = np.array([c["odds"] for c in style["coefficients"]])
    np.testing.assert_allclose(odds, np.exp([c["estimate"] for c in style["coefficients"]]), rtol=1e-12)
    png = out / "figures" / f"{FIGURE}.png"
    width, height = _png_size(png)
    assert width == 1000 and height >= 360
    assert f"![{FIGURE}](figures/{FIGURE}.png)" in text


TULU_MAP = ["--map", "winner=preference", "--outcome", "a-is-better=model_a", "--outcome",
            "a-is-slightly-better=model_a", "--outcome", "b-is-better=model_b", "--outcome",
            "b-is-slightly-better=model_b", "--outcome", "tie=tie"]


def test_tulu1_real_data(tmp_path):
    """Tulu 1 human evaluation (texts in completion_a/b): docs/methods.md §11 "Real data" reports, on the 1,149
    votes with both answers, length β = +0.566 (odds × 1.76 per sd) and tulu_human_only_65B overtaking tulu_7B
    (4 → 3). The report reads the file as `evalboard ingest` does: the one vote without completion_a counts its
    missing answer as empty (1,150 votes), which moves β in the third decimal."""
    out, text, doc = bundle(tmp_path, shared_file("tulu1_human_eval/annotations.csv"), "--no-png", *TULU_MAP)
    style = doc["style_control"]
    assert style["n_votes"] == 1150 and style["features"] == ["length", "headers", "lists", "bold"]
    length = style["coefficients"][0]
    assert length["estimate"] == pytest.approx(0.566, abs=0.005) and length["direction_known"]
    assert length["odds"] == pytest.approx(1.76, abs=0.02)
    moves = {m["model"]: (m["plain_rank"], m["controlled_rank"]) for m in style["moves"]}
    assert moves == {"chatgpt": (1, 1), "tulu_65B": (2, 2), "tulu_7B": (3, 4), "tulu_human_only_65B": (4, 3)}
    assert style["movers"] == ["tulu_human_only_65B", "tulu_7B"]
    assert "| tulu\\_human\\_only\\_65B | 4 | 3 | +1 |" in section(text)
