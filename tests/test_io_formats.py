"""Every input format and shape round-trips: file -> core.io.load -> Store.ingest -> Store.load.

The canonical votes frame read from a CSV is the reference; every other format of the same votes
must load to an equal frame, and the store must hand back exactly what the loader produced.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import core.io as cio
from core.io import InputError, detect_kind, load, load_lm_eval
from core.io.mapping import peek
from core.samples import arena_demo
from core.schema import OUTCOMES, VOTE_COLUMNS
from core.store import Store

FORMATS = ("tsv", "json", "jsonl", "parquet", "csv.gz")


# -- helpers -------------------------------------------------------------------------------------------
def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def store_round_trip(store: Store, loaded: cio.Loaded) -> pd.DataFrame:
    result = store.ingest(loaded)
    assert result.created
    assert result.dataset.kind == loaded.kind
    assert result.dataset.rows == loaded.rows
    back = store.load(result.dataset.id)
    pdt.assert_frame_equal(back, loaded.frame)  # the per-side style counts (scheme style) included
    return back


def notes_text(loaded: cio.Loaded) -> str:
    return "\n".join(loaded.notes)


def as_str(values) -> list[str]:
    return [str(v) for v in values]


# -- the canonical votes frame in every format ------------------------------------------------------------
@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return arena_demo(300, 6, seed=1)


@pytest.fixture(scope="module")
def demo_files(demo, tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("formats")
    files = {
        "csv": d / "votes.csv", "tsv": d / "votes.tsv", "json": d / "votes.json", "jsonl": d / "votes.jsonl",
        "parquet": d / "votes.parquet", "csv.gz": d / "votes.csv.gz",
    }
    demo.to_csv(files["csv"], index=False)
    demo.to_csv(files["tsv"], index=False, sep="\t")
    demo.to_json(files["json"], orient="records")
    demo.to_json(files["jsonl"], orient="records", lines=True)
    demo.to_parquet(files["parquet"], index=False)
    demo.to_csv(files["csv.gz"], index=False, compression="gzip")
    return files


@pytest.fixture(scope="module")
def reference(demo_files) -> cio.Loaded:
    return load(demo_files["csv"])


def test_csv_is_read_as_the_canonical_votes_frame(reference, demo):
    frame = reference.frame
    assert reference.kind == "votes"
    assert reference.rows == len(demo) == 300
    assert list(frame.columns) == list(VOTE_COLUMNS)
    assert reference.notes == ()
    # dtypes of the canonical frame
    models = sorted(set(demo["model_a"]) | set(demo["model_b"]))
    assert len(models) == 6
    for col in ("model_a", "model_b"):
        assert isinstance(frame[col].dtype, pd.CategoricalDtype)
        assert list(frame[col].cat.categories) == models
    assert frame["model_a"].cat.categories.equals(frame["model_b"].cat.categories)
    assert isinstance(frame["winner"].dtype, pd.CategoricalDtype)
    assert tuple(frame["winner"].cat.categories) == OUTCOMES
    assert isinstance(frame["golden_answer"].dtype, pd.CategoricalDtype)
    assert tuple(frame["golden_answer"].cat.categories) == OUTCOMES
    for col in ("query_id", "game_id", "dimension", "category", "annotator_id"):
        assert isinstance(frame[col].dtype, pd.CategoricalDtype), col
        assert list(frame[col].cat.categories) == sorted(set(demo[col])), col
    assert frame["timestamp"].dtype == pd.DatetimeTZDtype("ns", "UTC")
    for col in ("response_time_s", "len_a", "len_b", "weight"):
        assert frame[col].dtype == np.float64, col
    assert frame["is_golden"].dtype == bool
    assert pd.api.types.is_string_dtype(frame["vote_id"].dtype)
    # and the values are the ones written
    for col in ("vote_id", "query_id", "game_id", "dimension", "category", "model_a", "model_b", "winner",
                "annotator_id"):
        assert as_str(frame[col]) == as_str(demo[col]), col
    pdt.assert_series_equal(frame["timestamp"], pd.to_datetime(demo["timestamp"], utc=True).dt.as_unit("ns"),
                            check_names=False)
    np.testing.assert_array_equal(frame["len_a"].to_numpy(), demo["len_a"].to_numpy(dtype=float))
    np.testing.assert_array_equal(frame["response_time_s"].to_numpy(), demo["response_time_s"].to_numpy())
    np.testing.assert_array_equal(frame["is_golden"].to_numpy(), demo["is_golden"].to_numpy())
    golden = demo["is_golden"].to_numpy()
    assert golden.sum() == 5
    assert as_str(frame["golden_answer"][golden]) == as_str(demo["golden_answer"][golden])
    assert frame["golden_answer"][~golden].isna().all()


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_loads_the_same_frame(fmt, demo_files, reference):
    loaded = load(demo_files[fmt])
    assert loaded.kind == "votes"
    assert loaded.source == str(demo_files[fmt])
    pdt.assert_frame_equal(loaded.frame, reference.frame)


@pytest.mark.parametrize("fmt", ("csv", *FORMATS))
def test_every_format_round_trips_through_the_store(fmt, demo_files, store):
    loaded = load(demo_files[fmt])
    back = store_round_trip(store, loaded)
    assert list(back["model_a"].cat.categories) == list(loaded.frame["model_a"].cat.categories)
    assert tuple(back["winner"].cat.categories) == OUTCOMES


def test_bytes_upload_is_read_by_name_or_content(demo_files, reference):
    data = demo_files["jsonl"].read_bytes()
    pdt.assert_frame_equal(load(data, name="upload.jsonl").frame, reference.frame)
    pdt.assert_frame_equal(load(data).frame, reference.frame)  # sniffed: one object per line
    pdt.assert_frame_equal(load(demo_files["json"].read_bytes()).frame, reference.frame)  # sniffed: a list


def test_same_file_twice_is_stored_once(demo_files, store):
    loaded = load(demo_files["csv"])
    first = store.ingest(loaded)
    second = store.ingest(load(demo_files["csv"]))
    assert first.created and not second.created
    assert second.dataset.id == first.dataset.id
    assert len(store.datasets()) == 1


# -- Chatbot Arena / FastChat battle records ------------------------------------------------------------
ARENA_RECORDS = [
    {"model_a": "gpt-4", "model_b": "claude-v1", "winner": "model_a", "judge": "arena_user_1",
     "tstamp": 1682352000.5, "question_id": "q-abc", "language": "English", "anony": True,
     "conv_metadata": {"sum_assistant_a_tokens": 120, "sum_assistant_b_tokens": 80}},
    {"model_a": "claude-v1", "model_b": "vicuna-13b", "winner": "tie (bothbad)", "judge": "arena_user_2",
     "tstamp": 1682438400.25, "question_id": "q-def", "language": "German", "anony": False,
     "conv_metadata": {"sum_assistant_a_tokens": 10, "sum_assistant_b_tokens": 0}},
    {"model_a": "vicuna-13b", "model_b": "gpt-4", "winner": "model_b", "judge": "arena_user_1",
     "tstamp": 1682524800, "question_id": "q-ghi", "language": "English", "anony": True,
     "conv_metadata": {"sum_assistant_a_tokens": 333, "sum_assistant_b_tokens": 444}},
    {"model_a": "gpt-4", "model_b": "vicuna-13b", "winner": "tie", "judge": "arena_user_3",
     "tstamp": 1682524801.0, "question_id": "q-abc", "language": "English", "anony": True,
     "conv_metadata": {"sum_assistant_a_tokens": 1, "sum_assistant_b_tokens": 2}},
]


@pytest.mark.parametrize("fmt", ("json", "jsonl"))
def test_arena_battle_records(fmt, tmp_path, store):
    path = tmp_path / f"battles.{fmt}"
    text = json.dumps(ARENA_RECORDS, indent=1) if fmt == "json" else "\n".join(map(json.dumps, ARENA_RECORDS))
    write(path, text)
    loaded = load(path)
    frame = loaded.frame
    assert loaded.kind == "votes"
    assert as_str(frame["model_a"]) == ["gpt-4", "claude-v1", "vicuna-13b", "gpt-4"]
    assert as_str(frame["model_b"]) == ["claude-v1", "vicuna-13b", "gpt-4", "vicuna-13b"]
    assert list(frame["model_a"].cat.categories) == ["claude-v1", "gpt-4", "vicuna-13b"]
    assert list(frame["model_b"].cat.categories) == ["claude-v1", "gpt-4", "vicuna-13b"]
    assert as_str(frame["winner"]) == ["model_a", "tie (bothbad)", "model_b", "tie"]
    assert as_str(frame["annotator_id"]) == ["arena_user_1", "arena_user_2", "arena_user_1", "arena_user_3"]
    assert as_str(frame["query_id"]) == ["q-abc", "q-def", "q-ghi", "q-abc"]
    expected_time = pd.Series(pd.to_datetime([
        "2023-04-24T16:00:00.500Z", "2023-04-25T16:00:00.250Z", "2023-04-26T16:00:00Z", "2023-04-26T16:00:01Z",
    ], utc=True, format="ISO8601").as_unit("ns"), name="timestamp")
    pdt.assert_series_equal(frame["timestamp"], expected_time)
    assert frame["timestamp"][0] == pd.Timestamp(2023, 4, 24, 16, 0, 0, 500000, tz="UTC")
    np.testing.assert_array_equal(frame["len_a"].to_numpy(), [120.0, 10.0, 333.0, 1.0])
    np.testing.assert_array_equal(frame["len_b"].to_numpy(), [80.0, 0.0, 444.0, 2.0])
    assert as_str(frame["game_id"]) == ["all"] * 4
    assert as_str(frame["dimension"]) == ["overall"] * 4
    assert "language" not in frame and "anony" not in frame and "judge" not in frame
    notes = notes_text(loaded)
    assert "columns not used: language, anony" in notes
    assert "column 'judge' read as annotator_id" in notes
    assert "column 'tstamp' read as timestamp" in notes
    assert "column 'question_id' read as query_id" in notes
    assert "column 'conv_metadata.sum_assistant_a_tokens' read as len_a" in notes
    store_round_trip(store, loaded)


def test_arena_json_and_jsonl_agree(tmp_path):
    a = load(write(tmp_path / "b.json", json.dumps(ARENA_RECORDS)))
    b = load(write(tmp_path / "b.jsonl", "\n".join(map(json.dumps, ARENA_RECORDS)) + "\n\n"))
    pdt.assert_frame_equal(a.frame, b.frame)


def test_left_right_winner_llmfao_style(tmp_path, store):
    loaded = load(write(tmp_path / "llmfao.csv", "left,right,winner\nalpha,beta,left\nbeta,gamma,right\n"
                                                   "gamma,alpha,tie\n"))
    frame = loaded.frame
    assert loaded.kind == "votes"
    assert as_str(frame["model_a"]) == ["alpha", "beta", "gamma"]
    assert as_str(frame["model_b"]) == ["beta", "gamma", "alpha"]
    assert as_str(frame["winner"]) == ["model_a", "model_b", "tie"]
    assert list(frame["model_a"].cat.categories) == ["alpha", "beta", "gamma"]
    assert "column 'left' read as model_a" in notes_text(loaded)
    assert "column 'right' read as model_b" in notes_text(loaded)
    store_round_trip(store, loaded)


WINNER_ALIASES = [
    ("a", "model_a"), ("A", "model_a"), ("1", "model_a"), ("left", "model_a"), ("LEFT", "model_a"),
    ("Model_A", "model_a"),
    ("b", "model_b"), ("B", "model_b"), ("2", "model_b"), ("right", "model_b"), ("Right", "model_b"),
    ("MODEL_B", "model_b"),
    ("tie", "tie"), ("TIE", "tie"), ("Tie", "tie"), ("draw", "tie"), ("DRAW", "tie"),
    ("both_bad", "tie (bothbad)"), ("BOTH_BAD", "tie (bothbad)"), ("bothbad", "tie (bothbad)"),
    ("BothBad", "tie (bothbad)"), ("tie (bothbad)", "tie (bothbad)"), ("TIE (BOTHBAD)", "tie (bothbad)"),
]


def test_winner_aliases_map_to_canonical_outcomes(tmp_path, store):
    lines = "".join(f"m1,m2,{label}\n" for label, _ in WINNER_ALIASES)
    loaded = load(write(tmp_path / "aliases.csv", "model_a,model_b,winner\n" + lines))
    assert as_str(loaded.frame["winner"]) == [outcome for _, outcome in WINNER_ALIASES]
    assert tuple(loaded.frame["winner"].cat.categories) == OUTCOMES
    store_round_trip(store, loaded)


def test_winner_aliases_in_json_numbers(tmp_path):
    """JSON numbers 1 and 2 are the aliases "1" and "2", not something else."""
    records = [{"model_a": "m1", "model_b": "m2", "winner": 1}, {"model_a": "m1", "model_b": "m2", "winner": 2}]
    loaded = load(write(tmp_path / "num.json", json.dumps(records)))
    assert as_str(loaded.frame["winner"]) == ["model_a", "model_b"]


def test_answer_texts_become_character_lengths(tmp_path, store):
    text = ("model_a,model_b,winner,answer_a,answer_b\n"
            "m1,m2,a,hello,\"héllo, wörld\"\n"
            "m2,m1,b,模型,\"two\nlines\"\n")
    loaded = load(write(tmp_path / "answers.csv", text))
    frame = loaded.frame
    np.testing.assert_array_equal(frame["len_a"].to_numpy(), [5.0, 2.0])
    np.testing.assert_array_equal(frame["len_b"].to_numpy(), [12.0, 9.0])
    assert "answer_a" not in frame and "answer_b" not in frame
    notes = notes_text(loaded)
    assert "len_a computed as the character length of 'answer_a'" in notes
    assert "len_b computed as the character length of 'answer_b'" in notes
    assert "columns not used" not in notes
    store_round_trip(store, loaded)


def test_explicit_column_and_outcome_mapping(tmp_path, store):
    text = ("sys1,sys2,pref,rater,judge\n"
            "alpha,beta,a-is-better,r1,j1\n"
            "beta,alpha,B-IS-BETTER,r2,j2\n"
            "alpha,beta,same,r1,j3\n"
            "beta,alpha,both awful,r3,j4\n"
            "alpha,beta,left,r3,j5\n")
    loaded = load(write(tmp_path / "custom.csv", text),
                  columns={"model_a": "sys1", "model_b": "sys2", "winner": "pref", "annotator_id": "rater"},
                  outcomes={"a-is-better": "model_a", "b-is-better": "b", "same": "tie",
                            "both awful": "tie (bothbad)"})
    frame = loaded.frame
    assert loaded.kind == "votes"
    assert as_str(frame["model_a"]) == ["alpha", "beta", "alpha", "beta", "alpha"]
    assert as_str(frame["model_b"]) == ["beta", "alpha", "beta", "alpha", "beta"]
    assert as_str(frame["winner"]) == ["model_a", "model_b", "tie", "tie (bothbad)", "model_a"]
    # the explicit mapping wins over the 'judge' alias, which is then left out
    assert as_str(frame["annotator_id"]) == ["r1", "r2", "r1", "r3", "r3"]
    assert "columns not used: judge" in notes_text(loaded)
    assert loaded.options["columns"]["model_a"] == "sys1"
    assert loaded.options["outcomes"]["same"] == "tie"
    store_round_trip(store, loaded)


def test_mapping_changes_the_fingerprint(tmp_path):
    path = write(tmp_path / "v.csv", "model_a,model_b,winner,rater\nm1,m2,a,r1\n")
    plain = load(path)
    mapped = load(path, columns={"annotator_id": "rater"})
    assert plain.sha256 != mapped.sha256
    assert "annotator_id" not in plain.frame and as_str(mapped.frame["annotator_id"]) == ["r1"]


# -- counts tables ----------------------------------------------------------------------------------------
def test_counts_table_round_trip(tmp_path, store):
    text = ("model_a,model_b,winner,count,game_id,dimension\n"
            "alpha,beta,model_a,12,chat,overall\n"
            "alpha,beta,b,3,chat,overall\n"
            "alpha,beta,tie,0,chat,safety\n"
            "beta,gamma,both_bad,2.5,search,overall\n")
    loaded = load(write(tmp_path / "counts.csv", text))
    assert loaded.kind == "counts"
    expected = pd.DataFrame({
        "model_a": pd.array(["alpha", "alpha", "alpha", "beta"], dtype="str"),
        "model_b": pd.array(["beta", "beta", "beta", "gamma"], dtype="str"),
        "winner": pd.array(["model_a", "model_b", "tie", "tie (bothbad)"], dtype="str"),
        "count": [12.0, 3.0, 0.0, 2.5],
        "game_id": pd.array(["chat", "chat", "chat", "search"], dtype="str"),
        "dimension": pd.array(["overall", "overall", "safety", "overall"], dtype="str"),
    })
    pdt.assert_frame_equal(loaded.frame, expected)
    store_round_trip(store, loaded)


def test_counts_table_with_n_alias_and_no_strata(tmp_path, store):
    loaded = load(write(tmp_path / "counts_n.csv", "left,right,winner,n\nx,y,left,4\ny,x,right,1\n"))
    assert loaded.kind == "counts"
    assert list(loaded.frame.columns) == ["model_a", "model_b", "winner", "count"]
    assert as_str(loaded.frame["winner"]) == ["model_a", "model_b"]
    np.testing.assert_array_equal(loaded.frame["count"].to_numpy(), [4.0, 1.0])
    store_round_trip(store, loaded)


# -- win-rate matrices ----------------------------------------------------------------------------------
RATES = "model,x,y,z\nx,,0.6,0.7\ny,0.4,,0.5\nz,0.3,0.55,\n"  # y-z is asymmetric: 0.5 + 0.55 != 1
COUNTS = "model,x,y,z\nx,0,10,20\ny,10,0,5\nz,20,5,0\n"


def test_winrate_matrix_without_counts(tmp_path, store):
    loaded = load(write(tmp_path / "rates.csv", RATES))
    assert loaded.kind == "winrate_matrix"
    frame = loaded.frame
    assert list(frame.columns) == ["model_row", "model_col", "rate", "n"]
    assert list(zip(frame["model_row"], frame["model_col"])) == [
        ("x", "y"), ("x", "z"), ("y", "x"), ("y", "z"), ("z", "x"), ("z", "y")]
    np.testing.assert_allclose(frame["rate"].to_numpy(), [0.6, 0.7, 0.4, 0.5, 0.3, 0.55])
    assert frame["n"].isna().all()
    notes = notes_text(loaded)
    assert "no count matrix" in notes
    assert "1 pairs have r_ij + r_ji != 1" in notes
    store_round_trip(store, loaded)


def test_winrate_matrix_with_counts(tmp_path, store):
    rates = write(tmp_path / "rates.csv", RATES)
    counts = write(tmp_path / "counts_matrix.csv", COUNTS)
    loaded = load(rates, counts=counts)
    assert loaded.kind == "winrate_matrix"
    np.testing.assert_array_equal(loaded.frame["n"].to_numpy(), [10.0, 20.0, 10.0, 5.0, 20.0, 5.0])
    notes = notes_text(loaded)
    assert "no count matrix" not in notes
    assert "1 pairs have r_ij + r_ji != 1" in notes
    assert loaded.sha256 != load(rates).sha256  # the count matrix is part of what was read
    store_round_trip(store, loaded)


def test_winrate_matrix_written_by_pandas_with_blank_corner(tmp_path):
    m = pd.DataFrame([[np.nan, 0.6, 0.7], [0.4, np.nan, 0.3], [0.3, 0.7, np.nan]], index=list("abc"),
                     columns=list("abc"))
    m.to_csv(tmp_path / "m.csv")
    loaded = load(tmp_path / "m.csv")
    assert loaded.kind == "winrate_matrix"
    assert len(loaded.frame) == 6
    assert not any("r_ij + r_ji" in n for n in loaded.notes)  # symmetric: no asymmetry note


def test_winrate_matrix_rows_in_another_order(tmp_path):
    loaded = load(write(tmp_path / "m.csv", "model,x,y\ny,0.25,\nx,,0.75\n"))
    frame = loaded.frame.set_index(["model_row", "model_col"])["rate"]
    assert frame[("x", "y")] == 0.75 and frame[("y", "x")] == 0.25


# -- EvalRuns -------------------------------------------------------------------------------------------
RUNS_EXPECTED = pd.DataFrame({
    "model_id": pd.array(["m1", "m1", "m2", "m2"], dtype="str"),
    "task_id": pd.array(["t1", "t2", "t1", "t2"], dtype="str"),
    "metric_name": pd.array(["acc", "acc", "acc", "f1"], dtype="str"),
    "score": [0.5, 1.0, 0.0, 0.125],
    "category": pd.array(["math", "code", "math", "code"], dtype="str"),
})


def test_eval_runs_long_csv(tmp_path, store):
    text = "model_id,task_id,metric_name,score,category\n" + "".join(
        f"{r.model_id},{r.task_id},{r.metric_name},{r.score},{r.category}\n" for r in RUNS_EXPECTED.itertuples())
    loaded = load(write(tmp_path / "runs.csv", text))
    assert loaded.kind == "eval_runs"
    pdt.assert_frame_equal(loaded.frame, RUNS_EXPECTED)
    store_round_trip(store, loaded)


def test_eval_runs_long_json(tmp_path, store):
    loaded = load(write(tmp_path / "runs.json", RUNS_EXPECTED.to_json(orient="records")))
    assert loaded.kind == "eval_runs"
    pdt.assert_frame_equal(loaded.frame, RUNS_EXPECTED)
    store_round_trip(store, loaded)


def test_eval_runs_aliases_and_default_metric(tmp_path):
    loaded = load(write(tmp_path / "runs.csv", "model,task,value\nm1,t1,0.25\n"))
    assert loaded.kind == "eval_runs"
    assert as_str(loaded.frame["metric_name"]) == ["score"]
    assert loaded.frame["score"].tolist() == [0.25]


def test_eval_runs_wide_csv(tmp_path, store):
    text = "task_id,category,m1,m2,m3\nt1,math,0.5,,1\nt2,code,1,0.25,\nt3,code,0,0.75,0.5\n"
    loaded = load(write(tmp_path / "wide.csv", text))
    assert loaded.kind == "eval_runs"
    expected = pd.DataFrame({
        "model_id": pd.array(["m1", "m1", "m1", "m2", "m2", "m3", "m3"], dtype="str"),
        "task_id": pd.array(["t1", "t2", "t3", "t2", "t3", "t1", "t3"], dtype="str"),
        "metric_name": pd.array(["score"] * 7, dtype="str"),
        "score": [0.5, 1.0, 0.0, 0.25, 0.75, 1.0, 0.5],
        "category": pd.array(["math", "code", "code", "code", "code", "math", "code"], dtype="str"),
    })
    pdt.assert_frame_equal(loaded.frame, expected)
    notes = notes_text(loaded)
    assert "3 tasks × 3 models" in notes
    assert "2 empty" in notes and "read as 'not scored'" in notes
    store_round_trip(store, loaded)


def test_eval_runs_wide_with_metric_name(tmp_path):
    loaded = load(write(tmp_path / "wide.csv", "task,m1,m2\nt1,0.5,0.25\n"), metric="exact_match")
    assert as_str(loaded.frame["metric_name"]) == ["exact_match", "exact_match"]
    assert not any("empty cells" in n for n in loaded.notes)


LM_EVAL_X = {
    "results": {
        "arc_easy": {"acc": 0.75, "acc_stderr": 0.0125, "acc_norm": 0.7},
        "hellaswag": {"acc": 0.5, "acc_stderr": 0.01, "acc_norm": 0.625, "acc_norm_stderr": 0.02},
        "wikitext": {"word_perplexity": 12.5},
    },
    "config": {"model_args": "pretrained=org/model-x,dtype=float16", "num_fewshot": 5},
}
LM_EVAL_Y = {
    "results": {"arc_easy": {"acc": 0.25, "acc_stderr": 0.03}, "hellaswag": {"acc": 0.375}},
    "config": {"model_args": "pretrained=org/model-y", "num_fewshot": 0},
}


def test_lm_eval_results_json(tmp_path, store):
    loaded = load(write(tmp_path / "results.json", json.dumps(LM_EVAL_X)))
    assert loaded.kind == "eval_runs"
    expected = pd.DataFrame({
        "model_id": pd.array(["org/model-x (5-shot)"] * 2, dtype="str"),
        "task_id": pd.array(["arc_easy", "hellaswag"], dtype="str"),
        "metric_name": pd.array(["acc", "acc"], dtype="str"),
        "score": [0.75, 0.5],
        "stderr": [0.0125, 0.01],
    })
    pdt.assert_frame_equal(loaded.frame, expected)
    assert "1 task results without 'acc' were left out" in notes_text(loaded)
    store_round_trip(store, loaded)


def test_lm_eval_other_metric(tmp_path):
    loaded = load(write(tmp_path / "results.json", json.dumps(LM_EVAL_X)), metric="acc_norm")
    assert loaded.frame["score"].tolist() == [0.7, 0.625]
    np.testing.assert_array_equal(loaded.frame["stderr"].to_numpy(), [np.nan, 0.02])
    assert as_str(loaded.frame["metric_name"]) == ["acc_norm", "acc_norm"]


def test_load_lm_eval_combines_a_folder(tmp_path, store):
    folder = tmp_path / "harness"
    (folder / "y").mkdir(parents=True)
    write(folder / "x.json", json.dumps(LM_EVAL_X))
    write(folder / "y" / "results.json", json.dumps(LM_EVAL_Y))
    unnamed = {"results": {"arc_easy": {"acc": 0.125}}}
    write(folder / "y" / "my-model.json", json.dumps(unnamed))
    loaded = load_lm_eval([folder])
    assert loaded.kind == "eval_runs"
    frame = loaded.frame.sort_values(["model_id", "task_id"]).reset_index(drop=True)
    assert list(zip(frame["model_id"], frame["task_id"], frame["score"])) == [
        ("my-model", "arc_easy", 0.125),
        ("org/model-x (5-shot)", "arc_easy", 0.75),
        ("org/model-x (5-shot)", "hellaswag", 0.5),
        ("org/model-y", "arc_easy", 0.25),
        ("org/model-y", "hellaswag", 0.375),
    ]
    assert np.isnan(frame["stderr"][4]) and frame["stderr"][3] == 0.03
    assert "3 models × 2 tasks" in notes_text(loaded)
    assert "3 lm-eval files under" in loaded.source
    # the same files listed one by one give the same frame
    again = load_lm_eval([folder / "x.json", folder / "y" / "my-model.json", folder / "y" / "results.json"])
    pdt.assert_frame_equal(again.frame.sort_values(["model_id", "task_id"]).reset_index(drop=True), frame)
    store_round_trip(store, loaded)


# -- detecting what a file holds --------------------------------------------------------------------------
@pytest.mark.parametrize(("columns", "mapping", "kind"), [
    (["model_a", "model_b", "winner"], None, "votes"),
    (["model_a", "model_b"], None, "votes"),  # a missing winner is then reported as such
    (["left", "right", "winner"], None, "votes"),
    (["model_a", "model_b", "winner", "count"], None, "counts"),
    (["model_a", "model_b", "winner", "n", "game_id"], None, "counts"),
    (["model_id", "task_id", "score", "category"], None, "eval_runs"),
    (["model", "task", "value"], None, "eval_runs"),
    (["task_id", "category", "m1", "m2"], None, "eval_runs_wide"),
    (["benchmark", "m1"], None, "eval_runs_wide"),
    (["sys1", "sys2", "pref"], {"model_a": "sys1", "model_b": "sys2", "winner": "pref"}, "votes"),
    (["foo", "bar", "baz"], None, None),
])
def test_detect_kind(columns, mapping, kind):
    frame = pd.DataFrame([["v"] * len(columns)], columns=columns)
    assert detect_kind(frame, mapping) == kind


def test_detect_kind_matrix():
    frame = pd.DataFrame({"model": ["x", "y", "z"], "x": [None, "0.4", "0.3"], "y": ["0.6", None, "0.5"],
                          "z": ["0.7", "0.5", None]})
    assert detect_kind(frame) == "winrate_matrix"
    # Not square, yet rows and columns name the same models: a broken matrix (load says what is wrong),
    # not a wide score table of models x "tasks" named like models.
    assert detect_kind(frame.iloc[:2]) == "winrate_matrix"
    assert detect_kind(pd.DataFrame({"model": ["x", "y"], "t1": ["0.5", "0.6"], "t2": ["0.1", "0.2"]})) != \
        "winrate_matrix"


def test_detect_kind_on_arena_records(tmp_path):
    path = write(tmp_path / "b.json", json.dumps(ARENA_RECORDS))
    assert detect_kind(peek(path)) == "votes"


def test_explicit_kind_overrides_detection(tmp_path):
    # a counts-looking file read as votes: 'count' is then an unused column
    path = write(tmp_path / "looks_like_counts.csv", "model_a,model_b,winner,count\nm1,m2,a,3\nm2,m1,b,1\n")
    assert load(path).kind == "counts"
    as_votes = load(path, kind="votes")
    assert as_votes.kind == "votes"
    assert as_str(as_votes.frame["winner"]) == ["model_a", "model_b"]
    assert "columns not used: count" in notes_text(as_votes)
    # a square score table is detected as a win-rate matrix; as a wide EvalRun it is 3 tasks x 3 models
    square = write(tmp_path / "square.csv", "id,a,b,c\na,0.5,0.5,0.5\nb,0.5,0.5,0.5\nc,0.5,0.5,0.5\n")
    assert load(square).kind == "winrate_matrix"
    wide = load(square, kind="eval_runs_wide")
    assert wide.kind == "eval_runs"
    assert len(wide.frame) == 9
    assert sorted(set(wide.frame["model_id"])) == ["a", "b", "c"]
    # a votes file forced to be an EvalRun is missing that shape's columns
    with pytest.raises(InputError, match="missing required columns for an EvalRun"):
        load(path, kind="eval_runs")
    with pytest.raises(ValueError, match="kind must be one of"):
        load(path, kind="spreadsheet")


# -- text from inputs is data ---------------------------------------------------------------------------------
ODD_NAMES = ["a|b", "<script>alert(1)</script>", "=SUM(A1:A2)", "+1", "@handle", "-m", "模型-7b", "café",
             "0123", "NA", "null", "None", "N/A", "NaN", "#N/A", "", "'quoted'", 'say "hi"', "comma, inside",
             "emoji 🚀", "TRUE"]
ODD_NAMES.remove("")  # an empty name is an error, tested elsewhere


def test_odd_model_names_round_trip_verbatim(tmp_path, store):
    rows = []
    for i, name in enumerate(ODD_NAMES):
        other = ODD_NAMES[(i + 1) % len(ODD_NAMES)]
        rows.append({"model_a": name, "model_b": other, "winner": "model_a", "annotator_id": name,
                     "query_id": other})
    pd.DataFrame(rows).to_csv(tmp_path / "odd.csv", index=False)
    loaded = load(tmp_path / "odd.csv")
    frame = loaded.frame
    assert as_str(frame["model_a"]) == ODD_NAMES
    assert as_str(frame["model_b"]) == ODD_NAMES[1:] + ODD_NAMES[:1]
    assert list(frame["model_a"].cat.categories) == sorted(ODD_NAMES)
    assert as_str(frame["annotator_id"]) == ODD_NAMES
    assert not frame[["model_a", "model_b", "annotator_id", "query_id"]].isna().any().any()
    back = store_round_trip(store, loaded)
    assert as_str(back["model_a"]) == ODD_NAMES
    # the labeled SQL view shows the same text
    labeled = [r[0] for r in store.db.execute("SELECT model_a FROM votes_labeled ORDER BY row")]
    assert labeled == ODD_NAMES


def test_odd_model_names_in_json_and_eval_runs(tmp_path, store):
    records = [{"model_id": name, "task_id": "0007", "score": 0.5} for name in ODD_NAMES]
    loaded = load(write(tmp_path / "runs.json", json.dumps(records, ensure_ascii=False)))
    assert as_str(loaded.frame["model_id"]) == ODD_NAMES
    assert as_str(loaded.frame["task_id"]) == ["0007"] * len(ODD_NAMES)
    store_round_trip(store, loaded)


def test_identifiers_keep_leading_zeros_and_na_is_a_name(tmp_path, store):
    text = ("vote_id,query_id,model_a,model_b,winner,annotator_id\n"
            "0001,0123,NA,null,a,007\n"
            "0002,00,null,NA,b,NULL\n"
            "0010,0123,NA,0123,tie,n/a\n")
    loaded = load(write(tmp_path / "ids.csv", text))
    frame = loaded.frame
    assert as_str(frame["vote_id"]) == ["0001", "0002", "0010"]
    assert as_str(frame["query_id"]) == ["0123", "00", "0123"]
    assert as_str(frame["model_a"]) == ["NA", "null", "NA"]
    assert as_str(frame["model_b"]) == ["null", "NA", "0123"]
    assert list(frame["model_a"].cat.categories) == ["0123", "NA", "null"]
    assert as_str(frame["annotator_id"]) == ["007", "NULL", "n/a"]
    assert not frame.isna().any().any()
    back = store_round_trip(store, loaded)
    assert as_str(back["vote_id"]) == ["0001", "0002", "0010"]
    runs = load(write(tmp_path / "runs.csv", "model_id,task_id,score\nNA,0042,0.5\nnull,0042,0.25\n"))
    assert as_str(runs.frame["model_id"]) == ["NA", "null"]
    assert as_str(runs.frame["task_id"]) == ["0042", "0042"]
    store_round_trip(store, runs)


def test_empty_optional_cells_stay_missing(tmp_path, store):
    text = "model_a,model_b,winner,category,len_a,timestamp\nm1,m2,a,,,\nm1,m2,b,code,12,2024-05-01T10:00:00+02:00\n"
    loaded = load(write(tmp_path / "sparse.csv", text))
    frame = loaded.frame
    assert frame["category"].isna().tolist() == [True, False]
    assert np.isnan(frame["len_a"][0]) and frame["len_a"][1] == 12.0
    assert pd.isna(frame["timestamp"][0])
    assert frame["timestamp"][1] == pd.Timestamp("2024-05-01T08:00:00Z")
    store_round_trip(store, loaded)


def test_lm_eval_harness_04_keys_with_filters(tmp_path):
    """lm-evaluation-harness 0.4+ writes ``acc,none`` and ``acc_stderr,none``."""
    doc = {"results": {"arc_easy": {"alias": "arc_easy", "acc,none": 0.75, "acc_stderr,none": 0.01,
                                    "acc_norm,none": 0.7, "acc_norm_stderr,none": 0.011},
                       "hellaswag": {"acc,none": 0.5, "acc_stderr,none": 0.005}},
           "config": {"model_args": "pretrained=org/new-model,dtype=bfloat16", "num_fewshot": 0}}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    frame = load(path).frame
    assert frame[["model_id", "task_id", "score", "stderr"]].values.tolist() == [
        ["org/new-model", "arc_easy", 0.75, 0.01], ["org/new-model", "hellaswag", 0.5, 0.005]]
    norm = load(path, metric="acc_norm").frame
    assert norm["task_id"].tolist() == ["arc_easy"] and norm["score"].tolist() == [0.7]


def test_votes_missing_one_model_column_names_it(tmp_path):
    path = tmp_path / "half.csv"
    path.write_text("model_a,other,winner\nx,y,a\n")
    with pytest.raises(InputError, match=r"missing required column for votes.*\[column 'model_b'\]"):
        load(path)
