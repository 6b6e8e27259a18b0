"""Random inputs to every reader: the only outcomes are a validated dataset or an InputError.

Random bytes under every file name a user may give, random CSV tables built from the column names the
readers look for and cells that readers like to misread, random JSON records and documents (nested
values, lm-evaluation-harness shapes) and random count matrices, read as each kind.
"""

from __future__ import annotations

import csv
import gzip
import io
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.io import READ_KINDS, InputError, Loaded, load, load_lm_eval

# a numpy or pandas warning on the way is a defect too (an overflow, a cast of NaN): fail on it
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
NAMES = ["x.csv", "x.tsv", "x.json", "x.jsonl", "x.parquet", "x.csv.gz", "x", "x.txt"]
KINDS = [None, *READ_KINDS]
COLUMNS = ["model_a", "model_b", "winner", "vote_id", "timestamp", "weight", "is_golden", "golden_answer",
           "annotator_id", "response_time_s", "count", "n", "left", "right", "model_id", "task_id", "score",
           "metric_name", "category", "model", "task", "stderr", "", "alpha", "beta", "gamma", "answer_a"]
CELLS = ["", "alpha", "beta", "gamma", "a", "b", "tie", "model_a", "model_b", "both_bad", "0", "1", "0.5", "-1",
         "1.5", "inf", "-inf", "nan", "NA", "1e308", "1e-320", "1704067200000", "1e20", "2024-01-01T00:00:00Z",
         "2262-04-12", "true", "yes", "maybe", " alpha", "al\u2028pha", "x\u0085", "=1+1", "\x00", "0123",
         "9" * 400, "é", "\ud7ff"]


def outcome(source, **kwargs) -> None:
    try:
        loaded = load(source, **kwargs)
    except InputError as exc:
        assert str(exc) and "nothing was stored" in str(exc)
        return
    assert isinstance(loaded, Loaded) and loaded.rows > 0
    numbers = loaded.frame.select_dtypes("number")
    if loaded.kind != "winrate_matrix":  # a matrix without counts has n missing by design
        assert np.isfinite(numbers.to_numpy(dtype=float)[~numbers.isna().to_numpy()]).all()


@SETTINGS
@given(data=st.binary(max_size=600), name=st.sampled_from(NAMES), kind=st.sampled_from(KINDS))
def test_random_bytes(data, name, kind):
    outcome(data, name=name, kind=kind)


@SETTINGS
@given(data=st.binary(max_size=300), kind=st.sampled_from(KINDS))
def test_random_bytes_behind_gzip_and_parquet_magic(data, kind):
    outcome(gzip.compress(data), name="x.csv.gz", kind=kind)
    outcome(b"PAR1" + data + b"PAR1", name="x.parquet", kind=kind)


def csv_text(header: list[str], rows: list[list[str]], delimiter: str) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8", "surrogatepass")


tables = st.integers(1, 6).flatmap(lambda width: st.tuples(
    st.lists(st.sampled_from(COLUMNS), min_size=width, max_size=width),
    st.lists(st.lists(st.sampled_from(CELLS) | st.text(max_size=8), min_size=0, max_size=width + 1),
             min_size=0, max_size=6)))


@SETTINGS
@given(table=tables, delimiter=st.sampled_from([",", "\t"]), kind=st.sampled_from(KINDS))
def test_random_csv_tables(table, delimiter, kind):
    header, rows = table
    outcome(csv_text(header, rows, delimiter), name="x.tsv" if delimiter == "\t" else "x.csv", kind=kind)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.sampled_from(CELLS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(COLUMNS), inner, max_size=3),
    max_leaves=12)
records = st.lists(st.dictionaries(st.sampled_from(COLUMNS), json_values, max_size=6), max_size=6)


@SETTINGS
@given(rows=records, kind=st.sampled_from(KINDS), lines=st.booleans())
def test_random_json_records(rows, kind, lines):
    if lines:
        data = "\n".join(json.dumps(r) for r in rows).encode()
        outcome(data, name="x.jsonl", kind=kind)
    else:
        outcome(json.dumps(rows).encode(), name="x.json", kind=kind)


lm_eval_documents = st.fixed_dictionaries(
    {"results": st.dictionaries(st.text(max_size=6), st.dictionaries(
        st.sampled_from(["acc", "acc,none", "acc_stderr", "acc_stderr,none", "f1", "alias"]), json_values,
        max_size=3), max_size=4) | json_values},
    optional={"config": st.fixed_dictionaries({}, optional={
        "model_args": st.sampled_from(["pretrained=org/m", "pretrained=", "x=1", "pretrained=a\u2028b"]) | json_values,
        "num_fewshot": json_values}) | json_values,
        "versions": json_values})


@SETTINGS
@given(doc=lm_eval_documents, kind=st.sampled_from([None, "lm_eval"]))
def test_random_lm_eval_documents(doc, kind):
    data = json.dumps(doc).encode()
    outcome(data, name="results.json", kind=kind)
    try:
        loaded = load_lm_eval([data])
    except InputError:
        return
    assert loaded.kind == "eval_runs" and loaded.rows > 0


cells = st.sampled_from(["", "0", "0.5", "1", "0.3", "0.7", "10", "inf", "1e308", "-1", "x", "nan"])


@SETTINGS
@given(size=st.integers(2, 4), data=st.data())
def test_random_matrices_with_random_counts(size, data):
    names = [f"m{i}" for i in range(size)]
    def square():
        return pd.DataFrame([[n, *data.draw(st.lists(cells, min_size=size, max_size=size))] for n in names],
                            columns=["model", *names]).to_csv(index=False).encode()

    counts = square() if data.draw(st.booleans()) else None
    outcome(square(), name="rates.csv", kind=data.draw(st.sampled_from([None, "winrate_matrix"])), counts=counts)
