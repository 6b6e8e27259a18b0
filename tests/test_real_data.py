"""Real public datasets from ../shared/data load as a user would load them (skipped when absent).

Expected counts come from each dataset's PROVENANCE.md.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.io import load, load_lm_eval
from core.schema import STYLE_COUNT_COLUMNS
from tests.conftest import shared_file

TULU_OUTCOMES = {"a-is-better": "model_a", "a-is-slightly-better": "model_a",
                 "b-is-better": "model_b", "b-is-slightly-better": "model_b", "tie": "tie"}


def test_llmfao_crowd_comparisons_as_is(store):
    path = shared_file("llmfao/crowd-comparisons.csv")
    loaded = load(path)
    assert loaded.kind == "votes"
    frame = loaded.frame
    # PROVENANCE: 8931 rows, 124 workers, left won 2911, right 2549, tie 3471; 59 models.
    assert len(frame) == 8931
    assert frame["annotator_id"].nunique() == 124
    assert frame["winner"].value_counts().to_dict() == {"tie": 3471, "model_a": 2911, "model_b": 2549,
                                                        "tie (bothbad)": 0}
    models = set(frame["model_a"].cat.categories)
    assert len(models) == 59
    raw = pd.read_csv(path)
    assert (frame["model_a"].astype(str).to_numpy() == raw["left"].to_numpy()).all()
    assert any("worker" in n for n in loaded.notes)
    back = store.load(store.ingest(loaded).dataset.id)
    pd.testing.assert_frame_equal(back, frame)


def test_tulu_annotations_through_a_mapping(store):
    path = shared_file("tulu1_human_eval/annotations.csv")
    loaded = load(path, columns={"winner": "preference", "query_id": "instance_id"}, outcomes=TULU_OUTCOMES)
    frame = loaded.frame
    # PROVENANCE: 1150 judgements, 16 evaluators, 4 models; a-slot wins 423 vs b-slot 351.
    assert len(frame) == 1150
    assert frame["annotator_id"].nunique() == 16
    assert set(frame["model_a"].cat.categories) == {"tulu_65B", "tulu_7B", "tulu_human_only_65B", "chatgpt"}
    counts = frame["winner"].value_counts()
    assert (counts["model_a"], counts["model_b"], counts["tie"]) == (423, 351, 1150 - 423 - 351)
    assert frame["query_id"].nunique() == 332
    assert str(frame["timestamp"].dtype) == "datetime64[ns, UTC]"
    assert frame["timestamp"].min().date().isoformat() >= "2023-05-18"
    assert frame["timestamp"].max().date().isoformat() <= "2023-06-04"
    # from completion_a / completion_b: character lengths, an empty completion counts 0
    raw = pd.read_csv(path, keep_default_na=False)
    np.testing.assert_array_equal(frame["len_a"].to_numpy(), raw["completion_a"].str.len().to_numpy())
    np.testing.assert_array_equal(frame["len_b"].to_numpy(), raw["completion_b"].str.len().to_numpy())
    # the per-side style counts (scheme style) are counted at load and stored with the votes
    assert set(STYLE_COUNT_COLUMNS) <= set(frame.columns) and frame[list(STYLE_COUNT_COLUMNS)].notna().all().all()
    back = store.load(store.ingest(loaded, name="tulu").dataset.id)
    pd.testing.assert_frame_equal(back, frame)


def test_tulu_without_mapping_says_what_is_missing():
    path = shared_file("tulu1_human_eval/annotations.csv")
    with pytest.raises(ValueError, match=r"(?s)missing required column for votes.*preference.*'winner'"):
        load(path)


def test_lm_evaluation_harness_results(store):
    folder = shared_file("pythia_opt_bloom_lmeval/original/evals")
    loaded = load_lm_eval([folder])
    frame = loaded.frame
    # 45 files: 16 Pythia zero-shot + 16 five-shot, 8 OPT, 5 BLOOM; 65 tasks common to all.
    assert loaded.kind == "eval_runs"
    assert frame["model_id"].nunique() == 45
    assert frame["model_id"].str.endswith("(5-shot)").groupby(frame["model_id"]).first().sum() == 16
    assert frame["score"].between(0, 1).all()
    assert frame["stderr"].notna().all()
    # Cross-check against the dataset's own flattening (zero_shot_acc_wide.csv: 29 models x 65 tasks).
    wide = pd.read_csv(shared_file("pythia_opt_bloom_lmeval/zero_shot_acc_wide.csv")).set_index("model")
    opt = frame[frame["model_id"] == "facebook/opt-1.3b"].set_index("task_id")["score"]
    common = wide.columns.intersection(opt.index)
    assert len(common) == 65
    np.testing.assert_allclose(opt[common].to_numpy(), wide.loc["opt-1.3b", common].to_numpy(), rtol=1e-12)
    back = store.load(store.ingest(loaded).dataset.id)
    pd.testing.assert_frame_equal(back, frame)


def test_mmlu_pro_wide_score_table(store):
    path = shared_file("mmlu_pro_per_question/correct_matrix_wide.csv")
    loaded = load(path)
    frame = loaded.frame
    assert loaded.kind == "eval_runs"
    assert frame["model_id"].nunique() == 29
    assert frame["task_id"].nunique() == 12032
    assert set(np.unique(frame["score"])) <= {0.0, 1.0}
    assert frame.groupby("task_id")["category"].nunique().max() == 1
    raw = pd.read_csv(path)
    scored = int(raw.drop(columns=["question_id", "category"]).notna().to_numpy().sum())
    assert len(frame) == scored  # every NA / empty cell is "not scored", nothing else is dropped
    means = frame.groupby("model_id")["score"].mean()
    expected = raw.drop(columns=["question_id", "category"]).mean()
    np.testing.assert_allclose(means[expected.index].to_numpy(), expected.to_numpy(), rtol=1e-12)
    info = store.ingest(loaded).dataset
    assert info.rows == len(frame)


def test_pythia_wide_by_model(store):
    loaded = load(shared_file("pythia_opt_bloom_lmeval/zero_shot_acc_wide.csv"))
    assert loaded.kind == "eval_runs"
    assert (loaded.frame["model_id"].nunique(), loaded.frame["task_id"].nunique()) == (29, 65)
