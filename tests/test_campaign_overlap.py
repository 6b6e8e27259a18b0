"""Overlap items (real items judged by several annotators) and the golden supply of a campaign.

A simulated campaign of 4 annotators arriving in random order checks the overlap share, its spread over
annotator pairs and model pairs, that nobody sees an item twice and that pair counts keep their bound.
The golden plan is checked on the case of a pool shorter than the rate asks for (5 items, rate 0.2,
target 100): every annotator meets all 5, spread over the whole session.
"""

from __future__ import annotations

import itertools
import secrets
import sqlite3
from collections import Counter
from contextlib import closing

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.campaign import (
    CampaignError,
    create_campaign,
    get_campaign,
    golden_supply,
    issue_tokens,
    overlap_count,
    record_vote,
    serve_next,
    vote_records,
)
from core.campaign.golden import MIN_GOLDEN, golden_positions, is_golden_serve
from core.cli import main
from core.store.connection import connect
from core.store.schema import SCHEMA_VERSION
from tests.conftest import snapshot
from tests.test_scheduler import answers_table, golden_table, simulate

MODELS = ["m0", "m1", "m2", "m3", "m4"]
N_ANNOTATORS, TARGET, OVERLAP = 4, 150, 0.1
# The share is held at the setting at every serve (module docstring of core.campaign.scheduler), so at the
# end it is below the setting by at most the few items whose second serve found no candidate yet.
SHARE_TOLERANCE = 0.01


@pytest.fixture(autouse=True)
def fixed_tokens(monkeypatch):
    """Tokens seed each annotator's draws: fixed ones make every run the same."""
    numbers = iter(range(10_000))
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: f"token-{next(numbers):04d}")


def overlap_items(votes: pd.DataFrame) -> pd.Series:
    """Judges per real item in published votes: same query_id and the same two models on either side."""
    real = votes[~votes["is_golden"] & (votes["dimension"] == votes["dimension"].iloc[0])]
    lo = real[["model_a", "model_b"]].min(axis=1)
    hi = real[["model_a", "model_b"]].max(axis=1)
    return real.groupby([real["query_id"], lo, hi])["annotator_id"].nunique()


def run_campaign(db, overlap=OVERLAP, overlap_k=2, annotators=N_ANNOTATORS, seed=0):
    conn = connect(db)
    campaign = create_campaign(conn, "overlap", answers_table(MODELS, 120), golden_table(40), golden_rate=0.1,
                               target=TARGET, seed=7, overlap=overlap, overlap_k=overlap_k)
    tokens = [t.token for t in issue_tokens(conn, campaign, annotators)]
    simulate(conn, tokens, TARGET, seed=seed)
    return conn, campaign


@pytest.fixture(scope="module")
def overlap_run(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        numbers = iter(range(100))
        patch.setattr(secrets, "token_urlsafe", lambda n: f"token-{next(numbers)}")
        conn, campaign = run_campaign(tmp_path_factory.mktemp("overlap") / "evalboard.db")
    assignments = pd.read_sql_query("SELECT * FROM campaign_assignments ORDER BY id", conn)
    votes = vote_records(conn, campaign)
    yield conn, campaign, assignments, votes
    conn.close()


def test_the_overlap_share_is_the_setting(overlap_run):
    conn, campaign, _, votes = overlap_run
    judges = overlap_items(votes)
    share = (judges >= 2).mean()
    assert OVERLAP - SHARE_TOLERANCE <= share <= OVERLAP + 1e-9
    assert judges.max() == 2  # overlap_k = 2 and the campaign is far from exhausting its 1,200 items
    counted = overlap_count(conn, campaign)
    assert (counted.items, counted.items_2plus) == (len(judges), int((judges >= 2).sum()))


def test_overlap_spreads_over_annotator_pairs_and_annotators(overlap_run):
    _, _, _, votes = overlap_run
    real = votes[~votes["is_golden"]]
    lo, hi = real[["model_a", "model_b"]].min(axis=1), real[["model_a", "model_b"]].max(axis=1)
    judges = real.groupby([real["query_id"], lo, hi])["annotator_id"].agg(lambda a: tuple(sorted(set(a))))
    shared = Counter(pair for names in judges if len(names) >= 2 for pair in itertools.combinations(names, 2))
    annotators = sorted(real["annotator_id"].unique())
    assert set(shared) == set(itertools.combinations(annotators, 2))  # every annotator pair overlaps
    counts = list(shared.values())
    assert max(counts) - min(counts) <= 2, shared  # and the pairs stay balanced
    per_annotator = Counter(a for names in judges if len(names) >= 2 for a in names)
    assert min(per_annotator.values()) >= 0.75 * max(per_annotator.values())


def test_overlap_items_spread_over_model_pairs(overlap_run):
    _, _, _, votes = overlap_run
    judges = overlap_items(votes)
    pairs = Counter((lo, hi) for (_, lo, hi), n in judges.items() if n >= 2)
    assert len(pairs) == len(MODELS) * (len(MODELS) - 1) // 2
    assert max(pairs.values()) - min(pairs.values()) <= 2


def test_an_overlap_item_is_one_another_annotator_has_voted_on(tmp_path):
    with closing(connect(tmp_path / "evalboard.db")) as conn:
        campaign = create_campaign(conn, "v", answers_table(["a", "b"], 5), golden_rate=0, target=5, seed=1,
                                   overlap=1.0)
        first, second = (t.token for t in issue_tokens(conn, campaign, 2))
        voted = serve_next(conn, first)
        record_vote(conn, first, voted.assignment_id, {"overall": "tie"})
        pending = serve_next(conn, first)  # on the first annotator's screen, not voted on
        items = {}
        for _ in range(2):
            item = serve_next(conn, second)
            record_vote(conn, second, item.assignment_id, {"overall": "tie"})
            items[item.assignment_id] = conn.execute("SELECT query_id FROM campaign_assignments WHERE id = ?",
                                                     [item.assignment_id]).fetchone()[0]
        query_of = dict(conn.execute("SELECT id, query_id FROM campaign_assignments").fetchall())
    first_item, second_item = items.values()
    assert first_item == query_of[voted.assignment_id]  # the voted item is judged again at once
    assert second_item != query_of[pending.assignment_id]  # the pending one is not: nobody has judged it yet


def test_pair_counts_keep_their_bound_with_overlap(overlap_run):
    _, _, assignments, _ = overlap_run
    counts = Counter()
    for pair_id in assignments["pair_id"].dropna():
        counts[pair_id] += 1
        assert max(counts.values()) - min(counts.get(p, 0) for p in range(1, 11)) <= 1


def test_three_annotators_overlap_in_every_pair(tmp_path):
    conn, campaign = run_campaign(tmp_path / "evalboard.db", annotators=3, seed=4)
    with closing(conn):
        votes = vote_records(conn, campaign)
        shared = dict(((a, b), n) for a, b, n in conn.execute("SELECT token_hash, other, items FROM campaign_shared"))
    judges = overlap_items(votes)
    assert OVERLAP - SHARE_TOLERANCE <= (judges >= 2).mean() <= OVERLAP + 1e-9
    assert len(shared) == 6 and max(shared.values()) - min(shared.values()) <= 2


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n_models=st.integers(2, 4), n_queries=st.integers(1, 8), n_annotators=st.integers(1, 4),
       votes_each=st.integers(1, 30), overlap=st.sampled_from([0.0, 0.1, 0.5, 1.0]), overlap_k=st.integers(2, 4),
       seed=st.integers(0, 1000))
def test_small_campaigns_with_overlap_never_repeat_and_stay_balanced(tmp_path_factory, n_models, n_queries,
                                                                    n_annotators, votes_each, overlap, overlap_k, seed):
    conn = connect(tmp_path_factory.mktemp("small") / "evalboard.db")
    with closing(conn):
        models = [f"m{i}" for i in range(n_models)]
        campaign = create_campaign(conn, "small", answers_table(models, n_queries), golden_rate=0,
                                   target=votes_each, seed=seed, overlap=overlap, overlap_k=overlap_k)
        simulate(conn, [t.token for t in issue_tokens(conn, campaign, n_annotators)], votes_each, seed)
        served = pd.read_sql_query("SELECT token_hash, pair_id, query_id FROM campaign_assignments", conn)
        counters = conn.execute("SELECT sum(items_started), sum(items_shared) FROM campaign_pairs").fetchone()
    assert not served.duplicated(["token_hash", "pair_id", "query_id"]).any()
    n_pairs = n_models * (n_models - 1) // 2
    assert (served.groupby("token_hash").size() == min(votes_each, n_pairs * n_queries)).all()
    judges = served.groupby(["pair_id", "query_id"]).size()
    assert counters == (len(judges), int((judges >= 2).sum()))  # the counters a serve reads match the serves
    if votes_each <= n_queries:  # no annotator can exhaust a pair, so every draw is a least-shown pair
        counts = served.groupby("pair_id").size().reindex(range(1, n_pairs + 1), fill_value=0)
        assert counts.max() - counts.min() <= 1


def test_without_overlap_no_real_item_is_judged_twice(tmp_path):
    conn, campaign = run_campaign(tmp_path / "evalboard.db", overlap=0.0)
    with closing(conn):
        assert (overlap_items(vote_records(conn, campaign)) == 1).all()
        assert overlap_count(conn, campaign).items_2plus == 0


def test_overlap_items_reach_k_annotators(tmp_path):
    conn, campaign = run_campaign(tmp_path / "evalboard.db", overlap_k=3)
    with closing(conn):
        judges = overlap_items(vote_records(conn, campaign))
        assert OVERLAP - 2 * SHARE_TOLERANCE <= (judges >= 2).mean() <= OVERLAP + 1e-9
        # items on their way to 3 annotators are completed first: at most a few are left at 2
        assert (judges >= 3).sum() >= 0.9 * (judges >= 2).sum() and judges.max() == 3


def test_revoked_annotators_get_no_new_overlap_partner(tmp_path):
    conn = connect(tmp_path / "evalboard.db")
    with closing(conn):
        campaign = create_campaign(conn, "r", answers_table(MODELS, 60), golden_rate=0, target=60, seed=1,
                                   overlap=0.5)
        first, second, third = (t.token for t in issue_tokens(conn, campaign, 3))
        simulate(conn, [first], 20)
        conn.execute("UPDATE campaign_tokens SET revoked = 1 WHERE token_hash = (SELECT token_hash FROM "
                     "campaign_assignments ORDER BY id LIMIT 1)")
        simulate(conn, [second], 20)
        shared = dict(conn.execute("SELECT other, items FROM campaign_shared WHERE token_hash = (SELECT token_hash "
                                   "FROM campaign_assignments ORDER BY id DESC LIMIT 1)").fetchall())
        assert len(shared) == 0  # the only other annotator with votes is revoked
        simulate(conn, [third], 20)
        assert len(conn.execute("SELECT DISTINCT other FROM campaign_shared WHERE items > 0").fetchall()) == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"overlap": 1.5}, r"overlap must lie in \[0, 1\]"),
    ({"overlap": -0.1}, r"overlap must lie in \[0, 1\]"),
    ({"overlap": float("nan")}, r"overlap must lie in \[0, 1\]"),
    ({"overlap_k": 1}, "overlap_k must be a whole number"),
    ({"overlap_k": 2.5}, "overlap_k must be a whole number"),
])
def test_bad_overlap_settings_change_nothing(db_path, kwargs, message):
    with closing(connect(db_path)) as conn:
        before = snapshot(db_path)
        with pytest.raises(CampaignError, match=message):
            create_campaign(conn, "bad", answers_table(MODELS, 3), golden_rate=0, **kwargs)
        assert snapshot(db_path) == before


# -- golden supply ---------------------------------------------------------------------------------
def test_a_short_golden_pool_lasts_the_whole_session(tmp_path):
    conn = connect(tmp_path / "evalboard.db")
    with closing(conn):
        campaign = create_campaign(conn, "gold", answers_table(MODELS, 30), golden_table(5), golden_rate=0.2,
                                   target=100, seed=3)
        tokens = [t.token for t in issue_tokens(conn, campaign, 3)]
        simulate(conn, tokens, 100)
        served = pd.read_sql_query("SELECT token_hash, seq, golden_id FROM campaign_assignments", conn)
    assert (served.groupby("token_hash").size() == 100).all()
    for _, serves in served.groupby("token_hash"):
        golden = serves.dropna(subset=["golden_id"]).sort_values("seq")
        assert golden["golden_id"].nunique() == len(golden) == 5  # min(pool 5, planned 20), never repeated
        # one per block of 20 serves: the last comes after item 80, none two blocks apart
        assert list((golden["seq"] - 1) // 20) == [0, 1, 2, 3, 4]
        assert golden["seq"].max() > 80


def test_golden_positions_are_one_per_block_and_differ_between_annotators():
    plans = [sorted(golden_positions(7, f"annotator-{i}", 100, 20)) for i in range(30)]
    for plan in plans:
        assert [(p - 1) // 5 for p in plan] == list(range(20))
    assert len({tuple(p) for p in plans}) == 30
    gaps = {b - a for plan in plans for a, b in zip(plan, plan[1:])}
    assert min(gaps) == 1 and max(gaps) >= 8  # the gap after one golden item varies from 1 to ~2 blocks


def test_the_constant_time_golden_check_agrees_with_the_whole_plan():
    for length in range(1, 45):
        for count in range(0, length + 2):
            plan = golden_positions(5, "x", length, count)
            assert len(plan) == min(count, length)
            assert plan == {seq for seq in range(-1, length + 3) if is_golden_serve(5, "x", length, count, seq)}


@pytest.mark.parametrize("pool, rate, target, planned, per_annotator, short, refused", [
    (5, 0.2, 100, 20, 5, True, False),
    (20, 0.2, 100, 20, 20, False, False),
    (2, 0.2, 100, 20, 2, True, True),
    (MIN_GOLDEN, 0.5, 100, 50, MIN_GOLDEN, True, False),
    (1, 0.1, 5, 1, 1, False, False),  # a plan of 1 needs a pool of 1 (with a warning: not evaluable)
    (0, 0.0, 100, 0, 0, False, False),
])
def test_golden_supply(pool, rate, target, planned, per_annotator, short, refused):
    supply = golden_supply(pool, rate, target)
    assert (supply.planned, supply.per_annotator, supply.short, supply.refused) == (
        planned, per_annotator, short, refused)


def test_a_golden_pool_too_small_for_the_minimum_is_refused(db_path):
    with closing(connect(db_path)) as conn:
        before = snapshot(db_path)
        with pytest.raises(CampaignError, match="each annotator needs at least 3"):
            create_campaign(conn, "few", answers_table(MODELS, 3), golden_table(2), golden_rate=0.2, target=100)
        assert snapshot(db_path) == before


def write_files(tmp_path, n_golden: int):
    answers = tmp_path / "answers.csv"
    answers_table(MODELS, 30).drop(columns=["category", "game_id"]).to_csv(answers, index=False)
    golden = tmp_path / "golden.csv"
    golden_table(n_golden).drop(columns="category").to_csv(golden, index=False)
    return str(answers), str(golden)


def test_cli_prints_the_supply_and_warns_when_the_pool_is_short(tmp_path, db_path, capsys):
    answers, golden = write_files(tmp_path, 5)
    code = main(["campaign", "create", "short", "--answers", answers, "--golden", golden, "--golden-rate", "0.2",
                 "--target", "100", "--tokens", "2", "--overlap", "0.2", "--overlap-k", "3"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "plan 20 golden items (rate 0.2); the pool has 5, so each annotator meets 5" in out
    assert "overlap 20% of items judged by 3 annotators" in out
    assert "warning: the golden pool (5 items) is short of the 20" in err and "add 15 golden items" in err
    campaign = get_campaign(connect(db_path), "short")
    assert (campaign.overlap, campaign.overlap_k) == (0.2, 3)


@pytest.mark.parametrize("args, message", [
    (["--golden-rate", "0.2"], "the golden pool has 2 items but each annotator needs at least 3"),
    (["--overlap", "1.2"], "overlap must lie in [0, 1]"),
    (["--overlap-k", "1"], "overlap_k must be a whole number"),
])
def test_cli_refuses_and_stores_nothing(tmp_path, db_path, capsys, args, message):
    answers, golden = write_files(tmp_path, 2)
    code = main(["campaign", "create", "few", "--answers", answers, "--golden", golden, "--target", "100", *args])
    assert code == 2 and message in capsys.readouterr().err
    assert main(["campaign", "status"]) == 0 and capsys.readouterr().out == ""


def test_cli_status_counts_items_judged_by_two_or_more(tmp_path, db_path, capsys):
    answers, golden = write_files(tmp_path, 10)
    assert main(["campaign", "create", "st", "--answers", answers, "--golden", golden, "--target", "40",
                 "--tokens", "3", "--overlap", "0.25"]) == 0
    tokens = [line.split("\t")[1] for line in capsys.readouterr().out.splitlines() if "\t" in line]
    with closing(connect(db_path)) as conn:
        simulate(conn, tokens, 40)
        expected = overlap_count(conn, get_campaign(conn, "st"))
    assert expected.items_2plus > 0
    assert main(["campaign", "status", "st"]) == 0
    out = capsys.readouterr().out
    assert (f"real items judged: {expected.items:,}; by 2+ annotators: {expected.items_2plus:,} "
            f"({expected.items_2plus / expected.items:.1%}) [overlap 25% of items judged by 2 annotators]") in out
    assert main(["campaign", "status", "st", "--format", "json"]) == 0
    status = __import__("json").loads(capsys.readouterr().out)
    assert (status["overlap"], status["overlap_k"], status["real_items_judged_2plus"]) == (
        0.25, 2, expected.items_2plus)


# -- files made before overlap ---------------------------------------------------------------------
COUNTERS = ("SELECT id, items, items_started, items_shared, items_complete FROM campaign_pairs ORDER BY id",
            "SELECT pair_id, query_id, first_token FROM campaign_pair_queries ORDER BY pair_id, query_id",
            "SELECT token_hash, other, items FROM campaign_shared ORDER BY token_hash, other")


def to_version_1(db) -> None:
    """The file as version 1 made it: no overlap settings, counters, first annotators or shared counts."""
    with closing(sqlite3.connect(db)) as con:
        con.execute("DROP TABLE campaign_shared")
        con.execute("DROP INDEX campaign_pair_queries_by_first")
        con.execute("DROP INDEX campaign_assignments_by_item")
        for table, column in [("campaign_campaigns", "overlap"), ("campaign_campaigns", "overlap_k"),
                              ("campaign_pairs", "items"), ("campaign_pairs", "items_started"),
                              ("campaign_pairs", "items_shared"), ("campaign_pairs", "items_complete"),
                              ("campaign_pair_queries", "first_token")]:
            con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        con.execute("PRAGMA user_version = 1")
        con.commit()


def test_a_campaign_from_before_overlap_opens_and_keeps_its_schedule(tmp_path):
    db = tmp_path / "evalboard.db"
    with closing(connect(db)) as conn:
        campaign = create_campaign(conn, "old", answers_table(MODELS, 20), golden_rate=0, target=30, seed=2,
                                   overlap=0.0)
        tokens = [t.token for t in issue_tokens(conn, campaign, 2)]
        simulate(conn, tokens, 10)
    to_version_1(db)
    with closing(connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        campaign = get_campaign(conn, "old")
        assert (campaign.overlap, campaign.overlap_k) == (0.0, 2)
        items, started, shared = conn.execute("SELECT sum(items), sum(items_started), sum(items_shared) "
                                              "FROM campaign_pairs").fetchone()
        assert (items, started, shared) == (20 * 10, 20, 0)  # 20 queries × 10 pairs; 2 annotators × 10 items
        item = serve_next(conn, tokens[0])
        assert record_vote(conn, tokens[0], item.assignment_id, {"overall": "tie"})


def test_the_migration_rebuilds_every_overlap_counter(tmp_path):
    db = tmp_path / "evalboard.db"
    with closing(connect(db)) as conn:
        campaign = create_campaign(conn, "shared", answers_table(MODELS, 20), golden_rate=0, target=30, seed=2,
                                   overlap=0.5)
        simulate(conn, [t.token for t in issue_tokens(conn, campaign, 3)], 30)
        before = [conn.execute(q).fetchall() for q in COUNTERS]
    assert len(before[2]) == 6  # every ordered pair of the 3 annotators shares items
    to_version_1(db)
    with closing(connect(db)) as conn:
        assert [conn.execute(q).fetchall() for q in COUNTERS] == before
