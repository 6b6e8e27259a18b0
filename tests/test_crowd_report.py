"""`evalboard report` (votes): the "Annotator reliability (Crowd-BT)" section and report.json["crowd"]; votes
without annotators get a sentence saying why."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.io.votes import votes_from_frame
from core.ranking import RankSettings, rank_votes
from core.samples.crowd import crowd_votes
from tests.test_report import table_rows_ok

TITLE = "## Annotator reliability (Crowd-BT)\n"


def bundle(tmp_path, frame):
    source = tmp_path / "votes.csv"
    frame.to_csv(source, index=False)
    out = tmp_path / "bundle"
    assert main(["report", str(source), "--out", str(out), "--bootstrap", "50", "--no-png", "--policy", "keep"]) == 0
    return (out / "BT_ANALYSIS_REPORT.md").read_text(), json.loads((out / "report.json").read_text())


def section(markdown: str) -> str:
    return markdown.split(TITLE, 1)[1].split("\n## ", 1)[0]


def test_section_and_json_match_the_scheme(tmp_path):
    sample = crowd_votes(6, 10, 80, reversed_share=0.3, random_share=0.1, spread=3.0, seed=6)
    text, doc = bundle(tmp_path, sample.votes)
    table_rows_ok(text)
    crowd = doc["crowd"]
    assert crowd["available"] is True and crowd["n_votes"] == 800
    expected = rank_votes(votes_from_frame(sample.votes, "t")[0], RankSettings("crowd", ci="sandwich"))
    assert [a["annotator_id"] for a in crowd["annotators"]] == [a.annotator_id for a in expected.annotators]
    assert [a["reliability"] for a in crowd["annotators"]] == pytest.approx(
        [a.reliability for a in expected.annotators], rel=1e-9)
    reversed_ids = {a for a, g in zip(sample.annotators, sample.group) if g == "reversed"}
    assert set(crowd["unreliable"]) == reversed_ids  # every reversed annotator, and no one else
    plain = {r.model: r.rank for r in expected.plain.rows}
    assert {m["model"]: (m["plain_rank"], m["crowd_rank"]) for m in crowd["rank_changes"]} == \
        {r.model: (plain[r.model], r.rank) for r in expected.rows if plain[r.model] != r.rank}
    words = section(text)
    assert "| Annotator | Reliability η | 95% CI | Votes |" in words
    assert all(a in words for a in reversed_ids) and "evalboard rank VOTES --scheme crowd" in words
    assert text.index("## Style control") < text.index(TITLE) < text.index("## Bias diagnostics")


def test_votes_without_annotators_say_why(tmp_path):
    sample = crowd_votes(4, 3, 30, seed=1)
    text, doc = bundle(tmp_path, sample.votes.drop(columns="annotator_id"))
    assert doc["crowd"]["available"] is False and "annotator_id column" in doc["crowd"]["reason"]
    assert section(text).strip().startswith("No Crowd-BT fit: scheme crowd needs to know who cast each vote")
