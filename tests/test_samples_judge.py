"""The demo judged preferences (core.samples.judge): reproducible, the committed file is what the generator
writes, and the story it is built to tell holds (the judge rewards length)."""

from __future__ import annotations

import numpy as np
import pandas.testing as pdt
import pytest

from core.samples.files import SAMPLES_DIR
from core.samples.judge import BASELINE, JUDGE_MODELS, JUDGE_SAMPLE, judge_demo, write_judge_sample
from core.validation import SettingError


def test_reproducible_and_seed_dependent():
    pdt.assert_frame_equal(judge_demo(seed=3), judge_demo(seed=3))
    assert not judge_demo(seed=3).equals(judge_demo(seed=4))


def test_committed_file_is_byte_identical_to_a_fresh_write(tmp_path):
    path = write_judge_sample(tmp_path)
    assert path.read_bytes() == (SAMPLES_DIR / JUDGE_SAMPLE).read_bytes()


def test_contract_columns_and_domains():
    frame = judge_demo()
    assert list(frame.columns) == ["model", "baseline", "query_id", "category", "preference", "len_model",
                                   "len_baseline", "judge"]
    assert len(frame) == len(JUDGE_MODELS) * 120 and set(frame["baseline"]) == {BASELINE}
    assert frame["preference"].between(0, 1).all() and (frame[["len_model", "len_baseline"]] > 0).all().all()
    assert not frame.duplicated(["model", "query_id"]).any()


def test_the_judge_rewards_length():
    frame = judge_demo()
    longer = np.sign(frame["len_model"] - frame["len_baseline"])
    won = frame["preference"] > 0.5
    # Within each model, answers longer than the baseline's win more often than shorter ones.
    assert won[longer > 0].mean() > won[longer < 0].mean() + 0.1
    raw = frame.groupby("model")["preference"].mean()
    assert raw["verbose-7b"] > raw["echo-baseline"]  # lower ability, higher raw rate: its length carries it


@pytest.mark.parametrize("kwargs", [{"n_prompts": 1}, {"seed": -1}])
def test_bad_arguments_are_named(kwargs):
    with pytest.raises(SettingError, match=next(iter(kwargs))):
        judge_demo(**kwargs)
