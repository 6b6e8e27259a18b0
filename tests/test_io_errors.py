"""A corpus of bad inputs: each broken rule gives one InputError that names the file, the columns, the
rule and the rows (numbered from 1 after the header), and a rejected ingest leaves the store as it was."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.cli import main
from core.io import InputError, load
from core.io.problems import MAX_ROWS_SHOWN
from core.store import Store
from tests.conftest import snapshot

VOTES = "model_a,model_b,winner\n"
RUNS = "model_id,task_id,metric_name,score\n"
GOOD_VOTES = VOTES + "alpha,beta,a\nbeta,gamma,b\ngamma,alpha,tie\n"


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.fixture
def seeded(db_path, tmp_path):
    """A store that already holds one good dataset, so 'unchanged' is not trivially 'empty'."""
    with Store(db_path) as store:
        result = store.ingest(load(write(tmp_path / "good.csv", GOOD_VOTES)))
        assert result.created and result.dataset.rows == 3
        yield store


def reject(store: Store, db_path: Path, path: Path, fragments: list[str], **kwargs) -> InputError:
    """Load + ingest must raise one InputError naming the file and every fragment; the store must not change."""
    before = snapshot(db_path)
    assert before["datasets"] and before["votes"]
    with pytest.raises(InputError, match=re.escape(str(path))) as info:
        store.ingest(load(path, **kwargs))
    assert snapshot(db_path) == before
    assert [d.name for d in store.datasets()] == ["good"]
    message = str(info.value)
    assert message.startswith(f"{path}: rejected, nothing was stored")
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    return info.value


# Each case: file name, content, load() keywords, fragments the message must hold (column, rule, rows).
CASES = {
    "missing_winner": (
        "votes.csv", "model_a,model_b,judge\nx,y,u1\n", {},
        ["missing required column for votes", "(the file has: model_a, model_b, judge)", "[column 'winner']"]),
    "missing_several_columns": (
        "votes.csv", "sys1,model_b,pref\nx,y,a\n", {"kind": "votes"},
        ["missing required columns for votes", "(the file has: sys1, model_b, pref)",
         "[columns 'model_a', 'winner']", "hint: name the file's columns"]),
    "missing_score": (
        "runs.csv", "model_id,task_id,metric_name\nm,t,acc\n", {"kind": "eval_runs"},
        ["missing required column for an EvalRun", "(the file has: model_id, task_id, metric_name)",
         "[column 'score']"]),
    "unknown_winner": (
        "votes.csv", VOTES + "x,y,a\nx,y,banana\nx,y,b\nx,y,Apple\nx,y,model_c\n", {},
        ["unknown winner label", "[column 'winner']", "3 rows: 2 ('banana'), 4 ('Apple'), 5 ('model_c')",
         "give an outcome mapping"]),
    "empty_winner": (
        "votes.csv", VOTES + "x,y,a\nx,y,\n", {},
        ["empty winner", "[column 'winner']", "1 row: 2 (empty)"]),
    "self_comparison": (
        "votes.csv", VOTES + "x,y,a\nx,x,a\ny,z,b\nz,z,tie\n", {},
        ["model_a == model_b", "[columns 'model_a', 'model_b']", "2 rows: 2 ('x'), 4 ('z')"]),
    "empty_model_name": (
        "votes.csv", VOTES + "x,y,a\n,y,a\nx,,b\n", {},
        ["empty model_a [column 'model_a']", "1 row: 2 (empty)", "empty model_b [column 'model_b']",
         "1 row: 3 (empty)"]),
    "blank_model_name": (
        "votes.csv", VOTES + "x,y,a\n   ,y,a\n", {},
        ["empty model_a [column 'model_a']", "1 row: 2 ('   ')"]),
    "padded_model_name": (
        "votes.csv", VOTES + "x,y,a\n x,y,a\nx,y ,b\n", {},
        ["model_a starts or ends with spaces", "[column 'model_a']", "1 row: 2 (' x')",
         "model_b starts or ends with spaces", "[column 'model_b']", "1 row: 3 ('y ')"]),
    "duplicate_vote_id": (
        "votes.csv", "vote_id," + VOTES + "v1,x,y,a\nv2,x,y,a\nv1,x,y,b\nv3,x,y,b\nv2,y,x,a\n", {},
        ["duplicate vote_id", "[column 'vote_id']", "4 rows: 1 ('v1'), 2 ('v2'), 3 ('v1'), 5 ('v2')"]),
    "bad_timestamp": (
        "votes.csv", "timestamp," + VOTES + "2024-01-01T00:00:00Z,x,y,a\nyesterday,x,y,a\n1700000000,x,y,b\n"
                                            "2024-13-45,x,y,b\n", {},
        ["timestamp is not an ISO-8601 date-time or epoch seconds", "[column 'timestamp']",
         "2 rows: 2 ('yesterday'), 4 ('2024-13-45')"]),
    "negative_response_time": (
        "votes.csv", "response_time_s," + VOTES + "1.5,x,y,a\n-2,x,y,a\n0,x,y,b\n", {},
        ["response_time_s below 0", "[column 'response_time_s']", "1 row: 2 ('-2')"]),
    "negative_weight": (
        "votes.csv", "weight," + VOTES + "1,x,y,a\n-0.5,x,y,a\n", {},
        ["weight below 0", "[column 'weight']", "1 row: 2 ('-0.5')"]),
    "empty_weight": (
        "votes.csv", "weight," + VOTES + "1,x,y,a\n,x,y,a\n2,x,y,b\n", {},
        ["empty weight", "[column 'weight']", "1 row: 2 (empty)"]),
    "non_numeric_len": (
        "votes.csv", "len_a,len_b," + VOTES + "10,20,x,y,a\nlong,20,x,y,a\n10,20,x,y,b\n5 chars,1,x,y,b\n", {},
        ["len_a is not a finite number", "[column 'len_a']", "2 rows: 2 ('long'), 4 ('5 chars')"]),
    "score_above_one": (
        "runs.csv", RUNS + "m,t1,acc,0.5\nm,t2,acc,1.5\nm,t3,acc,100\n", {},
        ["score above 1", "[column 'score']", "2 rows: 2 ('1.5'), 3 ('100')", "scores must lie in [0, 1]"]),
    "score_below_zero": (
        "runs.csv", RUNS + "m,t1,acc,-0.01\nm,t2,acc,0\n", {},
        ["score below 0", "[column 'score']", "1 row: 1 ('-0.01')"]),
    "score_not_a_number": (
        "runs.csv", RUNS + "m,t1,acc,high\nm,t2,acc,0.5\nm,t3,acc,50%\n", {},
        ["score is not a finite number", "[column 'score']", "2 rows: 1 ('high'), 3 ('50%')"]),
    "duplicate_run": (
        "runs.csv", RUNS + "m,t1,acc,0.5\nm,t2,acc,0.5\nm,t1,acc,0.6\nm,t1,f1,0.6\n", {},
        ["the same (model, task, metric) is scored twice", "[columns 'model_id', 'task_id', 'metric_name']",
         "2 rows: 1 ('m'), 3 ('m')"]),
    "counts_negative": (
        "counts.csv", "model_a,model_b,winner,count\nx,y,a,3\nx,y,b,-1\n", {},
        ["count below 0", "[column 'count']", "1 row: 2 ('-1')"]),
    "golden_without_answer_column": (
        "votes.csv", VOTES.rstrip() + ",is_golden\nx,y,a,false\nx,y,a,true\n", {},
        ["golden items need a golden_answer column", "[column 'golden_answer']", "1 row: 2"]),
    "golden_without_answer": (
        "votes.csv", VOTES.rstrip() + ",is_golden,golden_answer\nx,y,a,true,model_a\nx,y,a,true,\n"
                                      "x,y,b,false,\n", {},
        ["golden item without a golden_answer", "[column 'golden_answer']", "1 row: 2"]),
    "is_golden_maybe": (
        "votes.csv", VOTES.rstrip() + ",is_golden,golden_answer\nx,y,a,true,a\nx,y,a,maybe,a\n", {},
        ["is_golden must be true/false, 1/0 or yes/no", "[column 'is_golden']", "1 row: 2 ('maybe')"]),
    "mapping_names_missing_column": (
        "votes.csv", "sys1,sys2,pref\nx,y,a\n", {"columns": {"model_a": "system_1", "model_b": "sys2",
                                                            "winner": "pref"}},
        ["the column mapping reads 'model_a' from 'system_1', but the file has no such column",
         "(it has: sys1, sys2, pref)", "[column 'system_1']"]),
    "mapping_to_unknown_target": (
        "votes.csv", VOTES + "x,y,a\n", {"columns": {"modelA": "model_a"}},
        ["the column mapping names 'modelA', which is not a column EvalBoard reads"]),
    "outcome_mapping_invalid": (
        "votes.csv", VOTES + "x,y,good\n", {"outcomes": {"good": "excellent"}},
        ["the outcome mapping sends 'good' to 'excellent'", "[column 'winner']",
         "map values to one of model_a, model_b, tie, tie (bothbad)"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_rule_is_reported_and_nothing_is_stored(case, seeded, db_path, tmp_path):
    name, content, kwargs, fragments = CASES[case]
    path = write(tmp_path / name, content)
    error = reject(seeded, db_path, path, fragments, **kwargs)
    assert error.source == str(path)
    assert error.problems


# An empty score (empty, NaN text, JSON NaN) is no longer an error: it follows the missing-score rule
# shared with wide tables (core.io.missing), 'skip' unless the user says 'zero'.
EMPTY_SCORES = {
    "score_empty": ("runs.csv", RUNS + "m,t1,acc,0.5\nm,t2,acc,\n"),
    "score_nan": ("runs.csv", RUNS + "m,t1,acc,NaN\nm,t2,acc,0.5\n"),
    "score_nan_json": ("runs.json", '[{"model_id": "m", "task_id": "t1", "score": NaN}, {"model_id": "m", '
                                    '"task_id": "t2", "score": 0.5}]'),
}


@pytest.mark.parametrize("case", sorted(EMPTY_SCORES))
def test_empty_score_follows_the_missing_rule(case, tmp_path):
    name, content = EMPTY_SCORES[case]
    path = write(tmp_path / name, content)
    skipped = load(path)
    assert len(skipped.frame) == 1 and "1 empty or NA cell read as 'not scored' (missing=skip" in skipped.notes[-1]
    zero = load(path, missing="zero")
    assert sorted(zero.frame["score"]) == [0.0, 0.5] and "scored 0 (missing=zero)" in zero.notes[-1]


# Whole-file problems: no rows to list, but the file and what is wrong (and where, if anywhere).
FILE_CASES = {
    "empty_file": ("empty.csv", b"", ["the file is empty"]),
    "whitespace_only": ("blank.csv", b"  \n\t\n   \r\n", ["the file is empty"]),
    "header_only": ("header.csv", VOTES, ["the file has a header but no data rows"]),
    "header_only_no_newline": ("header.csv", VOTES.strip(), ["the file has a header but no data rows"]),
    "latin1": ("latin1.csv", VOTES.encode() + b"x,y,a\n" + "café,y,a\n".encode("latin-1"),
               ["not UTF-8", "(line 3)", "b'\\xe9'"]),
    "latin1_header": ("latin1h.csv", "modèle_a,model_b,winner\nx,y,a\n".encode("latin-1"), ["not UTF-8", "(line 1)"]),
    "invalid_json": ("votes.json", '[{"model_a": "x", "model_b": "y", "winner": "a"},\n {"model_a": }]',
                     ["not valid JSON", "line 2"]),
    "json_not_records": ("votes.json", '{"a": 1, "b": 2}', ["expected a JSON list of records"]),
    "invalid_jsonl_line": ("votes.jsonl", '{"model_a": "x", "model_b": "y", "winner": "a"}\n'
                                          '{"model_a": "x", "model_b": "y", "winner": "b"}\n'
                                          '{"model_a": oops}\n', ["line 3 is not valid JSON"]),
    "jsonl_not_object": ("votes.jsonl", '{"model_a": "x", "model_b": "y", "winner": "a"}\n[1, 2]\n',
                         ["line 2 is not a JSON object"]),
    "columns_fit_nothing": ("mystery.csv", "foo,bar,baz\n1,2,3\n",
                            ["cannot tell what this file holds from its columns", "[columns 'foo', 'bar', 'baz']",
                             "hint:", "model_a, model_b, winner", "--map COLUMN=SOURCE"]),
    "bad_gzip": ("votes.csv.gz", b"this is not gzip", ["not a readable gzip file"]),
    "bad_parquet": ("votes.parquet", b"PAR1 but not really", ["not a readable Parquet file"]),
}


@pytest.mark.parametrize("case", list(FILE_CASES))
def test_file_level_problem(case, seeded, db_path, tmp_path):
    name, content, fragments = FILE_CASES[case]
    path = write(tmp_path / name, content)
    reject(seeded, db_path, path, fragments)


def test_more_than_20_bad_rows_lists_the_first_20_and_the_count(seeded, db_path, tmp_path):
    body = "".join(f"m1,m2,{'a' if i % 3 == 0 else f'bad{i}'}\n" for i in range(38))  # 25 bad rows of 38
    path = write(tmp_path / "many.csv", VOTES + body)
    bad_rows = [i + 1 for i in range(38) if i % 3]
    assert len(bad_rows) == 25
    error = reject(seeded, db_path, path, ["unknown winner label", "[column 'winner']", "25 rows; first 20 shown: "])
    problem = error.problems[0]
    assert problem.n_rows == 25
    assert list(problem.rows) == bad_rows[:MAX_ROWS_SHOWN]
    listed = re.search(r"25 rows; first 20 shown: (.*)", str(error)).group(1)
    assert re.findall(r"(\d+) \('bad\d+'\)", listed) == [str(r) for r in bad_rows[:20]]
    assert f"{bad_rows[20]} (" not in listed


def test_exactly_20_bad_rows_are_all_listed(tmp_path):
    path = write(tmp_path / "twenty.csv", VOTES + "m1,m2,zzz\n" * 20)
    with pytest.raises(InputError, match=r"20 rows: 1 \('zzz'\)") as info:
        load(path)
    assert "first 20 shown" not in str(info.value)


def test_several_broken_rules_give_one_error_listing_all(seeded, db_path, tmp_path):
    text = ("vote_id,model_a,model_b,winner,weight,timestamp\n"
            "v1,x,x,a,1,2024-01-01\n"
            "v1,x,y,zzz,1,2024-01-01\n"
            "v3,,y,a,-1,2024-01-01\n"
            "v4,x,y,b,1,someday\n")
    path = write(tmp_path / "broken.csv", text)
    error = reject(seeded, db_path, path, [
        "(6 problems; rows are numbered from 1 after the header)",
        "duplicate vote_id [column 'vote_id']\n    2 rows: 1 ('v1'), 2 ('v1')",
        "a model compared with itself (model_a == model_b) [columns 'model_a', 'model_b']\n    1 row: 1 ('x')",
        "empty model_a [column 'model_a']\n    1 row: 3 (empty)",
        "unknown winner label",
        "1 row: 2 ('zzz')",
        "weight below 0 [column 'weight']\n    1 row: 3 ('-1')",
        "timestamp is not an ISO-8601 date-time or epoch seconds [column 'timestamp']\n    1 row: 4 ('someday')",
    ])
    assert len(error.problems) == 6
    assert sorted(p.columns for p in error.problems) == sorted([
        ("vote_id",), ("model_a", "model_b"), ("model_a",), ("winner",), ("weight",), ("timestamp",)])
    assert {p.rows for p in error.problems} == {(1, 2), (1,), (3,), (2,), (4,)}


def test_several_broken_eval_run_rules_give_one_error(tmp_path):
    path = write(tmp_path / "runs.csv", RUNS + "m,t1,acc,2\n,t2,acc,0.5\nm,t1,acc,-1\nm,t3,acc,x\n")
    with pytest.raises(InputError) as info:
        load(path)
    message = str(info.value)
    for fragment in ("empty model_id [column 'model_id']\n    1 row: 2 (empty)",
                     "score above 1 [column 'score']\n    1 row: 1 ('2')",
                     "score below 0 [column 'score']\n    1 row: 3 ('-1')",
                     "score is not a finite number [column 'score']\n    1 row: 4 ('x')",
                     "the same (model, task, metric) is scored twice"):
        assert fragment in message, fragment


def test_winrate_matrix_out_of_range_and_bad_counts(tmp_path):
    rates = write(tmp_path / "rates.csv", "model,x,y\nx,,1.5\ny,0.4,\n")
    with pytest.raises(InputError, match=re.escape(str(rates))) as info:
        load(rates)
    assert "win rates must lie in [0, 1] [column 'y']" in str(info.value)
    assert "1 row: 1 ('x')" in str(info.value)
    good = write(tmp_path / "good_rates.csv", "model,x,y\nx,,0.6\ny,0.4,\n")
    counts = write(tmp_path / "counts.csv", "model,x,y\nx,0,-3\ny,-3,0\n")
    with pytest.raises(InputError, match=re.escape(str(counts))) as info:
        load(good, counts=counts)
    assert "comparison counts must be non-negative [columns 'x', 'y']" in str(info.value)
    other = write(tmp_path / "other.csv", "model,x,z\nx,0,3\nz,3,0\n")
    with pytest.raises(InputError, match="names other models"):
        load(good, counts=other)


def test_interrupted_ingest_leaves_the_store_unchanged(seeded, db_path, tmp_path):
    path = write(tmp_path / "fine.csv", VOTES + "x,y,a\ny,z,b\n")
    loaded = load(path)
    before = snapshot(db_path)

    def interrupt(done, total):
        assert (done, total) == (2, 2)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        seeded.ingest(loaded, progress=interrupt)
    assert snapshot(db_path) == before
    result = seeded.ingest(loaded)  # and the same input can still be stored afterwards
    assert result.created and result.dataset.rows == 2


# -- the CLI --------------------------------------------------------------------------------------------
def test_cli_ingest_of_a_bad_file_exits_2_and_changes_nothing(seeded, db_path, tmp_path, capsys):
    bad = write(tmp_path / "bad.csv", VOTES + "x,y,a\nx,y,banana\n")
    before = snapshot(db_path)
    assert main(["ingest", str(bad), "--db", str(db_path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"{bad}: rejected, nothing was stored")
    assert "unknown winner label" in err and "[column 'winner']" in err and "1 row: 2 ('banana')" in err
    assert snapshot(db_path) == before


@pytest.mark.parametrize(("args", "fragment"), [
    (["--map", "model_a=nope"], "the column mapping reads 'model_a' from 'nope'"),
    (["--outcome", "banana=excellent"], "the outcome mapping sends 'banana' to 'excellent'"),
    (["--kind", "eval_runs"], "missing required columns for an EvalRun"),
])
def test_cli_options_that_do_not_fit_exit_2(args, fragment, seeded, db_path, tmp_path, capsys):
    bad = write(tmp_path / "bad.csv", VOTES + "x,y,banana\n")
    before = snapshot(db_path)
    assert main(["ingest", str(bad), "--db", str(db_path), *args]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and fragment in err
    assert snapshot(db_path) == before


def test_cli_ingest_of_a_missing_or_empty_file_exits_2(seeded, db_path, tmp_path, capsys):
    before = snapshot(db_path)
    assert main(["ingest", str(tmp_path / "nowhere.csv"), "--db", str(db_path)]) == 2
    assert "nowhere.csv: rejected, nothing was stored: no such file" in capsys.readouterr().err
    empty = write(tmp_path / "empty.csv", b"")
    assert main(["ingest", str(empty), "--db", str(db_path)]) == 2
    assert f"{empty}: rejected, nothing was stored: the file is empty" in capsys.readouterr().err
    assert snapshot(db_path) == before


def test_cli_ingest_of_a_good_file_exits_0(db_path, tmp_path, capsys):
    good = write(tmp_path / "fine.csv", "left,right,winner\nx,y,left\n")
    assert main(["ingest", str(good), "--db", str(db_path), "--name", "fine votes"]) == 0
    out = capsys.readouterr().out
    assert "stored 1 votes rows as dataset 'fine votes'" in out
    assert "note: column 'left' read as model_a" in out
    with Store(db_path) as store:
        assert [(d.name, d.kind, d.rows) for d in store.datasets()] == [("fine votes", "votes", 1)]
