"""What a ranking says it could not settle (core.ranking.render): a fit stopped at its iteration limit,
a solver that gives up, comparisons that do not identify every rating; the page shows the same sentences."""

from __future__ import annotations

import json
from functools import partial

import pandas as pd
import pytest

import core.ranking.bradley_terry as bt
import core.ranking.schemes.davidson as davidson
from core.io.votes import votes_from_frame
from core.ranking import RankingError, RankSettings, rank_votes
from core.ranking.render import identifiability_note, to_json, to_markdown
from core.ranking.ties import fit_davidson
from pages._rankings_parts import warnings

NO_CI = RankSettings(ci="none")
# docs/methods.md §2, Reference D1: per pair (left, right, left wins, right wins, ties).
D1 = [("A", "B", 6, 3, 1), ("A", "C", 7, 2, 1), ("A", "D", 5, 1, 0), ("B", "C", 4, 4, 2), ("B", "D", 6, 2, 0),
      ("C", "D", 3, 3, 2)]


def d1_votes(extra=()) -> pd.DataFrame:
    rows = []
    for left, right, wins_l, wins_r, ties in [*D1, *extra]:
        rows += [(left, right, "model_a")] * wins_l + [(left, right, "model_b")] * wins_r
        rows += [(left, right, "tie")] * ties
    return votes_from_frame(pd.DataFrame(rows, columns=["model_a", "model_b", "winner"]), "D1")[0]


@pytest.fixture
def mm_with_three_iterations(monkeypatch):
    # MM on D1 needs far more than 3 iterations to reach max |π' − π| < 1e-6 (docs/methods.md §2).
    real_mm = bt.mm
    monkeypatch.setattr(bt, "mm", lambda w, prior=0.0, tol=bt.MM_TOL, max_iter=bt.MM_MAX_ITER:
                        real_mm(w, prior, tol, 3))


def test_an_mm_fit_stopped_at_its_iteration_limit_says_so(mm_with_three_iterations):
    ranking = rank_votes(d1_votes(), NO_CI)
    assert ranking.fit.converged is False and ranking.fit.iterations == 3
    params = json.loads(to_json(ranking))["params"]
    assert params["converged"] is False
    [note] = params["notes"]
    assert "iteration limit (3 iterations)" in note
    assert "> ⚠ The MM fit stopped at its iteration limit (3 iterations)" in to_markdown(ranking)
    assert any("iteration limit (3 iterations)" in warning for warning in warnings(ranking))


def test_a_converged_mm_fit_has_no_convergence_note():
    ranking = rank_votes(d1_votes(), NO_CI)
    assert ranking.fit.converged is True and ranking.fit.notes is None
    assert "notes" not in json.loads(to_json(ranking))["params"]
    assert "iteration limit" not in to_markdown(ranking) and warnings(ranking) == []


def test_a_davidson_fit_that_gives_up_is_refused_with_the_reason(monkeypatch):
    monkeypatch.setattr(davidson, "fit_davidson", partial(fit_davidson, max_iter=1))
    with pytest.raises(RankingError, match=r"Davidson tie model cannot be fitted.*did not converge.*--ties half"):
        rank_votes(d1_votes(), RankSettings(ties="davidson", ci="none"))


def test_the_identifiability_note_is_one_sentence_for_markdown_and_page():
    # docs/methods.md §2 non-identifiable example: D1 + model E losing 4–0 to A.
    ranking = rank_votes(d1_votes([("A", "E", 4, 0, 0)]), NO_CI)
    note = identifiability_note(ranking)
    assert note.startswith("Not identifiable: the comparisons do not connect every model in both directions")
    assert f"> ⚠ {note}" in to_markdown(ranking)
    assert warnings(ranking) == [note]
    assert identifiability_note(rank_votes(d1_votes(), NO_CI)) is None
