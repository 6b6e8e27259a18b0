"""Each real public file of ../shared/data read as the README's "Reading real files" says, checked
against the numbers a user would compare (skipped when ../shared is absent).

Published numbers: AlpacaEval leaderboards in github.com/tatsu-lab/alpaca_eval
(src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv and
data_AlpacaEval/alpaca_eval_gpt4_leaderboard.csv, column win_rate); MMLU-Pro and PandaLM from the
datasets' PROVENANCE.md.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.annotators.agreement import items_from_votes, pairwise_cohen
from core.cli import main
from core.io import InputError, load, load_lm_eval, propose_mapping
from core.io.mapping import peek
from tests.conftest import shared_file
from tests.reference_values import (
    ALPACA1_PUBLISHED,
    ALPACA2_PUBLISHED,
    MMLU_PRO_LLAMA3_70B_EXPECTED_GUESS,
    MMLU_PRO_LLAMA3_70B_PUBLISHED,
    PANDALM_PAIR_KAPPAS,
)

WIN_RATE_ATOL = 1e-6  # percentage points; the published CSVs carry 8-15 digits
# AlpacaEval 2.0 and 1.0 published win rates (ALPACA2_PUBLISHED, ALPACA1_PUBLISHED): tests/reference_values.py.
ALPACA1_OUTCOMES = {"1.0": "model_a", "2.0": "model_b", "1.5": "tie", "0": "tie", "0.0": "tie", "": "drop"}


def test_alpaca_eval_2_preferences_proposed_mapping_and_published_win_rates():
    path = shared_file("alpaca_eval_annotations/preferences.csv")
    assert load(path).kind == "preferences"  # detection: model, baseline and a preference (tests/test_judge_alpaca.py)
    proposal = propose_mapping(peek(path))  # read as a score table instead, as the proposal says
    assert proposal.options() == ("--kind eval_runs --map model_id=model --map task_id=instruction_id "
                                  "--map score=score --map category=dataset")
    loaded = load(path, kind=proposal.kind, columns=proposal.columns)
    frame = loaded.frame
    assert len(frame) == 46680 and frame["model_id"].nunique() == 58
    assert sorted(frame["category"].unique()) == ["helpful_base", "koala", "oasst", "selfinstruct", "vicuna"]
    win_rates = frame.groupby("model_id")["score"].mean() * 100
    for model, published in ALPACA2_PUBLISHED.items():
        assert win_rates[model] == pytest.approx(published, abs=WIN_RATE_ATOL), model


def test_alpaca_eval_1_votes_with_empty_winners_dropped():
    path = shared_file("alpaca_eval_annotations/preferences_alpaca_eval1_gpt4_vs_text_davinci_003.csv")
    proposal = propose_mapping(peek(path))
    assert proposal.kind == "votes" and proposal.columns["model_a"] == "baseline"
    assert "" in proposal.open_values  # the empty winners still need a meaning
    loaded = load(path, kind="votes", columns=proposal.columns, outcomes=ALPACA1_OUTCOMES)
    assert "61 rows dropped by the outcome mapping" in " ".join(loaded.notes)
    frame = loaded.frame
    assert len(frame) == 42665 - 61
    model_points = frame["winner"].astype(str).map({"model_b": 1.0, "model_a": 0.0, "tie": 0.5})
    win_rates = model_points.groupby(frame["model_b"].astype(str)).mean() * 100
    for model, published in ALPACA1_PUBLISHED.items():
        assert win_rates[model] == pytest.approx(published, abs=WIN_RATE_ATOL), model


def mmlu_llama3_70b_reference() -> tuple[float, float]:
    """From the raw wide file: correct / 12,032 (unanswered = wrong) and with 1/n_options expected
    credit for the unanswered (PROVENANCE: 52.73 %, the README's 52.78 % uses a seeded random guess)."""
    raw = pd.read_csv(shared_file("mmlu_pro_per_question/correct_matrix_wide.csv"), keep_default_na=False)
    questions = pd.read_csv(shared_file("mmlu_pro_per_question/questions.csv"))
    column = raw["Meta-Llama-3-70B"]
    correct = (column == "1").sum()
    unanswered = raw.loc[column == "", "question_id"]
    guess = (1 / questions.set_index("question_id").loc[unanswered, "n_options"]).sum()
    return correct / len(raw) * 100, (correct + guess) / len(raw) * 100


@pytest.mark.parametrize("relative, columns", [
    ("mmlu_pro_per_question/correct_matrix_wide.csv", None),
    ("mmlu_pro_per_question/predictions_long.csv", {"model_id": "model", "task_id": "question_id", "score": "correct"}),
])
def test_mmlu_pro_accuracy_as_published_with_missing_zero(relative, columns):
    zero = load(shared_file(relative), columns=columns, missing="zero")
    accuracy = zero.frame.groupby("model_id")["score"].mean() * 100
    wrong_when_unanswered, with_guess = mmlu_llama3_70b_reference()
    assert accuracy["Meta-Llama-3-70B"] == pytest.approx(wrong_when_unanswered, abs=1e-9)
    assert with_guess == pytest.approx(MMLU_PRO_LLAMA3_70B_EXPECTED_GUESS, abs=0.005)  # PROVENANCE
    assert abs(with_guess - MMLU_PRO_LLAMA3_70B_PUBLISHED) < 0.1  # the published figure, up to the random guesses' luck
    assert zero.frame.groupby("model_id").size().eq(12032).all()
    assert "scored 0 (missing=zero)" in " ".join(zero.notes)
    skip = load(shared_file(relative), columns=columns)  # the default: unanswered = not scored
    assert skip.frame.groupby("model_id")["score"].mean()["Meta-Llama-3-70B"] == pytest.approx(0.56, abs=0.005)
    assert "missing=skip, the default" in " ".join(skip.notes)


def test_mmlu_pro_wide_and_long_are_read_alike():
    columns = {"model_id": "model", "task_id": "question_id", "score": "correct"}
    for rule in ("skip", "zero"):
        wide = load(shared_file("mmlu_pro_per_question/correct_matrix_wide.csv"), missing=rule).frame
        long = load(shared_file("mmlu_pro_per_question/predictions_long.csv"), columns=columns, missing=rule).frame
        key = ["model_id", "task_id"]
        wide = wide.astype({"task_id": str}).sort_values(key).reset_index(drop=True)
        long = long.astype({"task_id": str}).sort_values(key).reset_index(drop=True)
        assert len(wide) == len(long), rule
        np.testing.assert_array_equal(wide["score"].to_numpy(), long["score"].to_numpy())


def test_llmfao_query_id_from_id_and_agreement_found():
    loaded = load(shared_file("llmfao/crowd-comparisons.csv"))
    assert "column 'id' read as query_id" in " ".join(loaded.notes)
    items = items_from_votes(loaded.frame)
    pairs = pairwise_cohen(items)
    assert items["query_id"].nunique() == 2139  # PROVENANCE: 2139 distinct pairs, 1-5 votes each
    assert len(pairs) > 0 and pairs["n_items"].sum() > 0  # items rated by two workers exist


def test_pandalm_one_vote_per_annotator_column():
    path = shared_file("pandalm_testset/testset-v1.json")
    with pytest.raises(InputError, match="--map pair=cmp_key --map winner=annotator1,annotator2,annotator3"):
        load(path)
    loaded = load(path, kind="votes", columns={"pair": "cmp_key", "winner": "annotator1,annotator2,annotator3",
                                                "query_id": "idx"}, outcomes={"0": "tie"})
    frame = loaded.frame
    assert len(frame) == 3 * 999
    assert frame["annotator_id"].value_counts().to_dict() == {f"annotator{k}": 999 for k in (1, 2, 3)}
    assert set(frame["model_a"].cat.categories) == {"bloom-7b", "cerebras-gpt-6.7B", "llama-7b", "opt-7b",
                                                    "pythia-6.9b"}
    kappas = pairwise_cohen(items_from_votes(frame)).set_index(["annotator_1", "annotator_2"])["kappa"]
    # PROVENANCE: Cohen's kappa per annotator pair reproduced as 0.852 / 0.879 / 0.862
    assert sorted(np.round(kappas.to_numpy(), 3)) == PANDALM_PAIR_KAPPAS


def test_lm_eval_folder_then_list_is_stored_once(store):
    folder = shared_file("pythia_opt_bloom_lmeval/original/evals")
    first = store.ingest(load_lm_eval([folder]))
    assert first.created
    files = sorted(folder.rglob("*.json"), reverse=True)
    again = store.ingest(load_lm_eval(files))
    assert not again.created and again.dataset.id == first.dataset.id
    assert "already stored" in again.summary()


def test_pythia_wide_leaderboard_from_the_cli(tmp_path, capsys):
    path = shared_file("pythia_opt_bloom_lmeval/zero_shot_acc_wide.csv")
    assert main(["leaderboard", str(path), "--bootstrap", "20", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "Every model is scored on all 65 tasks" in out and "missing=skip, the default" in out


def test_football_results_through_an_outcome_mapping():
    loaded = load(shared_file("bradleyterry2_classic/football.csv"), kind="votes",
                  columns={"model_a": "home", "model_b": "away", "winner": "result", "game_id": "season"},
                  outcomes={"1": "model_a", "-1": "model_b", "0": "tie"})
    frame = loaded.frame
    assert len(frame) == 1900 and frame["model_a"].cat.categories.size == 29  # PROVENANCE: 1900 = 5 x 380


def test_tulu_annotations_detected_kind_and_mapping_hint():
    path = shared_file("tulu1_human_eval/annotations.csv")
    with pytest.raises(InputError, match="--map winner=preference"):
        load(path)
