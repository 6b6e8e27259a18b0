"""core.filters: what each filter keeps, on categoricals (as stored) and on plain text columns."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.filters import Filters, apply, choices


@pytest.fixture
def votes() -> pd.DataFrame:
    return pd.DataFrame({
        "model_a": pd.Categorical(["a", "b", "c", "a"]),
        "game_id": pd.Categorical(["chat", "search", "chat", "code"]),
        "dimension": pd.Categorical(["overall", "overall", "style", "overall"]),
        "category": ["math", "math", "writing", None],
        "timestamp": pd.to_datetime(["2026-10-01T23:59:59Z", "2026-10-02T00:00:00Z", None,
                                     "2026-10-04T12:00:00Z"], utc=True),
    })


def test_no_filter_returns_the_frame_itself(votes):
    assert apply(votes, Filters()) is votes
    assert not Filters().active and Filters().describe() == "none"


def test_label_filters_combine_with_and(votes):
    assert apply(votes, Filters(games=("chat",))).index.tolist() == [0, 2]
    assert apply(votes, Filters(games=("chat", "code"), dimensions=("overall",))).index.tolist() == [0, 3]
    assert apply(votes, Filters(categories=("math",))).index.tolist() == [0, 1]  # a plain text column
    assert apply(votes, Filters(games=("nowhere",))).empty


def test_date_range_is_inclusive_by_utc_day_and_drops_undated_rows(votes):
    kept = apply(votes, Filters(start=date(2026, 10, 2), end=date(2026, 10, 4)))
    assert kept.index.tolist() == [1, 3]  # 23:59:59 on the 1st is out; the undated row is out
    assert apply(votes, Filters(end=date(2026, 10, 1))).index.tolist() == [0]


def test_filters_on_missing_columns_are_ignored():
    runs = pd.DataFrame({"model_id": ["m"], "score": [0.5], "category": ["math"]})
    assert apply(runs, Filters(games=("chat",), start=date(2026, 1, 1))) is runs


def test_choices_list_used_values_and_the_day_range(votes):
    trimmed = votes.iloc[:3]  # "code" is now an unused category: not offered
    found = choices(trimmed)
    assert found["game_id"] == ["chat", "search"]
    assert found["dimension"] == ["overall", "style"]
    assert found["category"] == ["math", "writing"]
    assert found["timestamp"] == (date(2026, 10, 1), date(2026, 10, 2))


def test_a_column_with_one_value_offers_no_choice():
    assert choices(pd.DataFrame({"game_id": ["chat", "chat"]})) == {}


def test_describe_names_every_active_filter():
    text = Filters(games=("chat",), categories=("math", "code"), start=date(2026, 10, 2)).describe()
    assert text == "game_id ∈ {chat}; category ∈ {math, code}; 2026-10-02 – …"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=30),
       st.sets(st.sampled_from(["x", "y", "z"])))
def test_categorical_and_text_columns_filter_alike(values, wanted):
    text = pd.DataFrame({"game_id": values})
    coded = pd.DataFrame({"game_id": pd.Categorical(values, categories=["z", "y", "x", "unused"])})
    f = Filters(games=tuple(sorted(wanted)))
    expected = [i for i, v in enumerate(values) if v in wanted] if wanted else list(range(len(values)))
    assert apply(text, f).index.tolist() == expected
    assert apply(coded, f).index.tolist() == expected
