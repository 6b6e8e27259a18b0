"""`evalboard plan` (docs/methods.md §14): extra votes to tell two models apart, checked against the exact
binomial test, against simulation, against an independent logistic regression and by brute force."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import core.ranking.bradley_terry as bt
from core.cli import main
from core.decisions import plan_math as pm
from core.decisions.plan import NOTE_SEPARATED, NOTE_UNREACHABLE, NOTE_ZERO_GAP, PlanError, plan
from core.decisions.plan_render import sentence, to_csv, to_json, to_markdown
from core.io.votes import votes_from_frame
from core.ranking.request import prepare_votes
from tests.conftest import REPO


def votes(rows: list[tuple]) -> pd.DataFrame:
    frame, _ = votes_from_frame(pd.DataFrame(rows, columns=["model_a", "model_b", "winner"]), "test votes")
    return frame


def tally(counts: dict[tuple[str, str, str], int]) -> pd.DataFrame:
    return votes([key for key, n in counts.items() for _ in range(n)])


def two_models(wins_a: int, wins_b: int) -> pd.DataFrame:
    return tally({("A", "B", "model_a"): wins_a, ("A", "B", "model_b"): wins_b})


def planned(frame: pd.DataFrame, **options):
    return plan(prepare_votes(frame, "keep"), **options)


def exact_binomial_sample_size(p: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The smallest n at which the exact two-sided binomial test of 1/2 (equal tails) has the power at p."""
    for n in range(10, 5000):
        c = int(stats.binom.ppf(alpha / 2, n, 0.5))  # largest c with P(X ≤ c) ≤ α/2 under 1/2
        while stats.binom.cdf(c, n, 0.5) > alpha / 2:
            c -= 1
        if stats.binom.cdf(c, n, p) + stats.binom.sf(n - c - 1, n, p) >= power:
            return n
    raise AssertionError("no sample size below 5000")


def test_direct_answer_matches_the_exact_binomial_test():
    """Two models, win probability 0.55, no ties: current votes plus the direct extra votes are within 10 % of
    the exact binomial test's sample size (about 783)."""
    exact = exact_binomial_sample_size(0.55)
    assert 700 < exact < 900
    for wins_a, wins_b in ((110, 90), (55, 45), (33, 27), (165, 135)):
        row = planned(two_models(wins_a, wins_b)).pairs[0]
        assert (row.model_a, row.model_b) == ("A", "B") and not row.separated
        total = wins_a + wins_b + row.extra_votes_direct
        assert abs(total - exact) <= 0.10 * exact, (total, exact)
        # two models: "spread over every pair" is the same pair, so the scheduled answer is the direct one
        assert abs(row.extra_votes_scheduled - row.extra_votes_direct) <= 1


def test_simulation_confirms_the_power():
    result = planned(two_models(110, 90), simulate=3000, seed=7)
    row = result.pairs[0]
    assert abs(row.simulated_power - 0.8) <= 0.03, row.simulated_power
    low, high = row.simulated_power_ci
    assert low < row.simulated_power < high and high - low < 0.04


def test_gap_variance_matches_a_logistic_regression():
    """Var(θ_a − θ_b) from the plan's information equals statsmodels' Logit covariance (no ties, θ_A = 0)."""
    rng = np.random.default_rng(3)
    truth = {"A": 0.0, "B": 0.4, "C": -0.3, "D": 0.8}
    names = list(truth)
    rows = []
    for _ in range(400):
        a, b = rng.choice(4, 2, replace=False)
        p = 1 / (1 + math.exp(truth[names[b]] - truth[names[a]]))
        rows.append((names[a], names[b], "model_a" if rng.random() < p else "model_b"))
    frame = votes(rows)
    result = planned(frame, pairs=[("A", "D"), ("B", "C")])
    design = np.zeros((len(rows), 3))
    for r, (a, b, _) in enumerate(rows):
        if names.index(a):
            design[r, names.index(a) - 1] += 1
        if names.index(b):
            design[r, names.index(b) - 1] -= 1
    outcome = np.array([w == "model_a" for _, _, w in rows], dtype=float)
    logit = sm.Logit(outcome, design).fit(disp=0)
    theta = np.concatenate([[0.0], logit.params])
    cov = np.zeros((4, 4))
    cov[1:, 1:] = logit.cov_params()
    for row in result.pairs:
        a, b = names.index(row.model_a), names.index(row.model_b)
        assert row.gap_elo == pytest.approx(bt.ELO_SCALE * abs(theta[a] - theta[b]), rel=1e-6)
        se = math.sqrt(cov[a, a] + cov[b, b] - 2 * cov[a, b])
        assert row.se_elo == pytest.approx(bt.ELO_SCALE * se, rel=1e-5)


def three_models() -> pd.DataFrame:
    return tally({("A", "B", "model_a"): 30, ("A", "B", "model_b"): 25, ("B", "C", "model_a"): 40,
                  ("B", "C", "model_b"): 33, ("A", "C", "tie"): 10, ("A", "C", "model_a"): 12,
                  ("A", "C", "model_b"): 8})


def brute_variance(theta, i, j, votes_per_pair, added: np.ndarray, a: int, b: int) -> float:
    k = len(theta)
    p = pm.win_probability(theta, i, j)
    info = pm.laplacian(i, j, (votes_per_pair + added) * p * (1 - p), k)
    cov = np.linalg.pinv(info)
    return cov[a, a] + cov[b, b] - 2 * cov[a, b]


def test_extra_votes_are_the_fewest_that_reach_the_power():
    """Adding the answer's votes to the information (as a dense pseudo-inverse) reaches the power; one fewer
    does not: the direct answer and the scheduler's answer are each the smallest whole count."""
    frame = three_models()
    result = planned(frame)
    fitted = {m: r for m, r in zip(("A", "B", "C"), _theta(frame))}
    theta = np.array([fitted[m] for m in ("A", "B", "C")])
    i, j = np.array([0, 0, 1]), np.array([1, 2, 2])
    current = np.array([55.0, 30.0, 73.0])
    ratio = pm.power_ratio(0.05, 0.8)
    for row in result.pairs:
        a, b = "ABC".index(row.model_a), "ABC".index(row.model_b)
        target = (theta[a] - theta[b]) ** 2 / ratio ** 2
        direct = np.array([(i[p], j[p]) in ((a, b), (b, a)) for p in range(3)], dtype=float)
        assert brute_variance(theta, i, j, current, direct * row.extra_votes_direct, a, b) <= target * (1 + 1e-9)
        assert brute_variance(theta, i, j, current, direct * (row.extra_votes_direct - 1), a, b) > target
        even = np.ones(3) / 3
        assert brute_variance(theta, i, j, current, even * row.extra_votes_scheduled, a, b) <= target * (1 + 1e-9)
        assert brute_variance(theta, i, j, current, even * (row.extra_votes_scheduled - 1), a, b) > target
        assert row.min_detectable_elo == pytest.approx(ratio * row.se_elo)
        assert (1.959 + 0.841) * row.se_elo < row.min_detectable_elo < (1.960 + 0.842) * row.se_elo


def _theta(frame: pd.DataFrame) -> np.ndarray:
    """θ of A, B, C by an independent MM fit (ties half), θ_A = 0."""
    w = np.zeros((3, 3))
    score = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}
    for a, b, winner in frame[["model_a", "model_b", "winner"]].astype(str).itertuples(index=False):
        x, y = "ABC".index(a), "ABC".index(b)
        w[x, y] += score[winner]
        w[y, x] += 1 - score[winner]
    pi = bt.mm(w, tol=1e-13)[0]
    return np.log(pi / pi[0])


def test_adjacent_pairs_in_rank_order_then_the_asked_pairs():
    result = planned(three_models(), pairs=[("C", "A"), ("B", "A")])
    assert result.ranking == ("A", "B", "C")
    assert [(r.model_a, r.model_b) for r in result.pairs] == [("A", "B"), ("B", "C"), ("A", "C")]
    assert all(r.gap_elo >= 0 for r in result.pairs)


def test_separated_pair_needs_nothing_and_equal_pair_is_not_reachable():
    result = planned(tally({("A", "B", "model_a"): 90, ("A", "B", "model_b"): 10, ("B", "C", "model_a"): 20,
                            ("B", "C", "model_b"): 20, ("A", "C", "model_a"): 20, ("A", "C", "model_b"): 2}))
    first = result.pairs[0]
    assert (first.model_a, first.model_b) == ("A", "B") and first.separated
    assert first.extra_votes_direct == 0 and first.extra_votes_scheduled == 0
    assert first.notes == (NOTE_SEPARATED,) and "already" in sentence(first, 0.05, 0.8)
    equal = planned(two_models(20, 20)).pairs[0]
    assert equal.extra_votes_direct is None and equal.extra_votes_scheduled is None
    assert equal.notes == (NOTE_ZERO_GAP,) and equal.gap_elo == 0
    assert json.loads(to_json(planned(two_models(20, 20))))["pairs"][0]["extra_votes_direct"] is None
    assert "No feasible number" in sentence(equal, 0.05, 0.8)


def test_a_tiny_gap_is_not_reachable_and_never_nan():
    result = planned(tally({("A", "B", "model_a"): 50_001, ("A", "B", "model_b"): 50_000}))
    row = result.pairs[0]
    assert row.gap_elo > 0 and row.extra_votes_direct is None and row.extra_votes_scheduled is None
    assert row.notes == (NOTE_UNREACHABLE,)
    doc = to_json(result)
    assert "NaN" not in doc and "Infinity" not in doc and to_markdown(result).count("not reachable") >= 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 30), min_size=6, max_size=6), st.integers(2, 6))
def test_more_votes_never_need_more_extra_votes(counts, factor):
    """The same gap with `factor` times the votes (each count scaled, so the fit is the same) never needs
    more extra votes, on the pair or spread by the scheduler."""
    keys = [("A", "B", "model_a"), ("A", "B", "model_b"), ("B", "C", "model_a"), ("B", "C", "model_b"),
            ("A", "C", "model_a"), ("A", "C", "model_b")]
    few = planned(tally(dict(zip(keys, counts))))
    many = planned(tally({key: n * factor for key, n in zip(keys, counts)}))
    assert [(r.model_a, r.model_b) for r in few.pairs] == [(r.model_a, r.model_b) for r in many.pairs]
    for small, large in zip(few.pairs, many.pairs):
        assert large.gap_elo == pytest.approx(small.gap_elo, rel=1e-6, abs=1e-6)
        assert large.min_detectable_elo < small.min_detectable_elo
        for name in ("extra_votes_direct", "extra_votes_scheduled"):
            before, after = getattr(small, name), getattr(large, name)
            if before is not None:
                assert after is not None and after <= before


def test_bad_settings_are_refused():
    frame = three_models()
    with pytest.raises(PlanError, match="power"):
        planned(frame, power=1.0)
    with pytest.raises(PlanError, match="exceed"):
        planned(frame, power=0.04)
    with pytest.raises(PlanError, match="alpha"):
        planned(frame, alpha=0)
    with pytest.raises(PlanError, match="'Q'"):
        planned(frame, pairs=[("A", "Q")])


def test_renderings(tmp_path):
    result = planned(three_models(), simulate=50)
    doc = json.loads(to_json(result))
    assert set(doc) >= {"alpha", "power", "pairs"}
    assert set(doc["pairs"][0]) >= {"model_a", "model_b", "extra_votes_direct", "extra_votes_scheduled",
                                    "min_detectable_elo", "simulated_power"}
    markdown = to_markdown(result)
    assert markdown.startswith("# How many more votes") and "scheduler" in markdown
    assert "between A and B" in markdown
    csv = to_csv(result).splitlines()
    assert csv[0].startswith("model_a,model_b,gap_elo") and len(csv) == 3


def test_sentence_reads_like_the_issue():
    row = planned(two_models(110, 90)).pairs[0]
    text = sentence(row, 0.05, 0.8)
    assert text.startswith("About ") and "more votes between A and B" in text
    assert "spread by the scheduler" in text and "α = 0.05 with 80 % power" in text


def test_command_line(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    pd.DataFrame([("A", "B", "model_a")] * 110 + [("A", "B", "model_b")] * 90,
                 columns=["model_a", "model_b", "winner"]).to_csv(path, index=False)
    assert main(["plan", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["alpha"] == 0.05 and doc["power"] == 0.8 and doc["pairs"][0]["model_a"] == "A"
    assert main(["plan", str(path), "--format", "markdown", "--power", "0.9", "--alpha", "0.01"]) == 0
    assert capsys.readouterr().out.startswith("# How many more votes (α = 0.01, power 90 %)")
    for bad, message in ((["--pair", "A,Q"], "'Q'"), (["--power", "1.5"], "power"), (["--alpha", "2"], "alpha"),
                         (["--pair", "A"], "--pair"), (["--simulate", "-1"], "--simulate")):
        assert main(["plan", str(path), *bad]) == 2, bad
        assert message in capsys.readouterr().err


def test_counts_are_refused(tmp_path, capsys):
    path = tmp_path / "counts.csv"
    pd.DataFrame({"model_a": ["A"], "model_b": ["B"], "winner": ["model_a"], "count": [5]}).to_csv(path, index=False)
    assert main(["plan", str(path)]) == 2
    assert "needs a votes file" in capsys.readouterr().err


def test_same_votes_and_order_as_rank(capsys):
    sample = str(REPO / "data" / "samples" / "arena_demo.csv")
    assert main(["rank", sample, "--ci", "none"]) == 0
    ranking = json.loads(capsys.readouterr().out)
    assert main(["plan", sample]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_votes"] == ranking["n_votes"]
    assert doc["ranking"] == [m["model"] for m in ranking["models"]]
    assert [p["model_a"] for p in doc["pairs"]] == doc["ranking"][:-1]


def test_equal_weights_are_no_weights_and_unequal_weights_count():
    """Weights are rescaled to mean 1 as the fit rescales them: all weights 0.5 plan as unweighted votes; halving
    the weight of some votes changes the plan."""
    frame = three_models()
    plain = planned(frame)
    halved = planned(frame.assign(weight=0.5))
    assert [r.as_dict() for r in halved.pairs] == [r.as_dict() for r in plain.pairs]
    mixed = planned(frame.assign(weight=np.where(np.arange(len(frame)) % 2 == 0, 0.5, 1.0)))
    assert mixed.params["weighted"] and [r.se_elo for r in mixed.pairs] != [r.se_elo for r in plain.pairs]


def test_command_line_simulation_and_csv(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    three_models().to_csv(path, index=False)
    assert main(["plan", str(path), "--simulate", "40", "--seed", "3", "--format", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(table["model_a"]) == ["A", "B"] and table["simulated_power"].between(0, 1).all()
    assert (table["simulated_power_low"] <= table["simulated_power"]).all()
    assert main(["plan", str(path), "--simulate", "40", "--seed", "3", "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "Simulated power" in text and "40 data sets" in text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1.5, 1.5), min_size=4, max_size=4), st.lists(st.integers(0, 40), min_size=6, max_size=6),
       st.lists(st.integers(0, 40), min_size=6, max_size=6))
def test_added_votes_on_any_pair_never_raise_the_need_at_the_same_gap(theta, counts, added):
    """At a fixed fit θ (the same gaps), more votes on any pairs only add information: the variance of every
    gap, the direct and the scheduled extra votes never grow."""
    theta = np.array(theta)
    i, j = np.triu_indices(4, 1)
    before = np.array(counts, dtype=float) + 1.0  # every pair seen: the information is positive definite
    after = before + np.array(added, dtype=float)
    a, b = np.array([0, 1, 2, 0]), np.array([1, 2, 3, 3])
    gap = np.abs(theta[a] - theta[b])
    target = (gap / pm.power_ratio(0.05, 0.8)) ** 2
    per_vote = pm.win_probability(theta, a, b) * (1 - pm.win_probability(theta, a, b))
    answers = []
    for votes_per_pair in (before, after):
        info = pm.information(theta, i, j, votes_per_pair, 0.0)
        variance = pm.gap_variance(info, a, b)
        answers.append((variance, pm.extra_direct(variance, target, per_vote),
                        pm.extra_scheduled(pm.schedule(info, a, b), target)))
    (v0, d0, s0), (v1, d1, s1) = answers
    assert np.all(v1 <= v0 * (1 + 1e-9))
    finite = np.isfinite(d0) & (gap > 1e-6)
    assert np.all(d1[finite] <= d0[finite] + 1e-6 * (1 + d0[finite]))
    reach = np.isfinite(s0) & (gap > 1e-6)
    assert np.all(np.isfinite(s1[reach])) and np.all(s1[reach] <= s0[reach] * (1 + 1e-6) + 1e-6)


def test_ratings_equal_up_to_rounding_are_equal():
    """A cycle of equal results among A, B, C and a fourth model D that each of them beats 5–4: the fitted gaps
    among A, B, C are zero up to rounding (about 1e-15 Elo), and each such pair says the ratings are equal (not
    a count in the billions)."""
    cycle = {("A", "B", "model_a"): 7, ("B", "C", "model_a"): 7, ("C", "A", "model_a"): 7,
             ("A", "B", "model_b"): 3, ("B", "C", "model_b"): 3, ("C", "A", "model_b"): 3}
    cycle.update({(m, "D", w): n for m in "ABC" for w, n in (("model_a", 5), ("model_b", 4))})
    result = planned(tally(cycle))
    equal = [row for row in result.pairs if row.model_b != "D"]
    assert len(equal) == 2
    for row in equal:
        assert row.gap_elo < 1e-6 and row.notes == (NOTE_ZERO_GAP,)
        assert row.extra_votes_direct is None and "ratings are equal" in sentence(row, 0.05, 0.8)
