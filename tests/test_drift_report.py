"""`evalboard report` (votes): the "Drift over time" section, report.json["drift"] (the dict of
`evalboard drift --format json` for the same votes) and figures/drift.png; without timestamps it says why."""

from __future__ import annotations

import json

import pytest

from core.charts.export import png_available
from core.cli import main
from core.samples import SAMPLES_DIR
from tests.test_drift import draw, frame_of
from tests.test_report import table_rows_ok
from tests.test_report_style import bundle

ARENA = SAMPLES_DIR / "arena_demo.csv"


def section(markdown: str) -> str:
    return markdown.split("## Drift over time\n", 1)[1].split("\n## ", 1)[0]


def planted_csv(tmp_path, with_time: bool = True):
    path = tmp_path / "planted.csv"
    frame = frame_of(*draw(7, 2500), with_time=with_time)
    if with_time:
        frame["timestamp"] = frame["timestamp"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    frame.to_csv(path, index=False)
    return path


def test_the_report_agrees_with_the_command(tmp_path, capsys):
    source = planted_csv(tmp_path)
    _, text, doc = bundle(tmp_path, source, "--no-png")
    table_rows_ok(text)
    capsys.readouterr()
    assert main(["drift", str(source), "--format", "json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    block = doc["drift"]
    assert block.pop("available") is True
    assert block == expected
    words = section(text).replace("\\", "")
    assert "1 of 6 models tested changed over 6 week periods" in words and "model-a" in words
    assert "### Ratings per week of the models that changed" in words
    assert "drift" in doc["figures"] and "drift" in doc["figure_definitions"]


def test_without_timestamps_the_section_says_why(tmp_path):
    _, text, doc = bundle(tmp_path, planted_csv(tmp_path, with_time=False), "--no-png")
    assert doc["drift"]["available"] is False and "timestamp" in doc["drift"]["reason"]
    assert "Not available:" in section(text)
    assert "drift" not in doc["figures"]


def test_the_arena_sample_has_a_drift_section(tmp_path):
    _, text, doc = bundle(tmp_path, ARENA, "--no-png")
    assert doc["drift"]["available"] is True and len(doc["drift"]["periods"]) >= 2
    assert "| Model | Changed |" in section(text)


@pytest.mark.skipif(not png_available(), reason="no browser for PNG export")
def test_the_figure_is_written(tmp_path):
    out, _, doc = bundle(tmp_path, planted_csv(tmp_path))
    assert doc["png"] is True and (out / "figures" / "drift.png").stat().st_size > 10_000
