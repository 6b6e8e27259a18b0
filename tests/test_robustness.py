"""The fewest votes whose removal changes the top (docs/methods.md §13): core.decisions and `evalboard robustness`.

Every flip is checked with an independent Bradley–Terry fit written here (dense Newton, its own identifiability
rule), and small cases against a brute force over every subset of votes.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from core.cli import main
from core.decisions.render import to_csv, to_json, to_markdown
from core.decisions.robustness import RobustnessError, parse_pair, robustness
from core.io.votes import votes_from_frame
from core.ranking.request import prepare_votes
from tests.conftest import REPO
from tests.reference_values import ROBUSTNESS_SIXTY_FORTY as SIXTY_FORTY

SCORE = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}
MARGIN = 1e-9  # as core.decisions.flip_search.FLIP_MARGIN: a tie does not flip


def votes(rows: list[tuple], columns=("model_a", "model_b", "winner")) -> pd.DataFrame:
    frame, _ = votes_from_frame(pd.DataFrame(rows, columns=list(columns)), "test votes")
    return frame


def answer(frame: pd.DataFrame, pair=None, **options):
    return robustness(prepare_votes(frame, "keep"), pair, **options)


# --- an independent fit ---------------------------------------------------------------------------------------

def vote_arrays(frame: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """(left, right, score of the left model, weight) of the votes a ranking fits (golden ones left out)."""
    if "is_golden" in frame:
        frame = frame[~frame["is_golden"].to_numpy(dtype=bool)]
    weight = frame["weight"].to_numpy(float) if "weight" in frame else np.ones(len(frame))
    return (frame["model_a"].astype(str).to_numpy(), frame["model_b"].astype(str).to_numpy(),
            frame["winner"].astype(str).map(SCORE).to_numpy(float), weight)


def independent_theta(frame: pd.DataFrame) -> dict[str, float]:
    return fit_arrays(*vote_arrays(frame))


def fit_arrays(a, b, score, weight) -> dict[str, float]:
    """BT as docs/methods.md §2 defines it (ties half, weights, the pure MLE when the graph of wins is strongly
    connected, else one virtual tie per model with weights at mean 1), by a dense damped Newton to 1e-13.
    Models without (weighted) votes get no rating."""
    present = sorted({m for m, w in zip(np.r_[a, b], np.r_[weight, weight]) if w > 0})
    if len(present) < 2:
        return {}
    index = {m: i for i, m in enumerate(present)}
    k = len(present)
    wins = np.zeros((k, k))
    for left, right, s, w in zip(a, b, score, weight):
        if left in index and right in index:
            wins[index[left], index[right]] += w * s
            wins[index[right], index[left]] += w * (1 - s)
    wins *= len(a) / weight.sum()
    strong = connected_components(csr_matrix(wins > 0), directed=True, connection="strong")[0] == 1
    prior = 0.0 if strong else 0.5
    games = wins + wins.T
    theta = np.zeros(k)
    free = np.arange(k) if prior else np.arange(1, k)
    for _ in range(200):
        p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
        grad = (wins - games * p).sum(axis=1) + prior * (1 - 2 / (1 + np.exp(-theta)))
        curv = games * p * (1 - p)
        hess = np.diag(curv.sum(axis=1)) - curv
        sig = 1 / (1 + np.exp(-theta))
        hess += np.diag(2 * prior * sig * (1 - sig))
        step = np.linalg.solve(hess[np.ix_(free, free)], grad[free])
        step *= min(1.0, 3.0 / np.abs(step).max()) if np.abs(step).max() > 0 else 1.0
        theta[free] += step
        if np.abs(step).max() < 1e-13:
            break
    return dict(zip(present, theta))


def overtaken(theta: dict[str, float], leader: str, rival: str | None = None) -> bool:
    if leader not in theta:
        return False
    if rival is not None:
        return rival in theta and theta[rival] - theta[leader] > MARGIN
    return any(t - theta[leader] > MARGIN for m, t in theta.items() if m != leader)


def flips(frame: pd.DataFrame, leader: str, rival: str | None = None) -> bool:
    return overtaken(independent_theta(frame), leader, rival)


def without_rows(frame: pd.DataFrame, rows) -> pd.DataFrame:
    """``frame`` without the votes at these 1-based rows (the robustness answer's "row")."""
    return frame.drop(index=np.asarray(list(rows), dtype=int) - 1)


def brute_force(frame: pd.DataFrame, leader: str, rival: str | None = None) -> int | None:
    """The size of the smallest subset of votes whose removal flips the order: every subset, by increasing size."""
    arrays = vote_arrays(frame)
    n = len(arrays[0])
    for size in range(1, n + 1):
        for subset in itertools.combinations(range(n), size):
            keep = np.ones(n, dtype=bool)
            keep[list(subset)] = False
            if overtaken(fit_arrays(*(x[keep] for x in arrays)), leader, rival):
                return size
    return None


# --- the worked case of the issue -------------------------------------------------------------------------------

def sixty_forty() -> pd.DataFrame:
    return votes([("A", "B", "model_a")] * SIXTY_FORTY["a_wins"] + [("A", "B", "model_b")] * SIXTY_FORTY["b_wins"])


def test_sixty_of_a_hundred_takes_twenty_one_votes():
    result = answer(sixty_forty())
    assert (result.top_model, result.flip_votes, result.flipped_to, result.verified) == (
        "A", SIXTY_FORTY["flip_votes"], "B", True)
    assert result.flip_share == pytest.approx(0.21)
    assert set(result.votes["winner"]) == {"model_a"}  # A's wins are the ones to drop
    frame = sixty_forty()
    assert flips(without_rows(frame, result.votes["row"]), "A")
    twenty = frame.drop(index=frame.index[:SIXTY_FORTY["equal_at"]])  # 40–40: equal ratings, not flipped
    theta = independent_theta(twenty)
    assert abs(theta["A"] - theta["B"]) < 1e-12 and not flips(twenty, "A")


def test_the_search_alone_finds_twenty_one_too():
    """Without the exhaustive step (too many combinations at this size anyway) the influence search is exact here."""
    result = answer(sixty_forty(), exhaustive_limit=0)
    assert result.flip_votes == 21 and not result.exact_minimum


def test_pair_order_and_unknown_models():
    frame = votes([("A", "B", "model_a")] * 6 + [("B", "C", "model_a")] * 6 + [("A", "C", "model_a")] * 3
                  + [("B", "A", "model_a")] * 2 + [("C", "B", "model_a")] * 2 + [("C", "A", "model_a")] * 1)
    result = answer(frame, ("C", "B"))
    assert result.pair == ("B", "C") and result.top_model == "B" and result.flipped_to == "C"
    assert flips(without_rows(frame, result.votes["row"]), "B", "C")
    with pytest.raises(RobustnessError, match=r"'Z'.*the models are A, B, C"):
        answer(frame, ("A", "Z"))
    with pytest.raises(RobustnessError, match="two different model names"):
        parse_pair("A,A")


def test_the_search_does_not_drop_every_vote_of_the_leader():
    """m1 never loses; one vote (m1 beating m2) holds it above m2. Dropping every vote that lowers m1's lead at
    once leaves m1 without votes, which flips nothing: the search must take smaller batches and find the one."""
    rows = ([("m2", "m0", "model_a", 0.5)] * 4 + [("m0", "m2", "model_b", 1.0), ("m1", "m0", "model_a", 0.5),
            ("m1", "m0", "model_a", 0.5), ("m2", "m1", "model_b", 1.0), ("m1", "m0", "model_a", 1.0)])
    frame = votes(rows, ("model_a", "model_b", "winner", "weight"))
    result = answer(frame, exhaustive_limit=0)
    assert (result.top_model, result.flip_votes, result.flipped_to) == ("m1", 1, "m2")
    assert flips(without_rows(frame, result.votes["row"]), "m1")


# --- brute force on small random cases -------------------------------------------------------------------------

def random_case(seed: int, n_max: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, n_max + 1))
    models = ["m0", "m1", "m2"]
    strength = rng.normal(0, 1, 3)
    rows = []
    for _ in range(n):
        i, j = rng.choice(3, 2, replace=False)
        p = 1 / (1 + np.exp(strength[j] - strength[i]))
        u = rng.random()
        winner = "tie" if u < 0.15 else "model_a" if rng.random() < p else "model_b"
        rows.append((models[i], models[j], winner, float(rng.choice([1.0, 0.5])) if seed % 3 == 0 else 1.0))
    return votes(rows, ("model_a", "model_b", "winner", "weight"))


@pytest.mark.parametrize("seed", range(24))
def test_brute_force_agrees_on_small_cases(seed):
    frame = random_case(seed)
    result = answer(frame)
    truth = brute_force(frame, result.top_model)
    assert result.flip_votes == truth
    assert result.exact_minimum  # at most 4,096 combinations of interchangeable votes: every one was tried
    if truth is not None:
        assert flips(without_rows(frame, result.votes["row"]), result.top_model)
    searched = answer(frame, exhaustive_limit=0)  # the influence search alone: an upper bound
    if truth is None:
        assert searched.flip_votes is None
    else:
        assert searched.flip_votes is None or searched.flip_votes >= truth
        if searched.flip_votes is not None:
            assert flips(without_rows(frame, searched.votes["row"]), searched.top_model)


# --- ties, weights, golden votes --------------------------------------------------------------------------------

def test_ties_count_half():
    """A 6–4 lead and 10 ties (11 to 9 in half wins): dropping ties only widens the lead; 2 of A's wins make
    it equal, 3 put B ahead."""
    frame = votes([("A", "B", "model_a")] * 6 + [("A", "B", "model_b")] * 4 + [("A", "B", "tie")] * 10)
    result = answer(frame)
    assert result.flip_votes == 3 and set(result.votes["winner"]) == {"model_a"}
    assert flips(without_rows(frame, result.votes["row"]), "A")


def test_weights_are_the_fits_weights():
    """A's 6 wins weigh 0.5 (3 in all) against B's 2 wins of weight 1: dropping 3 of A's wins leaves 1.5 < 2."""
    rows = [("A", "B", "model_a", 0.5)] * 6 + [("A", "B", "model_b", 1.0)] * 2
    frame = votes(rows, ("model_a", "model_b", "winner", "weight"))
    result = answer(frame)
    assert result.top_model == "A" and result.flip_votes == 3
    assert flips(without_rows(frame, result.votes["row"]), "A")


def test_golden_votes_are_left_out():
    rows = ([("A", "B", "model_a", False, None)] * 6 + [("A", "B", "model_b", False, None)] * 4
            + [("B", "A", "model_a", True, "model_a")] * 50)
    frame = votes(rows, ("model_a", "model_b", "winner", "is_golden", "golden_answer"))
    result = answer(frame)
    assert (result.top_model, result.flip_votes, result.n_votes) == ("A", 3, 10)
    assert result.params["golden_votes_excluded"] == 50


def test_who_cast_them():
    rows = ([("A", "B", "model_a", "ann1", "g1", "2026-01-05T10:00:00Z")] * 6
            + [("A", "B", "model_a", "ann2", "g2", "2026-01-14T10:00:00Z")] * 4
            + [("A", "B", "model_b", "ann3", "g1", "2026-01-05T10:00:00Z")] * 7)
    frame = votes(rows, ("model_a", "model_b", "winner", "annotator_id", "game_id", "timestamp"))
    result = answer(frame)
    assert result.flip_votes == 4  # 10–7 → 6–7
    assert result.by["annotator"] == {"ann1": 4}  # the earliest rows of interchangeable votes are listed
    assert result.by["game"] == {"g1": 4} and result.by["period"] == {"2026-W02": 4}
    assert list(result.votes.columns) == ["row", "vote_id", "model_a", "model_b", "winner", "annotator_id",
                                          "game_id", "timestamp", "weight"]
    assert result.votes["vote_id"].isna().all() and (result.votes["weight"] == 1.0).all()
    assert result.votes["timestamp"].iloc[0] == "2026-01-05T10:00:00+00:00"


# --- property: the reported votes flip, and none of them is superfluous ------------------------------------------

@st.composite
def vote_sets(draw):
    k = draw(st.integers(2, 5))
    n = draw(st.integers(6, 60))
    pairs = [draw(st.tuples(st.integers(0, k - 1), st.integers(0, k - 2))) for _ in range(n)]
    winners = draw(st.lists(st.sampled_from(["model_a", "model_b", "model_a", "tie"]), min_size=n, max_size=n))
    rows = [(f"m{i}", f"m{j + (j >= i)}", w) for (i, j), w in zip(pairs, winners)]
    return votes(rows)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vote_sets(), st.sampled_from([0, 4096]))
def test_reported_votes_flip_and_each_one_is_needed(frame, limit):
    result = answer(frame, exhaustive_limit=limit)
    if result.flip_votes is None:
        return
    assert result.verified and len(result.votes) == result.flip_votes
    rows = list(result.votes["row"])
    assert flips(without_rows(frame, rows), result.top_model)
    for kept in set(map(tuple, result.votes[["model_a", "model_b", "winner"]].to_numpy())):
        # give back one vote of each kind dropped: the order is no longer flipped
        first = next(r for r, key in zip(rows, result.votes[["model_a", "model_b", "winner"]].to_numpy())
                     if tuple(key) == kept)
        assert not flips(without_rows(frame, [r for r in rows if r != first]), result.top_model)


# --- output and command line ------------------------------------------------------------------------------------

def test_json_markdown_and_csv(tmp_path):
    result = answer(sixty_forty(), exhaustive_limit=0)
    doc = json.loads(to_json(result))
    assert {"top_model", "flip_votes", "flip_share", "flipped_to", "verified", "votes", "by", "params"} <= set(doc)
    assert doc["flip_votes"] == 21 and doc["verified"] is True and len(doc["votes"]) == 21
    assert "upper bound" in " ".join(doc["params"]["notes"]) and doc["exact_minimum"] is False
    assert "exact minimum" in " ".join(json.loads(to_json(answer(sixty_forty())))["params"]["notes"])
    assert "**21** of 100 votes" in to_markdown(result)
    assert to_csv(result).splitlines()[0] == "row,vote_id,model_a,model_b,winner,annotator_id,game_id,timestamp,weight"
    assert "| row | model_a | model_b | winner | game_id |" in to_markdown(result)


def test_no_set_flips_a_lone_vote():
    """One vote, A over B: dropping it leaves no rating at all, so nothing can change the top; every set was tried."""
    result = answer(votes([("A", "B", "model_a")]))
    assert (result.flip_votes, result.flip_share, result.verified, result.exact_minimum) == (None, None, False, True)
    doc = json.loads(to_json(result))
    assert doc["votes"] == [] and "none changes it" in doc["params"]["notes"][0]
    assert "No set of votes found" in to_markdown(result)


def test_command_line(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    sixty_forty().to_csv(path, index=False)
    assert main(["robustness", str(path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["top_model"], doc["flip_votes"], doc["flipped_to"]) == ("A", 21, "B")
    assert main(["robustness", str(path), "--pair", "A,Q"]) == 2
    assert "'Q'" in capsys.readouterr().err
    assert main(["robustness", str(path), "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("# Robustness of the top model, A")


def test_same_votes_and_top_as_rank(capsys):
    """The arena sample has three dimensions, golden questions and unqualified annotators: robustness reads
    exactly the votes `rank` ranks, and names the same top."""
    sample = str(REPO / "data" / "samples" / "arena_demo.csv")
    for policy in ("exclude", "downweight"):
        assert main(["rank", sample, "--ci", "none", "--policy", policy]) == 0
        ranking = json.loads(capsys.readouterr().out)
        assert main(["robustness", sample, "--policy", policy]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert (doc["n_votes"], doc["top_model"]) == (ranking["n_votes"], ranking["models"][0]["model"])
        assert doc["verified"] and doc["params"]["golden_votes_excluded"] == ranking["params"]["golden_votes_excluded"]
        assert doc["params"]["weighted"] == (policy == "downweight")


def test_counts_are_refused(tmp_path, capsys):
    path = tmp_path / "counts.csv"
    pd.DataFrame({"model_a": ["A"], "model_b": ["B"], "winner": ["model_a"], "count": [5]}).to_csv(path, index=False)
    assert main(["robustness", str(path)]) == 2
    assert "needs individual votes" in capsys.readouterr().err
