"""One door out: every CSV leaves through core.formats.csv_frame, which neutralises spreadsheet formulas
(OWASP: a text cell starting with = + - @ tab or CR gets a leading apostrophe), keeps numbers numeric
and lets EvalBoard's own readers get the exact text back."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from contextlib import closing
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.campaign import create_campaign, issue_tokens, publish, read_answers, record_vote, serve_next
from core.cli import main
from core.formats import NonFiniteOutputError, csv_frame, csv_restore, csv_restored, csv_table, csv_text, terminal_text
from core.io.read import open_source, read_table
from core.leaderboard.aggregate import LeaderboardSettings, aggregate
from core.leaderboard.render import to_csv as leaderboard_csv
from core.store import Store
from core.store.connection import connect

REPO = Path(__file__).resolve().parents[1]
HOSTILE = ['=HYPERLINK("http://evil.example","click")', "+model", "-1+2", "@cat", "\tx", "\rx", "'=already"]


def cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


# -- the one writer ------------------------------------------------------------------------------------------
def test_no_module_writes_csv_outside_the_one_writer():
    """A new export cannot forget the formula rule: only core/formats.py may call a CSV writer."""
    pattern = re.compile(r"\.to_csv\(|csv\.writer|csv\.DictWriter|\.writerows?\(")
    offenders = []
    for path in sorted([*REPO.glob("core/**/*.py"), *REPO.glob("pages/**/*.py"), REPO / "app.py"]):
        if path == REPO / "core" / "formats.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not offenders, "CSV written outside core.formats.csv_frame:\n" + "\n".join(offenders)


@pytest.mark.parametrize("text", HOSTILE)
def test_every_formula_start_is_neutralised(text):
    assert csv_text(text) == "'" + text
    written = csv_table(["model"], [[text]])
    assert cells(written)[1] == ["'" + text]


@pytest.mark.parametrize("text", ["model", "x=1", "a-b", " =x", "", "'quoted", "模型"])
def test_other_text_is_written_as_it_is(text):
    assert csv_text(text) == text


def test_numbers_stay_numbers_and_text_that_looks_like_one_stays_text():
    frame = pd.DataFrame({"name": ["-0.5", "+1"], "score": [-0.5, 1.0], "n": [-3, 4]})
    rows = cells(csv_frame(frame))
    assert rows == [["name", "score", "n"], ["'-0.5", "-0.5", "-3"], ["'+1", "1.0", "4"]]
    assert cells(csv_table(["rating"], [[-12.5], [None]])) == [["rating"], ["-12.5"], [""]]
    # An absent number is None (an empty cell, next to its reason); a NaN in a result row is a bug.
    with pytest.raises(NonFiniteOutputError, match=r"row 2, column 'rating'"):
        csv_table(["rating"], [[-12.5], [float("nan")]])


def test_column_names_are_neutralised_too():
    assert cells(csv_frame(pd.DataFrame({"=cmd": [1]})))[0] == ["'=cmd"]


def test_an_infinite_number_is_refused_with_its_column():
    with pytest.raises(ValueError, match=r"'rating'.*infinite"):
        csv_frame(pd.DataFrame({"model": ["a"], "rating": [math.inf]}))
    with pytest.raises(NonFiniteOutputError, match=r"-inf at CSV row 1, column 'ci_low'"):
        csv_table(["model", "ci_low"], [["a", -math.inf]])


def test_the_callers_frame_is_left_as_it_was():
    frame = pd.DataFrame({"model": ["=x", "y"]})
    csv_frame(frame)
    assert frame["model"].tolist() == ["=x", "y"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_neutralising_is_undone_exactly(text):
    assert csv_restore(csv_text(text)) == text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("=+-@'\t\rab ,\"\n"), min_size=1, max_size=8), min_size=1,
                max_size=6))
def test_a_csv_written_then_read_back_by_evalboard_is_exact(texts):
    frame = pd.DataFrame({"text": texts, "n": range(len(texts))})
    written = csv_frame(frame)
    for row in cells(written)[1:]:
        assert not row[0].startswith(("=", "+", "-", "@", "\t", "\r"))
    raw = open_source(written.encode(), name="x.csv")
    back = csv_restored(read_table(raw), raw.format)
    # an empty cell is the CSV spelling of a missing value
    assert back["text"].fillna("").tolist() == texts


def test_terminal_text_shows_control_characters_as_escapes():
    assert terminal_text("ann\x1b[2J\u2028bob\u202e") == "ann\\x1b[2J\\u2028bob\\u202e"
    assert terminal_text("plain label, é 模型") == "plain label, é 模型"


# -- every export goes through it ----------------------------------------------------------------------------
def test_leaderboard_csv_neutralises_model_ids():
    runs = pd.DataFrame([{"model_id": m, "task_id": f"t{t}", "metric_name": "acc", "score": (t + i) % 4 / 4}
                         for i, m in enumerate(["=cmd", "+model", "plain"]) for t in range(4)])
    rows = cells(leaderboard_csv(aggregate(runs, LeaderboardSettings(replicates=20))))
    assert {r[1] for r in rows[1:]} == {"'=cmd", "'+model", "plain"}


def test_evalset_csv_neutralises_ids_and_prompts_and_jsonl_keeps_them():
    from core.evalset.results import to_csv, to_jsonl

    table = pd.DataFrame({"query_id": ["@q1", "q2"], "prompt": ["=1+1", "- a list"], "category": ["+c", "c"]})
    rows = cells(to_csv(table))
    assert rows[1:] == [["'@q1", "'=1+1", "'+c"], ["q2", "'- a list", "c"]]
    records = [json.loads(line) for line in to_jsonl(table).splitlines()]
    assert [r["prompt"] for r in records] == ["=1+1", "- a list"]


def test_evalset_csv_reads_back_exactly_as_a_query_file():
    from core.collect.queries import load_queries
    from core.evalset.results import to_csv

    table = pd.DataFrame({"query_id": ["@q1", "q2"], "prompt": ["=1+1", "- a list"]})
    queries = load_queries(to_csv(table).encode(), name="evalset.csv")
    assert [(q.query_id, q.prompt) for q in queries] == [("@q1", "=1+1"), ("q2", "- a list")]


def test_collect_export_is_neutralised_in_csv_exact_in_jsonl_and_reads_back_into_a_campaign():
    from core.collect.export import to_bytes

    frame = pd.DataFrame({"query_id": ["q1", "q1"], "prompt": ['=HYPERLINK("http://x","y")'] * 2,
                          "model": ["+model", "@cat"], "answer": ["- item one", "fine"], "category": ["-", "-"]})
    rows = cells(to_bytes(frame, "csv").decode())
    assert rows[1] == ["q1", "'" + frame.prompt[0], "'+model", "'- item one", "'-"]
    assert rows[2][2] == "'@cat"
    records = [json.loads(line) for line in to_bytes(frame, "jsonl").decode().splitlines()]
    assert [r["model"] for r in records] == ["+model", "@cat"] and records[0]["prompt"] == frame.prompt[0]
    back = read_answers(to_bytes(frame, "csv"), name="answers.csv")
    assert back[["prompt", "model", "answer"]].values.tolist() == frame[["prompt", "model", "answer"]].values.tolist()


def test_campaign_tokens_csv_cannot_run_as_a_formula():
    from pages._campaign_admin import tokens_csv

    rows = cells(tokens_csv([("=boss", "-Abc_123"), ("ann", "xyz")]).decode())
    assert rows == [["annotator", "token"], ["'=boss", "'-Abc_123"], ["ann", "xyz"]]


def test_a_published_campaign_keeps_formula_like_names_exact(db_path):
    answers = pd.DataFrame({"query_id": ["q1", "q1"], "prompt": ["-p"] * 2, "model": ["+model", "=other"],
                            "answer": ["- one", "two"], "category": ["@c", "@c"], "game_id": ["all", "all"]})
    with closing(connect(db_path)) as conn:
        campaign = create_campaign(conn, "c", answers, None, golden_rate=0, target=1, seed=0)
        token = issue_tokens(conn, campaign, 1)[0].token
        item = serve_next(conn, token)
        record_vote(conn, token, item.assignment_id, dict.fromkeys(item.dimensions, "model_a"))
    dataset = publish(db_path, "c")
    with Store(db_path) as store:
        votes = store.load(dataset.id)
    assert {votes["model_a"].iloc[0], votes["model_b"].iloc[0]} == {"+model", "=other"}
    assert votes["category"].iloc[0] == "@c"


def test_campaign_cli_escapes_labels_for_the_terminal(db_path, tmp_path, capsys):
    answers = tmp_path / "answers.csv"
    answers.write_text("query_id,prompt,model,answer\nq1,p,a,x\nq1,p,b,y\n")
    code = main(["campaign", "create", "red\x1b[31m", "--answers", str(answers), "--annotators", "ann\x1b[2J,bob"])
    out = capsys.readouterr().out
    assert code == 0 and "\x1b" not in out
    assert "red\\x1b[31m" in out and "ann\\x1b[2J\t" in out
    assert main(["campaign", "status", "red\x1b[31m"]) == 0
    assert "\x1b" not in capsys.readouterr().out
