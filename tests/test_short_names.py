"""Short display names (markdown tables cut ids to 20 characters) stay distinct for distinct ids."""

from __future__ import annotations

import random

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from core.formats import markdown_text
from core.io import load_lm_eval
from core.leaderboard.aggregate import LeaderboardSettings, aggregate
from core.leaderboard.render import ID_WIDTH, full_markdown, pairwise_markdown, to_markdown
from core.leaderboard.short_names import ELLIPSIS, short_names
from tests.conftest import shared_file

LLAMA = ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B-Instruct"]


def runs_of(models: list[str], n_tasks: int = 6) -> pd.DataFrame:
    rng = random.Random(1)
    return pd.DataFrame([{"model_id": m, "task_id": f"t{t}", "metric_name": "acc", "score": rng.random()}
                         for m in models for t in range(n_tasks)])


def model_cells(markdown: str, columns: tuple[int, ...] = (2,)) -> list[list[str]]:
    rows = [line.split(" | ") for line in markdown.splitlines()[2:]]
    return [[row[c - 1].strip("| ") for c in columns] for row in rows]


def test_ids_that_share_their_first_20_characters_are_told_apart():
    names = short_names(LLAMA)
    assert len(set(names.values())) == 3
    assert all(len(n) <= ID_WIDTH for n in names.values())
    assert names["meta-llama/Llama-3.1-8B"] == "meta-llama/Llama-" + ELLIPSIS + "8B"
    assert names["meta-llama/Llama-3.1-8B-Instruct"].endswith("8B-Instruct")


def test_ids_that_do_not_collide_keep_the_20_character_cut():
    names = short_names(["a-very-long-model-identifier-v2", "short", "another-long-model-identifier"])
    assert names == {"a-very-long-model-identifier-v2": "a-very-long-model-id", "short": "short",
                     "another-long-model-identifier": "another-long-model-i"}


def test_a_cut_never_reads_as_another_id():
    # The cut of the long id is the other id's full name: the long one must show something else.
    names = short_names(["meta-llama/Llama-3.1", "meta-llama/Llama-3.1-8B"])
    assert names["meta-llama/Llama-3.1"] == "meta-llama/Llama-3.1"
    assert names["meta-llama/Llama-3.1-8B"] != "meta-llama/Llama-3.1"


def test_leaderboard_markdown_tells_colliding_models_apart():
    board = aggregate(runs_of(LLAMA), LeaderboardSettings(replicates=50, seed=0))
    shown = [c[0] for c in model_cells(to_markdown(board))]
    assert len(set(shown)) == 3 and all(len(s) <= ID_WIDTH for s in shown)
    for a, b in model_cells(pairwise_markdown(board), (1, 2)):
        assert a != b  # no "X vs X" row


def test_every_pythia_run_reads_distinct_in_the_leaderboard_markdown():
    loaded = load_lm_eval([shared_file("pythia_opt_bloom_lmeval/original/evals")])
    ids = sorted(loaded.frame["model_id"].unique())
    assert sum(i.startswith("EleutherAI/pythia-v1") for i in ids) == 32
    board = aggregate(loaded.frame, LeaderboardSettings(replicates=20, seed=0))
    markdown = full_markdown(board)
    shown = [c[0] for c in model_cells(to_markdown(board))]
    assert len(shown) == len(ids) == 45
    assert len(set(shown)) == 45
    # Most keep within 20 characters; the others are only as long as telling them apart needs.
    assert sum(len(s) <= ID_WIDTH for s in shown) >= 38 and max(map(len, shown)) <= 24
    assert "bigscience/bloom-1b1" in shown and "facebook/opt-1.3b" in shown  # short ids as they are
    pairs = model_cells(pairwise_markdown(board), (1, 2))
    assert len(pairs) == 45 * 44 // 2 and all(a != b for a, b in pairs)
    assert markdown.startswith(to_markdown(board))


# Ids that often collide: a shared long prefix, then a few characters from a small alphabet.
_tail = st.text(alphabet="ab1.-/ ()…", min_size=0, max_size=8)
_colliding = st.builds(lambda prefix, tail: prefix + tail,
                       st.sampled_from(["", "x" * 19, "meta-llama/Llama-3.1", "EleutherAI/pythia-v1.1-"]), _tail)
ids_strategy = st.lists(st.one_of(_colliding, st.text(min_size=1, max_size=30)), min_size=1, max_size=25,
                        unique=True)


@settings(max_examples=300, deadline=None)
@given(ids=ids_strategy, width=st.integers(2, 24))
def test_distinct_ids_get_distinct_names(ids, width):
    names = short_names(ids, width)
    assert set(names) == set(ids)
    assert len(set(names.values())) == len(ids)
    for i, name in names.items():
        if len(i) <= width:
            assert name == i  # an id that fits is shown whole
        else:
            assert len(name) <= len(i)
    if all(i == " ".join(i.splitlines()) for i in ids):  # no line breaks (names with one are refused)
        assert len({markdown_text(n) for n in names.values()}) == len(ids)  # still distinct once escaped
    cuts = [i[:width] for i in ids]
    for i in ids:
        if len(i) > width and cuts.count(i[:width]) == 1 and i[:width] not in ids:
            assert names[i] == i[:width]  # the plain cut, whenever it is unambiguous


@settings(max_examples=100, deadline=None)
@given(ids=ids_strategy, seed=st.integers(0, 1000))
def test_names_do_not_depend_on_the_order_of_the_ids(ids, seed):
    shuffled = list(ids)
    random.Random(seed).shuffle(shuffled)
    assert short_names(ids) == short_names(shuffled)
