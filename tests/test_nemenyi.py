"""The wording of p-values (core.formats) and of Nemenyi results at any number of models (core.leaderboard.nemenyi)."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from core.formats import p_text, p_value
from core.leaderboard.nemenyi import GROUPS_LISTED, PAIRS_LISTED, cd_groups, nemenyi_sentence
from core.leaderboard.render import friedman_sentences
from core.stats.friedman import friedman


@pytest.mark.parametrize("p, text, cell", [
    (0.0, "p < 1e-16", "< 1e-16"), (1e-300, "p < 1e-16", "< 1e-16"), (2.34e-5, "p = 2.3e-05", "2.3e-05"),
    (0.0312, "p = 0.031", "0.031"), (1.0, "p = 1.000", "1.000"), (math.nan, "p undefined", "–"),
    (None, "p undefined", "–")])
def test_p_values_never_read_zero(p, text, cell):
    assert p_text(p) == text and p_value(p) == cell


def many_models(k: int, n_tasks: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ability = np.linspace(0.2, 0.8, k)[:, None]
    scores = np.clip(ability + rng.normal(0, 0.1, (k, n_tasks)), 0, 1)
    return pd.DataFrame(scores, index=[f"org/model-{i:03d}" for i in range(k)])


def test_sixty_models_get_a_summary_of_groups_not_a_pair_list():
    f = friedman(many_models(60), 0.05)
    assert f.reject and len(f.different_pairs) > PAIRS_LISTED and f.p_value == 0.0  # underflows to 0
    sentences = friedman_sentences(f)
    text = " ".join(sentences)
    assert "p = 0;" not in text and "p = 0 " not in text and "p < 1e-16" in text
    nemenyi = sentences[-1]
    assert f"{len(f.different_pairs):,} of 1,770 pairs differ" in nemenyi
    assert " vs " not in nemenyi and len(nemenyi) < 900
    groups = cd_groups(f.mean_ranks, f.cd)
    assert f"{len(groups)} such groups" in nemenyi
    assert len(re.findall(r"ranks \d+–\d+ \(", nemenyi)) == min(len(groups), GROUPS_LISTED)


def test_few_differing_pairs_are_named():
    ranks = {"a": 1.0, "b": 1.2, "c": 3.0}
    text = nemenyi_sentence(ranks, 1.0, (("a", "c"), ("b", "c")), 0.05)
    assert text == "Nemenyi critical difference 1.000 at α = 0.05: 2 of 3 pairs differ (a vs c, b vs c)."
    assert nemenyi_sentence(ranks, 5.0, (), 0.05).endswith("0 of 3 pairs differ.")


def test_groups_name_their_rank_range_and_models_apart():
    ranks = {f"m{i:02d}": float(i) for i in range(1, 31)}
    pairs = tuple((a, b) for a in ranks for b in ranks if a < b and abs(ranks[a] - ranks[b]) > 2.5)
    text = nemenyi_sentence(ranks, 2.5, pairs, 0.05)
    assert "ranks 1–3 (m01, m02, m03)" in text and f"and {28 - GROUPS_LISTED} more" in text
    spaced = {"a": 1.0, "b": 1.5, "c": 9.0, "d": 20.0, "e": 30.0, "f": 40.0, "g": 50.0}
    far = tuple((x, y) for x in spaced for y in spaced if x < y and abs(spaced[x] - spaced[y]) > 1)
    assert "5 models stand apart from all others." in nemenyi_sentence(spaced, 1.0, far, 0.05)
