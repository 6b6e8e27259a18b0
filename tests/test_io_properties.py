"""Property tests of core.io: names are data, row order is irrelevant, winner spellings are robust,
and the [0, 1] score rule holds for every finite number."""

from __future__ import annotations

import collections
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.io import InputError, load
from core.samples import arena_demo
from core.schema import OUTCOME_ALIASES, OUTCOMES
from core.store import Store

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

names = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
                max_size=20).filter(lambda s: s == s.strip())
# Names that readers like to turn into something else (missing values, numbers, formulas, markup).
TRICKY = ["NA", "null", "None", "N/A", "NaN", "nan", "#N/A", "-", "0123", "1e5", "TRUE", "=1+1", "+x", "@x", "-x",
          "a|b", "<script>alert(1)</script>", '"quoted"', "a,b", "模型-7b", "café", "\ufeffbom", "x\u00a0y"]
model_names = st.one_of(names, st.sampled_from(TRICKY))


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


# (a) ---------------------------------------------------------------------------------------------------
@SETTINGS
@given(models=st.lists(model_names, min_size=2, max_size=6, unique=True), data=st.data())
def test_any_model_name_round_trips_verbatim(models, data):
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(range(len(models))), st.sampled_from(range(len(models))))
                               .filter(lambda p: p[0] != p[1]), min_size=1, max_size=8))
    # every name appears at least once
    pairs += [(i, (i + 1) % len(models)) for i in range(len(models))]
    winners = data.draw(st.lists(st.sampled_from(OUTCOMES), min_size=len(pairs), max_size=len(pairs)))
    votes = pd.DataFrame({"model_a": [models[i] for i, _ in pairs], "model_b": [models[j] for _, j in pairs],
                          "winner": winners, "annotator_id": [models[j] for _, j in pairs]})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "votes.csv"
        path.write_bytes(csv_bytes(votes))
        loaded = load(path)
        frame = loaded.frame
        assert frame["model_a"].astype(object).tolist() == votes["model_a"].tolist()
        assert frame["model_b"].astype(object).tolist() == votes["model_b"].tolist()
        assert frame["annotator_id"].astype(object).tolist() == votes["annotator_id"].tolist()
        assert frame["winner"].astype(object).tolist() == winners
        assert list(frame["model_a"].cat.categories) == sorted(models)
        assert list(frame["model_b"].cat.categories) == sorted(models)
        with Store(Path(tmp) / "store.db") as store:
            result = store.ingest(loaded)
            back = store.load(result.dataset.id)
        pdt.assert_frame_equal(back, frame)
        assert back["model_a"].astype(object).tolist() == votes["model_a"].tolist()


@SETTINGS
@given(model_ids=st.lists(model_names, min_size=1, max_size=5, unique=True),
       task_ids=st.lists(names, min_size=1, max_size=3, unique=True))
def test_any_model_and_task_name_round_trips_in_eval_runs(model_ids, task_ids):
    rows = [(m, t, (i * 7 % 11) / 10) for i, (m, t) in enumerate((m, t) for m in model_ids for t in task_ids)]
    runs = pd.DataFrame(rows, columns=["model_id", "task_id", "score"])
    loaded = load(csv_bytes(runs), name="runs.csv")
    assert loaded.kind == "eval_runs"
    assert loaded.frame["model_id"].tolist() == runs["model_id"].tolist()
    assert loaded.frame["task_id"].tolist() == runs["task_id"].tolist()
    np.testing.assert_array_equal(loaded.frame["score"].to_numpy(), runs["score"].to_numpy())


# (b) ---------------------------------------------------------------------------------------------------
DEMO = arena_demo(80, 5, seed=3)


def _triples(frame: pd.DataFrame) -> collections.Counter:
    return collections.Counter(zip(frame["model_a"].astype(str), frame["model_b"].astype(str),
                                   frame["winner"].astype(str)))


REFERENCE = load(csv_bytes(DEMO), name="demo.csv")


@SETTINGS
@given(order=st.permutations(range(len(DEMO))))
def test_shuffling_rows_permutes_the_loaded_rows(order):
    shuffled = DEMO.iloc[list(order)].reset_index(drop=True)
    loaded = load(csv_bytes(shuffled), name="shuffled.csv")
    assert _triples(loaded.frame) == _triples(REFERENCE.frame)
    for col in ("model_a", "model_b", "query_id", "annotator_id", "winner"):
        assert list(loaded.frame[col].cat.categories) == list(REFERENCE.frame[col].cat.categories), col
    # row for row, the shuffled file is the reference frame taken in the same order
    pdt.assert_frame_equal(loaded.frame, REFERENCE.frame.iloc[list(order)].reset_index(drop=True))


# (c) ---------------------------------------------------------------------------------------------------
@st.composite
def spelled(draw, alias: str) -> str:
    """The alias with each letter's case chosen at random and spaces/tabs around it."""
    cased = "".join(c.upper() if draw(st.booleans()) else c.lower() for c in alias)
    pad = st.text(alphabet=" \t", max_size=3)
    return draw(pad) + cased + draw(pad)


@SETTINGS
@given(data=st.data(), aliases=st.lists(st.sampled_from(sorted(OUTCOME_ALIASES)), min_size=1, max_size=12))
def test_winner_spellings_map_to_the_same_outcome(data, aliases):
    labels = [data.draw(spelled(a)) for a in aliases]
    votes = pd.DataFrame({"model_a": "m1", "model_b": "m2", "winner": labels})
    text = csv_bytes(votes)
    loaded = load(text, name="spellings.csv")
    assert loaded.frame["winner"].astype(str).tolist() == [OUTCOME_ALIASES[a] for a in aliases]
    # JSONL gives the same answer as CSV
    as_jsonl = load(votes.to_json(orient="records", lines=True).encode(), name="spellings.jsonl")
    pdt.assert_frame_equal(as_jsonl.frame, loaded.frame)


@SETTINGS
@given(word=st.text(alphabet="abcdehilmnortw_ ()12", min_size=1, max_size=14))
def test_any_other_winner_label_is_rejected_not_a_tie(word):
    assume(word.strip().lower() not in OUTCOME_ALIASES)
    assume(word.strip() != "")
    votes = pd.DataFrame({"model_a": ["m1", "m1"], "model_b": ["m2", "m2"], "winner": ["a", word]})
    with pytest.raises(InputError, match=r"unknown winner label[^\n]*\n    1 row: 2 \(") as info:
        load(csv_bytes(votes), name="labels.csv")
    assert repr(word) in str(info.value)


# (d) ---------------------------------------------------------------------------------------------------
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
outside = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x < 0 or x > 1)


def runs_csv(scores: list[float]) -> bytes:
    lines = ["model_id,task_id,score"] + [f"m,t{i},{s!r}" for i, s in enumerate(scores)]
    return ("\n".join(lines) + "\n").encode()


@SETTINGS
@given(scores=st.lists(unit, min_size=1, max_size=20))
def test_any_score_in_unit_interval_is_accepted(scores):
    loaded = load(runs_csv(scores), name="runs.csv")
    np.testing.assert_array_equal(loaded.frame["score"].to_numpy(), np.array(scores, dtype=float))
    assert loaded.frame["task_id"].tolist() == [f"t{i}" for i in range(len(scores))]


@SETTINGS
@given(scores=st.lists(unit, min_size=1, max_size=20), bad=outside, data=st.data())
def test_any_finite_score_outside_is_rejected_with_its_row(scores, bad, data):
    at = data.draw(st.integers(0, len(scores)))
    scores = scores[:at] + [bad] + scores[at:]
    with pytest.raises(InputError) as info:
        load(runs_csv(scores), name="runs.csv")
    error = info.value
    assert len(error.problems) == 1
    problem = error.problems[0]
    assert problem.columns == ("score",)
    assert problem.rows == (at + 1,) and problem.n_rows == 1
    rule = "score below 0" if bad < 0 else "score above 1"
    assert re.search(rf"{rule} \[column 'score'\]\n    1 row: {at + 1} \('", str(error)), str(error)
    assert str(error).startswith("runs.csv: rejected, nothing was stored")
