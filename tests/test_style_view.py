"""core.ranking.style_view: the coefficients, sentences, rank moves and notes the Rankings page and the
report show of a scheme-style ranking (docs/methods.md §11). Every expected value is recomputed from the
fitted Ranking's own numbers (its covariates and its plain ranking), never typed in."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from core.formats import dumps
from core.io.votes import votes_from_frame
from core.ranking import RankSettings, rank_votes
from core.ranking.schemes.style import available_features
from core.ranking.style_view import HOW_TO_GET, MOVERS_SHOWN, sentence, style_view
from core.ranking.types import RankingError
from tests.test_style_scheme import votes_with_texts

TOL = 1e-12


@pytest.fixture(scope="module")
def texts_votes() -> pd.DataFrame:
    return votes_from_frame(votes_with_texts(400, seed=3), "texts.csv")[0]


@pytest.fixture(scope="module")
def fitted(texts_votes):
    ranking = rank_votes(texts_votes, RankSettings(scheme="style", ci="sandwich", alpha=0.1))
    return ranking, style_view(ranking, available_features(texts_votes))


def test_coefficients_are_the_rankings_numbers_on_the_odds_scale(fitted):
    ranking, view = fitted
    z = norm.ppf(1 - 0.1 / 2)
    assert [c.feature for c in view.coefficients] == [c.name for c in ranking.covariates] == \
        ["length", "headers", "lists", "bold"]
    for c, cov in zip(view.coefficients, ranking.covariates):
        assert (c.estimate, c.se, c.mean, c.sd) == (cov.estimate, cov.se, cov.mean, cov.sd)
        # sandwich: the interval is estimate ± z·se at the settings' α (here 90%)
        np.testing.assert_allclose([c.ci_low, c.ci_high], [cov.estimate - z * cov.se, cov.estimate + z * cov.se],
                                   atol=1e-9)
        np.testing.assert_allclose([c.odds, c.odds_low, c.odds_high],
                                   np.exp([cov.estimate, c.ci_low, c.ci_high]), rtol=TOL)
        assert c.direction_known == (c.odds_low > 1 or c.odds_high < 1)
        assert c.sentence.startswith("One standard deviation more ") and "90% CI" in c.sentence
        assert f"by {c.odds:.2f} (90% CI {c.odds_low:.2f}–{c.odds_high:.2f})" in c.sentence
        assert f"sd {cov.sd:.2f}" in c.sentence
        assert ("the data cannot tell" in c.sentence) == (not c.direction_known)
    assert view.level == "90%" and view.interval == "sandwich (robust)"


def test_moves_are_plain_rank_to_controlled_rank(fitted):
    ranking, view = fitted
    plain = {r.model: r for r in ranking.plain.rows}
    assert [m.model for m in view.moves] == [r.model for r in ranking.rows]
    for move, row in zip(view.moves, ranking.rows):
        assert (move.controlled_rank, move.controlled_rating) == (row.rank, row.rating)
        assert (move.plain_rank, move.plain_rating) == (plain[row.model].rank, plain[row.model].rating)
        assert move.change == move.plain_rank - move.controlled_rank
    assert view.n_moved == sum(m.change != 0 for m in view.moves)
    changes = [abs(m.change) for m in view.movers]
    assert changes == sorted(changes, reverse=True) and all(changes) and len(view.movers) <= MOVERS_SHOWN


def test_texts_give_every_feature_and_no_note(fitted):
    _, view = fitted
    assert view.features == ("length", "headers", "lists", "bold")
    assert view.unavailable == () and view.dropped == () and view.notes == ()
    doc = view.as_dict()
    assert [c["feature"] for c in doc["coefficients"]] == list(view.features)
    assert all(math.isfinite(c["odds_low"]) for c in doc["coefficients"])


def test_lengths_only_say_which_features_are_missing_and_how_to_get_them():
    votes = votes_from_frame(pd.DataFrame({"model_a": list("ABCABCABCABC"), "model_b": list("BCACABBCACAB"),
                                           "winner": ["model_a", "model_b", "tie", "model_a"] * 3,
                                           "len_a": [10, 200, 30, 400, 50, 60, 70, 800, 90, 10, 11, 120],
                                           "len_b": [100, 20, 300, 40, 500, 6, 700, 80, 9, 100, 110, 12]}), "l.csv")[0]
    assert available_features(votes) == ("length", "position")
    ranking = rank_votes(votes, RankSettings(scheme="style", ci="sandwich"))
    view = style_view(ranking, available_features(votes))
    assert view.features == ("length",) and view.unavailable == ("headers", "lists", "bold")
    [note] = view.notes  # the scheme's own "not controlled for" note is not repeated
    assert note.startswith("Not available: headers, lists, bold") and HOW_TO_GET in note
    # without the availability, the scheme's note still says it
    [own] = style_view(ranking).notes
    assert own.startswith("Not controlled for headers, lists, bold")


def test_chosen_features_with_position(texts_votes):
    ranking = rank_votes(texts_votes, RankSettings(scheme="style", ci="sandwich", features=("lists", "position")))
    view = style_view(ranking, available_features(texts_votes))
    assert [c.feature for c in view.coefficients] == ["lists", "position"]
    position = view.coefficients[1]
    assert position.sentence.startswith("Being shown on the left multiplies the odds of winning by "
                                        f"{math.exp(ranking.covariates[1].estimate):.2f}")


def test_bootstrap_intervals_are_the_fits_percentiles(texts_votes):
    ranking = rank_votes(texts_votes, RankSettings(scheme="style", ci="bootstrap", replicates=60, seed=4))
    view = style_view(ranking)
    for c, cov in zip(view.coefficients, ranking.covariates):
        assert (c.ci_low, c.ci_high) == (cov.low, cov.high) and cov.low < cov.estimate < cov.high
        np.testing.assert_allclose([c.odds_low, c.odds_high], np.exp([cov.low, cov.high]), rtol=TOL)


def test_sentence_words():
    said = sentence("length", 1.7622, 1.55, 2.0, 0.4113, "95%")
    assert said == ("One standard deviation more relative length (d = (a − b)/(a + b + 1), sd 0.41: one answer "
                    "about 2.4 times as long as the other) multiplies the odds of winning by 1.76 (95% CI 1.55–2.00).")
    unsure = sentence("headers", 1.06, 0.98, 1.14, 0.05, "95%")
    assert unsure.endswith("(95% CI 0.98–1.14): the interval covers 1, so the data cannot tell whether more headers "
                           "help or hurt.")
    assert sentence("bold", 0.9, math.nan, math.nan, 0.1, "95%").endswith("multiplies the odds of winning by 0.90.")
    assert sentence("length", 1.07, 0.99, 1.15, 0.74, "95%").endswith("whether longer answers help or hurt.")
    assert sentence("position", 1.2, 1.1, 1.3, 0.0, "90%") == ("Being shown on the left multiplies the odds of "
                                                               "winning by 1.20 (90% CI 1.10–1.30).")


def test_other_schemes_are_refused(texts_votes):
    with pytest.raises(RankingError, match="scheme style"):
        style_view(rank_votes(texts_votes, RankSettings(scheme="adjusted", ci="none")))


def test_no_intervals_are_null_in_the_data(texts_votes):
    view = style_view(rank_votes(texts_votes, RankSettings(scheme="style", ci="none")))
    for c, data in zip(view.coefficients, view.as_dict()["coefficients"]):
        assert math.isnan(c.odds_low) and not c.direction_known and "CI" not in c.sentence
        assert (data["ci_low"], data["odds_high"]) == (None, None) and data["odds"] == c.odds
    dumps(view.as_dict())  # the one door out refuses NaN: nothing undefined is left
