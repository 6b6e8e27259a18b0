"""`evalboard rank --scheme crowd`: the rank object plus "annotators" (issue contract), markdown and CSV
sections, the default interval, and refusals with exit status 2."""

from __future__ import annotations

import csv
import io
import json

import pytest

from core.cli import main
from core.samples.crowd import crowd_votes


@pytest.fixture(scope="module")
def votes_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("crowd") / "votes.csv"
    sample = crowd_votes(5, 6, 60, reversed_share=1 / 3, random_share=0.0, seed=3)
    sample.votes.assign(annotator_id=sample.votes["annotator_id"].str.replace("a000", "=cmd|x")).to_csv(path,
                                                                                                          index=False)
    return path, sample


def run(capsys, *args) -> tuple[int, str, str]:
    code = main(["rank", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_the_rank_object_plus_annotators(capsys, votes_file):
    path, sample = votes_file
    code, out, err = run(capsys, path, "--scheme", "crowd", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["scheme"] == "crowd" and data["params"]["ci"] == "sandwich"  # the scheme's default interval
    assert data["params"]["rating_scale"] == "elo" and data["params"]["converged"] is True
    assert {"scheme", "n_votes", "n_models", "identifiable", "params", "models", "annotators"} <= set(data)
    assert data["plain"]["scheme"] == "bt"
    annotators = data["annotators"]
    assert len(annotators) == 6 and all(set(a) == {"annotator_id", "reliability", "ci_low", "ci_high", "n_votes"}
                                        for a in annotators)
    assert all(0 <= a["ci_low"] <= a["reliability"] <= a["ci_high"] <= 1 and a["n_votes"] == 60 for a in annotators)
    reversed_ids = {name.replace("a000", "=cmd|x") for name, g in zip(sample.annotators, sample.group)
                    if g == "reversed"}
    assert {a["annotator_id"] for a in annotators[-2:]} == reversed_ids  # the two least reliable


def test_markdown_and_csv_carry_the_annotators(capsys, votes_file):
    path, _ = votes_file
    code, out, _ = run(capsys, path, "--scheme", "crowd", "--format", "markdown")
    assert code == 0
    assert "| Annotator | Reliability η | 95% CI | Votes |" in out
    assert "=cmd\\|x" in out  # markdown-escaped
    assert "Without annotator reliability (plain Bradley–Terry)" in out
    code, out, _ = run(capsys, path, "--scheme", "crowd", "--format", "csv", "--ci", "none")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["row"] for r in rows] == ["model"] * 5 + ["annotator"] * 6
    annotators = [r for r in rows if r["row"] == "annotator"]
    assert all(r["reliability"] and not r["reliability_ci_low"] and r["n_votes"] == "60" for r in annotators)
    assert any(r["annotator_id"] == "'=cmd|x" for r in annotators)  # a formula neutralised


def test_refusals_exit_2_with_the_reason(capsys, votes_file, tmp_path):
    path, sample = votes_file
    code, _, err = run(capsys, path, "--scheme", "crowd", "--ci", "bootstrap")
    assert code == 2 and "bootstrap refits are not offered" in err
    anonymous = tmp_path / "anonymous.csv"
    sample.votes.drop(columns="annotator_id").to_csv(anonymous, index=False)
    code, _, err = run(capsys, anonymous, "--scheme", "crowd")
    assert code == 2 and "annotator_id column" in err
