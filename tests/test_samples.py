"""Tests of the seeded demo data (core.samples): determinism, contracts, and the planted biases.

The bias tests use the committed 20,000-vote sample and the diagnostics of docs/methods.md §4 and §7 in
their simplest form (binomial / chi-square tests), so a bias page tested on this data has
something real to find.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from scipy import stats

from core.samples import (
    BIASED_MODEL,
    DIMENSIONS,
    GAMES,
    MODEL_NAMES,
    RANDOM_CLICKERS,
    SAMPLES_DIR,
    arena_chunks,
    arena_demo,
    arena_demo_truth,
    evalruns_demo,
    model_names,
    write_arena_csv,
    write_samples,
)
from core.samples.__main__ import main
from core.schema import OUTCOMES, RUN_COLUMNS, VOTE_COLUMNS

SIGNIFICANT = 1e-6  # p-value every planted effect must reach at 20k votes
DECISIVE = ("model_a", "model_b")


@pytest.fixture(scope="module")
def votes() -> pd.DataFrame:
    return arena_demo()


@pytest.fixture(scope="module")
def truth():
    return arena_demo_truth()


def _read(name: str) -> pd.DataFrame:
    return pd.read_csv(SAMPLES_DIR / name)


# --- determinism and committed files -------------------------------------------------------------


def test_same_seed_same_frame_different_seed_different_frame():
    pdt.assert_frame_equal(arena_demo(3000, 7, seed=3), arena_demo(3000, 7, seed=3))
    assert not arena_demo(3000, 7, seed=3).equals(arena_demo(3000, 7, seed=4))
    pdt.assert_frame_equal(evalruns_demo(seed=5), evalruns_demo(seed=5))
    assert not evalruns_demo(seed=5).equals(evalruns_demo(seed=6))
    assert arena_demo_truth(7, 3) == arena_demo_truth(7, 3)
    assert arena_demo_truth(7, 3) != arena_demo_truth(7, 4)


def test_committed_csvs_equal_fresh_generation(votes):
    pdt.assert_frame_equal(_read("arena_demo.csv"), votes)
    pdt.assert_frame_equal(_read("evalruns_demo.csv"), evalruns_demo(seed=0))


def test_write_samples_is_byte_identical_to_committed_files(tmp_path):
    written = write_samples(tmp_path)
    assert set(written) == {"arena", "evalruns"}
    for path in written.values():
        assert path.read_bytes() == (SAMPLES_DIR / path.name).read_bytes()
    assert (SAMPLES_DIR / "arena_demo.csv").stat().st_size < 3_000_000


# --- contracts ----------------------------------------------------------------------------------


def test_arena_columns_and_domains(votes, truth):
    assert tuple(votes.columns) == VOTE_COLUMNS
    assert len(votes) == 20_000
    required = [c for c in VOTE_COLUMNS if c != "golden_answer"]
    assert not votes[required].isna().any().any()
    assert set(votes["winner"]) <= set(OUTCOMES)
    assert (votes["model_a"] != votes["model_b"]).all()
    assert set(votes["model_a"]) | set(votes["model_b"]) == set(truth.models) == set(MODEL_NAMES[:12])
    assert votes["vote_id"].is_unique and votes["vote_id"].iloc[0] == "v0000001"
    assert set(votes["game_id"]) == set(GAMES) and set(votes["dimension"]) == set(DIMENSIONS)
    assert votes["annotator_id"].nunique() == 60
    assert (votes["weight"] == 1.0).all()
    assert (votes["response_time_s"] > 0).all()
    assert (votes[["len_a", "len_b"]] >= 1).all().all() and votes["len_a"].dtype == np.int64
    # Categories are a property of the query, not of the vote.
    assert (votes.groupby("query_id")["category"].nunique() == 1).all()
    assert votes["query_id"].str.startswith("q").sum() > 0


def test_arena_timestamps_sorted_iso_utc_within_four_weeks(votes):
    ts = pd.to_datetime(votes["timestamp"], format="%Y-%m-%dT%H:%M:%SZ", utc=True)
    assert ts.is_monotonic_increasing
    assert ts.min() >= pd.Timestamp("2026-10-01", tz="UTC")
    assert ts.max() < pd.Timestamp("2026-10-29", tz="UTC")


def test_outcome_mix_and_golden_rows(votes):
    share = votes["winner"].value_counts(normalize=True)
    assert 0.12 < share["tie"] < 0.19 and 0.03 < share["tie (bothbad)"] < 0.07
    golden = votes[votes["is_golden"]]
    assert 0.02 < len(golden) / len(votes) < 0.04
    assert set(golden["golden_answer"]) == set(DECISIVE)
    assert golden["query_id"].str.startswith("gold-").all() and golden["query_id"].nunique() <= 20
    assert votes.loc[~votes["is_golden"], "golden_answer"].isna().all()


def test_evalruns_contract_and_story():
    for seed in range(5):
        runs = evalruns_demo(seed=seed)
        assert tuple(runs.columns) == RUN_COLUMNS and len(runs) == 36
        assert runs["score"].between(0, 1).all() and (runs["score"] == runs["score"].round(4)).all()
        assert (runs.groupby("model_id")["task_id"].nunique() == 12).all()
        assert (runs.groupby("category")["task_id"].nunique() == 3).all()
        means = runs.groupby("model_id")["score"].mean()
        by_cat = runs.pivot_table(index="category", columns="model_id", values="score").idxmax(axis=1)
        # One model clearly best overall, but not best in every category.
        assert means.idxmax() == "atlas-70b" and means.max() - means.drop("atlas-70b").max() > 0.05
        assert (by_cat != "atlas-70b").any()


# --- planted biases (docs/methods.md §4, §7) -------------------------------------------------------------


def test_position_bias_left_wins_more(votes):
    decisive = votes[~votes["is_golden"] & votes["winner"].isin(DECISIVE)]
    k = int((decisive["winner"] == "model_a").sum())
    assert k / len(decisive) > 0.5
    assert stats.binomtest(k, len(decisive), 0.5).pvalue < SIGNIFICANT


def test_biased_model_shown_left_and_early(votes, truth):
    assert truth.biased_model == BIASED_MODEL == MODEL_NAMES[2]
    shown = pd.concat([votes["model_a"], votes["model_b"]]).value_counts()
    left_share = votes["model_a"].value_counts() / shown
    assert 0.70 < left_share[BIASED_MODEL] < 0.80
    assert left_share.drop(BIASED_MODEL).between(0.44, 0.56).all()
    # docs/methods.md §4 period split: early iff before the median timestamp (ISO strings sort as times).
    seconds = pd.to_datetime(votes["timestamp"], utc=True).astype("int64")
    early = seconds < np.median(seconds)
    involved = (votes["model_a"] == BIASED_MODEL) | (votes["model_b"] == BIASED_MODEL)
    assert 0.70 < early[involved].mean() < 0.80
    for model in truth.models:
        if model != BIASED_MODEL:
            assert 0.42 < early[(votes["model_a"] == model) | (votes["model_b"] == model)].mean() < 0.58


def test_longer_answer_wins_more(votes):
    decisive = votes[
        ~votes["is_golden"] & votes["winner"].isin(DECISIVE) & (votes["len_a"] != votes["len_b"])
    ]
    longer = int(((decisive["len_a"] > decisive["len_b"]) == (decisive["winner"] == "model_a")).sum())
    assert longer / len(decisive) > 0.5
    assert stats.binomtest(longer, len(decisive), 0.5).pvalue < SIGNIFICANT


def test_pairing_is_non_uniform_but_connected(votes, truth):
    models = sorted(truth.models)
    pair = pd.Series(list(zip(np.minimum(votes["model_a"], votes["model_b"]),
                              np.maximum(votes["model_a"], votes["model_b"]))))
    counts = pair.value_counts()
    every = [counts.get((a, b), 0) for i, a in enumerate(models) for b in models[i + 1:]]
    assert len(every) == 66 and min(every) >= 5
    assert stats.chisquare(every).pvalue < SIGNIFICANT


def test_random_clickers_are_fast_and_inaccurate(votes, truth):
    assert truth.random_clickers == RANDOM_CLICKERS
    clicker = votes["annotator_id"].isin(RANDOM_CLICKERS)
    assert votes.loc[clicker, "response_time_s"].median() < 3.0
    assert votes.loc[~clicker, "response_time_s"].median() > 15.0
    # docs/methods.md §7 fast-answer rule: every clicker fails it, no careful annotator does.
    fast = (votes["response_time_s"] < 3.0).groupby(votes["annotator_id"]).mean()
    assert (fast[list(RANDOM_CLICKERS)] > 0.30).all()
    assert (fast.drop(list(RANDOM_CLICKERS)) <= 0.30).all()
    golden = votes[votes["is_golden"]]
    correct = golden["winner"] == golden["golden_answer"]
    gold_clicker = golden["annotator_id"].isin(RANDOM_CLICKERS)
    assert correct[gold_clicker].mean() < 0.5 < 0.8 < correct[~gold_clicker].mean()
    assert (golden.loc[gold_clicker, "annotator_id"].value_counts() >= 3).all()


def test_win_rates_follow_true_strengths(votes, truth):
    rated = votes[~votes["is_golden"]]
    left_score = rated["winner"].map({"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5})
    scores = pd.concat([pd.Series(left_score.to_numpy(), index=rated["model_a"].to_numpy()),
                        pd.Series(1.0 - left_score.to_numpy(), index=rated["model_b"].to_numpy())])
    win_rate = scores.groupby(level=0).mean()
    strength = pd.Series(truth.strengths)
    assert stats.spearmanr(win_rate[strength.index], strength).statistic > 0.8


def test_truth_strength_spread_and_dimension_rank_swaps(truth):
    spread = max(truth.strengths.values()) - min(truth.strengths.values())
    assert 250 < spread < 350
    # Sorted names must not give away the strength order.
    assert sorted(truth.models) != sorted(truth.models, key=truth.strengths.get, reverse=True)
    orders = {tuple(sorted(truth.models, key=truth.stratum_strengths(*key).get)) for key in truth.offsets}
    assert len(orders) > 1


# --- sizes, chunks, names, validation, CLI ------------------------------------------------------


def test_one_million_votes_fifty_models():
    started = time.perf_counter()
    big = arena_demo(1_000_000, 50)
    elapsed = time.perf_counter() - started
    assert len(big) == 1_000_000
    assert pd.unique(np.concatenate([big["model_a"], big["model_b"]])).size == 50
    assert big["vote_id"].iloc[-1] == "v1000000"
    assert elapsed < 15  # generous: ~1.5 s on the 2-core reference machine


def test_chunked_writer_matches_single_frame_and_stays_ordered(tmp_path):
    one = write_arena_csv(tmp_path / "one.csv", 3000, 6, seed=2, chunk_size=5000)
    pdt.assert_frame_equal(pd.read_csv(one), arena_demo(3000, 6, seed=2))
    many = pd.read_csv(write_arena_csv(tmp_path / "many.csv", 3001, 6, seed=2, chunk_size=700))
    again = write_arena_csv(tmp_path / "again.csv", 3001, 6, seed=2, chunk_size=700)
    assert again.read_bytes() == (tmp_path / "many.csv").read_bytes()
    assert len(many) == 3001 and many["vote_id"].is_unique
    assert many["timestamp"].is_monotonic_increasing
    assert sum(len(c) for c in arena_chunks(3001, 6, seed=2, chunk_size=700)) == 3001


def test_model_names_extend_past_the_list():
    names = model_names(len(MODEL_NAMES) + 2)
    assert names[: len(MODEL_NAMES)] == MODEL_NAMES
    assert names[-2:] == (f"model-{len(MODEL_NAMES) + 1:03d}", f"model-{len(MODEL_NAMES) + 2:03d}")
    assert len(set(names)) == len(names)


def test_empty_and_tiny_frames():
    empty = arena_demo(0)
    assert tuple(empty.columns) == VOTE_COLUMNS and len(empty) == 0
    tiny = arena_demo(5, 3, start="2026-01-31T23:59:00Z")
    assert len(tiny) == 5 and tiny["timestamp"].iloc[0] >= "2026-01-31T23:59:00Z"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_votes": -1}, "n_votes"),
        ({"n_votes": 1.5}, "n_votes"),
        ({"n_models": 2}, "n_models"),
        ({"seed": -1}, "seed"),
        ({"seed": True}, "seed"),
        ({"start": "not a date"}, "start"),
    ],
)
def test_invalid_arguments_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        arena_demo(**{"n_votes": 10, **kwargs})


def test_invalid_chunk_size_and_evalruns_seed(tmp_path):
    with pytest.raises(ValueError, match="chunk_size"):
        write_arena_csv(tmp_path / "x.csv", 10, chunk_size=0)
    with pytest.raises(ValueError, match="seed"):
        evalruns_demo(seed=-3)


def test_cli_writes_big_file_and_rejects_options_without_out(tmp_path, capsys):
    out = tmp_path / "big.csv"
    assert main(["--votes", "500", "--models", "5", "--seed", "2", "--out", str(out)]) == 0
    pdt.assert_frame_equal(pd.read_csv(out), arena_demo(500, 5, seed=2))
    assert "wrote" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--votes", "500"])
    with pytest.raises(SystemExit):
        main(["--models", "2", "--out", str(tmp_path / "bad.csv")])
    assert not (tmp_path / "bad.csv").exists()


def test_samples_dir_is_repository_data_folder():
    assert SAMPLES_DIR == Path(__file__).resolve().parents[1] / "data" / "samples"


def test_bt_votes_recover_their_ratings():
    """core.samples.bt_votes: exact BT with ties; the half-tie MLE is consistent for true_elo."""
    import numpy as np

    from core.ranking import bradley_terry as bt
    from core.ranking.cells import compress, win_matrix
    from core.samples import bt_votes

    votes = bt_votes(400_000, 8, tie_share=0.10, seed=3)
    assert votes["left"].shape == (400_000,) and (votes["left"] != votes["right"]).all()
    assert abs((votes["outcome"] == 2).mean() - 0.10) < 0.005
    again = bt_votes(400_000, 8, tie_share=0.10, seed=3)
    assert all(np.array_equal(votes[k], again[k]) for k in ("left", "right", "outcome"))
    cells = compress(votes["left"], votes["right"], votes["outcome"], votes["models"])
    elo = bt.fit(win_matrix(cells), votes["models"]).elo
    # ~100,000 votes per model: Elo SE ≈ 1.5, so 8 Elo is a > 5 SE bound
    np.testing.assert_allclose(elo, votes["true_elo"], atol=8.0)
