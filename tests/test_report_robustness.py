"""`evalboard report` (votes): the "Robustness of the top" section and report.json["robustness"], which agree
with `evalboard robustness --format json` on the same votes; without an answer the section says why."""

from __future__ import annotations

import json

import pandas as pd

from core.cli import main
from core.report.votes_robustness import LISTED_CASTERS, LISTED_VOTES, robustness_markdown, robustness_section
from core.samples import SAMPLES_DIR
from tests.reference_values import ROBUSTNESS_SIXTY_FORTY as SIXTY_FORTY
from tests.test_decisions_view import prepared
from tests.test_report import table_rows_ok
from tests.test_report_style import bundle

ARENA = SAMPLES_DIR / "arena_demo.csv"


def section(markdown: str) -> str:
    return markdown.split("## Robustness of the top\n", 1)[1].split("\n## ", 1)[0]


def cli_json(capsys, source, *extra) -> dict:
    capsys.readouterr()
    assert main(["robustness", str(source), "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_arena_report_agrees_with_the_command(tmp_path, capsys):
    _, text, doc = bundle(tmp_path, ARENA, "--no-png")
    table_rows_ok(text)
    expected = cli_json(capsys, ARENA)
    block = doc["robustness"]
    assert block.pop("available") is True
    assert block == expected  # every vote included, as the command lists them
    words = section(text)
    assert f"Dropping **{expected['flip_votes']:,}** of {expected['n_votes']:,} votes" in words
    assert f"puts {expected['flipped_to']} ahead of {expected['top_model']}" in words.replace("\\", "")
    assert "confirmed by refitting" in words
    for name, counts in expected["by"].items():
        assert f"### Votes dropped by {name}" in words
        first, n = next(iter(counts.items()))
        assert f"| {first} | {n} |" in words.replace("\\", "")
        if len(counts) > LISTED_CASTERS:  # the most frequent listed, then a line for the rest
            rest = list(counts.values())[LISTED_CASTERS:]
            assert f"… and {len(rest):,} more ({sum(rest):,} votes)." in words
    listed = [line for line in words.split("### The votes", 1)[1].splitlines() if line.startswith("| ")]
    assert len(listed) - 1 == min(LISTED_VOTES, expected["flip_votes"])  # the header, then the votes
    if expected["flip_votes"] > LISTED_VOTES:
        assert f"… and {expected['flip_votes'] - LISTED_VOTES:,} more (report.json lists them all)." in words
    assert "evalboard robustness VOTES" in words
    assert text.index("## Style control") < text.index("## Robustness of the top") < text.index("## Bias diagnostics")
    assert "robustness of the top" in doc["timings"]


def test_the_known_answer_with_its_policy(tmp_path, capsys):
    rows = ([("A", "B", "model_a", f"ann{i % 4}") for i in range(SIXTY_FORTY["a_wins"])]
            + [("A", "B", "model_b", f"ann{i % 4}") for i in range(SIXTY_FORTY["b_wins"])])
    source = tmp_path / "sixty_forty.csv"
    pd.DataFrame(rows, columns=["model_a", "model_b", "winner", "annotator_id"]).to_csv(source, index=False)
    _, text, doc = bundle(tmp_path, source, "--no-png", "--annotators", "keep")
    block = doc["robustness"]
    assert (block["top_model"], block["flip_votes"], block["flipped_to"], block["verified"]) == (
        "A", SIXTY_FORTY["flip_votes"], "B", True)
    assert {k: v for k, v in block.items() if k != "available"} == cli_json(capsys, source, "--policy", "keep")
    words = section(text)
    assert "Every smaller set of votes was tried: this is the exact minimum." in words
    assert "… and 1 more (report.json lists them all)." in words  # 21 votes, 20 listed


def test_without_an_answer_the_section_says_why():
    golden = prepared([("A", "B", "model_a", True, "model_a")] * 3,
                      ("model_a", "model_b", "winner", "is_golden", "golden_answer"))
    found = robustness_section(golden)
    assert found.as_dict() == {"available": False, "reason": found.reason} and "no votes to rank" in found.reason
    text = robustness_markdown(found)
    assert text.startswith("## Robustness of the top") and "Not available: no votes to rank" in text
    lone = robustness_section(prepared([("A", "B", "model_a")]))
    assert lone.as_dict()["flip_votes"] is None and "No set of votes found" in robustness_markdown(lone)
