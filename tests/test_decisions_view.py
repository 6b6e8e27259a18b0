"""core.decisions.view: everything the Robustness tab draws, in one call, and a reason instead of an exception."""

from __future__ import annotations

import io

import pandas as pd

from core.decisions.view import model_names, robustness_view
from core.io.votes import votes_from_frame
from core.ranking.request import prepare_votes
from tests.reference_values import ROBUSTNESS_SIXTY_FORTY as SIXTY_FORTY


def prepared(rows, columns=("model_a", "model_b", "winner")):
    frame, _ = votes_from_frame(pd.DataFrame(rows, columns=list(columns)), "test votes")
    return prepare_votes(frame, "keep")


def sixty_forty(annotated: bool = True):
    rows = ([("A", "B", "model_a", "ann1")] * SIXTY_FORTY["a_wins"]
            + [("A", "B", "model_b", "ann2")] * SIXTY_FORTY["b_wins"])
    return prepared(rows, ("model_a", "model_b", "winner", "annotator_id"))


def test_the_known_answer_in_one_view():
    view = robustness_view(sixty_forty())
    assert view.reason is None and view.found
    assert view.result.flip_votes == SIXTY_FORTY["flip_votes"]
    assert view.headline.startswith(f"Dropping {SIXTY_FORTY['flip_votes']} of 100 votes (21.000%) puts B ahead of A")
    assert "confirms" in view.headline and view.search_note.startswith("Every smaller set")
    ratings = view.ratings.set_index("Model")
    assert list(ratings.index) == ["A", "B"]
    assert ratings.loc["B", "Rating after"] > ratings.loc["A", "Rating after"]
    assert (ratings["Change"] == ratings["Rating after"] - ratings["Rating before"]).all()
    assert view.who["Annotator"].to_dict("records") == [{"Annotator": "ann1", "Votes": 21}]
    assert "Week (ISO)" not in view.who  # no timestamps
    assert "timestamp" not in view.votes and "weight" not in view.votes  # columns without a value are left out
    listed = pd.read_csv(io.StringIO(view.csv))
    assert list(listed["row"]) == list(view.votes["row"]) and len(listed) == SIXTY_FORTY["flip_votes"]
    assert "timestamp" in listed  # the CSV keeps every column, as evalboard robustness --format csv
    assert model_names(sixty_forty()) == ("A", "B")


def test_a_pair_question_names_its_order():
    rows = [("A", "B", "model_a")] * 6 + [("A", "B", "model_b")] * 4 + [("C", "B", "model_b")] * 3 + [
        ("C", "B", "model_a")] * 2
    view = robustness_view(prepared(rows), ("C", "B"))
    assert view.subject == "the order of B (ahead) and C" and view.result.flipped_to == "C"


def test_no_answer_is_a_reason_not_an_exception():
    golden = prepared([("A", "B", "model_a", True, "model_a")] * 3,
                      ("model_a", "model_b", "winner", "is_golden", "golden_answer"))
    view = robustness_view(golden)
    assert view.reason and "no votes to rank" in view.reason and not view.found
    assert model_names(golden) == ()
    unknown = robustness_view(sixty_forty(), ("A", "Z"))
    assert "no analysed votes of 'Z'" in unknown.reason


def test_nothing_flips_a_lone_vote():
    view = robustness_view(prepared([("A", "B", "model_a")]))
    assert view.reason is None and not view.found
    assert view.headline.startswith("No set of votes found") and view.ratings.empty
