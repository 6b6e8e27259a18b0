"""The human-evaluation workflow end to end, as a team lead runs it, on fake providers on loopback.

AlpacaEval-like pool -> ``evalset build`` (offline) -> ``collect run`` for 4 models on two providers,
interrupted by Ctrl-C, then a provider failing, then resumed -> ``campaign create`` with golden items and
two dimensions -> three simulated annotators voting through the core API (careful, reversed, random-fast)
-> ``campaign publish`` twice with votes in between -> ``rank``, ``annotators`` and ``bias`` (JSON) on the
published dataset. The counts of the three outputs must agree with each other and with the campaign's own
counts, the careless annotators must be flagged, and the careful annotator's ranking must recover the
true order of the models.

Along the way: the pool is read with ``--map``; Ctrl-C keeps the answers in flight; the campaign judges
10 % of real items twice and agreement is measured on those; both publishes keep one name and id, and the
first publish's name still works; every analysis calls the annotators by their owner's names, counts
judged items of one dimension and applies one annotator policy, and says so.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from core.campaign import get_campaign, progress
from core.cli import main
from core.store import Store
from core.store.connection import connect
from tests.fake_openai import FakeOpenAI, Fault
from tests.workflow_support import Annotator, Oracle, alpaca_like_pool, interleave, styled_responder, write_models

REPO = Path(__file__).resolve().parents[1]
KEY_ENV = "EVALBOARD_TEST_E2E_KEY"
CAMPAIGN = "e2e"
DIMENSIONS = ("overall", "helpfulness")
SIZE, TARGET, ROUND, GOLDEN_RATE = 30, 60, 30, 0.25
# display name -> (provider, server index, model id); strengths on the Bradley–Terry logit scale
MODELS = {"atlas": ("acme", 0, "atlas-v1"), "birch": ("acme", 0, "birch-v2"),
          "cedar": ("zenith", 1, "cedar-v3"), "dune": ("zenith", 1, "dune-v4")}
STRENGTH = {"atlas": 6.0, "cedar": 4.0, "birch": 2.0, "dune": 0.0}
TRUE_ORDER = sorted(STRENGTH, key=STRENGTH.get, reverse=True)
STYLES = {"atlas-v1": "A thorough", "birch-v2": "A brief", "cedar-v3": "A careful", "dune-v4": "A hasty"}
# Enough golden items for the rate and target (15 each on average), so none runs out; with 60 items the
# reversed annotator answers fewer than the 3 golden items a verdict needs with probability ~1e-5.
GOLDEN = [(f"What is {a} + {2 * a + 1}?", str(3 * a + 1), str(3 * a + 2)) for a in range(2, 22)]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *argv: str) -> dict:
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


# --- what each part must do ----------------------------------------------------------------------------

def build_evalset(capsys, pool: pd.DataFrame, tmp: Path, db: Path) -> pd.DataFrame:
    """AlpacaEval's columns are read as they are (``--map``); the set has exactly ``--size`` queries."""
    pool.to_csv(tmp / "pool.csv", index=False)
    code, out, err = cli(capsys, "evalset", "build", str(tmp / "pool.csv"), "--size", str(SIZE), "--output",
                         str(tmp / "evalset.csv"), "--seed", "1", "--db", str(db), "--map", "prompt=instruction")
    assert code == 0, err
    table = pd.read_csv(tmp / "evalset.csv", dtype=str)
    assert len(table) == SIZE  # the buffer is kept as reserves, apart
    assert table["query_id"].is_unique and set(table["prompt"]) <= set(pool["instruction"])
    assert f"selected {len(table)} of {len(pool)} queries" in out
    return table


def check_ctrl_c(code: int, err: str, stored: int, asked: int) -> None:
    """``stored`` answers in the store after Ctrl-C, ``asked`` requests the providers received."""
    assert code == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == f"interrupted: {stored} answers stored; run again to resume", err
    assert asked == stored  # requests in flight finished within the grace period and were kept


def check_old_name(capsys, db: Path, first_name: str, current: str) -> None:
    """A script that ranked yesterday's name ranks today's votes; so does the campaign's own name."""
    code, _, err = cli(capsys, "rank", first_name, "--ci", "none", "--db", str(db))
    assert code == 0, err
    by_campaign = cli_json(capsys, "rank", CAMPAIGN, "--ci", "none", "--db", str(db))
    assert by_campaign == cli_json(capsys, "rank", current, "--ci", "none", "--db", str(db))
    code, _, err = cli(capsys, "rank", "campaign e2f", "--ci", "none", "--db", str(db))
    assert code == 2 and f"did you mean 'campaign {CAMPAIGN}'" in err, err


def check_agreement(capsys, db: Path, name: str, votes: pd.DataFrame) -> None:
    """Agreement is measured on real items judged by 2+ annotators (the campaign's default overlap, 10 %),
    among the annotators the policy keeps: under ``exclude`` only the careful one is left, so there is none."""
    excluded = cli_json(capsys, "annotators", name, "--db", str(db))["agreement"]
    assert excluded["n_items"] == 0 and excluded["krippendorff_alpha"] is None
    assert excluded["reason"].startswith("not enough overlap: 0 items judged by two or more annotators")
    agreement = cli_json(capsys, "annotators", name, "--policy", "keep", "--db", str(db))["agreement"]
    real = votes[~votes["is_golden"].astype(bool)]
    n_items = len({(q, tuple(sorted(p))) for q, *p in real[["query_id", "model_a", "model_b"]].itertuples(index=False)})
    real_shared = _items_rated_by_two_or_more(real)
    assert len(real_shared) >= int(0.1 * n_items), (len(real_shared), n_items)  # held at every serve
    assert agreement["n_items"] == len(real_shared)  # golden items apart
    enough = agreement["n_items"] >= agreement["min_overlap_items"]
    assert (agreement["krippendorff_alpha"] is not None) == enough and (agreement.get("reason") is None) == enough


def check_counts(rank: dict, bias: dict, annotators: dict, status: dict, votes: pd.DataFrame,
                 unqualified: set[str]) -> None:
    """rank, bias and annotators count the same judged items of one dimension, under one policy."""
    per = {a["annotator"]: a for a in status["annotators"]}
    real_items = {a: row["done"] - row["golden_done"] for a, row in per.items()}
    golden_items = {a: row["golden_done"] for a, row in per.items()}
    # a published golden item is one row (its first dimension); a real one is one row per dimension
    rows = {a: len(DIMENSIONS) * real_items[a] + golden_items[a] for a in per}
    assert votes.groupby("annotator_id").size().to_dict() == rows
    assert {a["annotator_id"]: a["n_votes"] for a in annotators["annotators"]} == {
        a: real_items[a] + golden_items[a] for a in per}  # judged items, however many dimensions
    assert {a["annotator_id"]: a["n_golden"] for a in annotators["annotators"]} == golden_items
    qualified = set(per) - unqualified
    assert rank["n_votes"] == sum(real_items[a] for a in qualified)  # the first dimension only
    policy = rank["params"]["annotator_policy"]
    assert policy["policy"] == "exclude" and set(policy["unqualified_annotators"]) == unqualified
    # on the analysed dimension, one judgement per item left out (golden ones included)
    assert policy["judgements_left_out"] == policy["items_left_out"] == sum(
        real_items[a] + golden_items[a] for a in unqualified)
    assert bias["n_votes"] == rank["n_votes"]
    assert bias["annotator_policy"] == annotators["annotator_policy"] == policy
    assert bias["n_golden"] == sum(golden_items[a] for a in qualified)


def _items_rated_by_two_or_more(votes: pd.DataFrame) -> set[tuple[str, tuple[str, str]]]:
    pairs = [tuple(sorted(p)) for p in zip(votes["model_a"].astype(str), votes["model_b"].astype(str))]
    frame = votes.assign(pair=pairs, query=votes["query_id"].astype(str))
    raters = frame.groupby(["query", "pair"])["annotator_id"].nunique()
    return set(raters[raters >= 2].index)


# --- the workflow -----------------------------------------------------------------------------------------

@pytest.fixture
def providers():
    # Slow enough at first (a model's 30 answers take 7.5 s) that Ctrl-C lands with most answers missing.
    made = [FakeOpenAI(responder=styled_responder(STYLES), latency_s=0.25),
            FakeOpenAI(responder=styled_responder(STYLES), latency_s=0.25)]
    try:
        yield made
    finally:
        for server in made:
            server.stop()


def stored_answers(db: Path) -> list[tuple[str, str]]:
    """The (query, model) pairs answered so far, read without writing (the collector may be writing)."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute("SELECT query_id, model FROM collect_answers").fetchall()
    except sqlite3.OperationalError as exc:  # the collector has not made its tables yet
        if "no such table" not in str(exc):
            raise
        return []
    finally:
        conn.close()


def collect_interrupted_then_resumed(capsys, providers, tmp: Path, db: Path, monkeypatch, n_queries: int) -> None:
    models = write_models(tmp / "models.toml", {name: (provider, providers[i].base_url, model_id)
                                                for name, (provider, i, model_id) in MODELS.items()}, KEY_ENV)
    argv = ["collect", "run", "--models", str(models), "--queries", str(tmp / "evalset.csv"), "--run", "r1",
            "--db", str(db)]
    expected = n_queries * len(MODELS)
    env = {**os.environ, KEY_ENV: "sk-e2e", "PYTHONPATH": str(REPO)}
    # Ctrl-C's default action restored in the child: a shell starts background jobs with SIGINT ignored, and
    # Python keeps an ignored SIGINT ignored (the collector would then never see the signal).
    proc = subprocess.Popen([sys.executable, "-m", "core.cli", *argv], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while len(stored_answers(db)) < expected // 10 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    before = set(stored_answers(db))
    assert expected // 10 <= len(before) < expected, (proc.returncode, len(before), err)
    check_ctrl_c(proc.returncode, err, len(before), sum(len(s.requests) for s in providers))

    for server in providers:  # no need to wait any more: nothing else is interrupted
        server.latency_s = 0.02
    # The zenith provider refuses the key: its models stop, acme's go on; exit 1 says the run is incomplete.
    monkeypatch.setenv(KEY_ENV, "sk-e2e")
    for server in providers:
        server.reset_counts()
    providers[1].fault_for = lambda path, request: Fault(status=401)
    code, out, _ = cli(capsys, *argv)
    assert code == 1, out
    assert {line.split()[0] for line in out.splitlines() if "STOPPED" in line} == {"cedar", "dune"}, out
    assert "run it again to ask for them" in out
    prompts = dict(pd.read_csv(tmp / "evalset.csv", dtype=str)[["query_id", "prompt"]].itertuples(index=False))
    ids = {name: model_id for name, (_, _, model_id) in MODELS.items()}

    def asked_again(stored: set[tuple[str, str]]) -> set[tuple[str, str]]:
        asked = {(b["messages"][-1]["content"], b["model"]) for s in providers for _, b, _ in s.requests}
        return {(prompts[q], ids[m]) for q, m in stored} & asked

    assert providers[1].requests and not asked_again(before)
    middle = set(stored_answers(db))
    assert {m for _, m in middle - before} == {"atlas", "birch"} and len(middle) < expected

    providers[1].fault_for = None
    for server in providers:
        server.reset_counts()
    code, out, err = cli(capsys, *argv)
    assert code == 0, out + err
    after = stored_answers(db)
    assert len(after) == len(set(after)) == expected  # every answer exactly once
    assert not asked_again(middle)  # a resume asks only for what is missing


def test_the_workflow_end_to_end(providers, tmp_path, capsys, monkeypatch):
    db = tmp_path / "evalboard.db"
    pool = alpaca_like_pool(60, seed=3)
    evalset = build_evalset(capsys, pool, tmp_path, db)
    collect_interrupted_then_resumed(capsys, providers, tmp_path, db, monkeypatch, len(evalset))

    answers = tmp_path / "answers.csv"
    code, out, err = cli(capsys, "collect", "export", "--run", "r1", "--output", str(answers), "--db", str(db))
    assert code == 0 and f"wrote {len(evalset) * len(MODELS)} answers" in out, err
    texts = " ".join(pd.read_csv(answers, dtype=str)["answer"])
    assert not any(m in texts for m in (*MODELS, *STYLES))  # no answer names its model
    pd.DataFrame(GOLDEN, columns=["question", "correct_answer", "wrong_answer"]).to_csv(tmp_path / "golden.csv",
                                                                                      index=False)
    labels = ("careful", "reversed", "random-fast")
    code, out, err = cli(capsys, "campaign", "create", CAMPAIGN, "--answers", str(answers), "--golden",
                         str(tmp_path / "golden.csv"), "--dimensions", ",".join(DIMENSIONS), "--golden-rate",
                         str(GOLDEN_RATE), "--target", str(TARGET), "--annotators", ",".join(labels), "--seed", "5",
                         "--db", str(db))
    assert code == 0, err
    tokens = dict(line.split("\t") for line in out.splitlines() if "\t" in line)
    assert set(tokens) == set(labels)

    conn = connect(db)
    try:
        oracle = Oracle.from_store(conn, {name: STRENGTH[name] for name in MODELS})
        people = [Annotator(kind, tokens[label], seed=i)
                  for i, (kind, label) in enumerate(zip(("careful", "reversed", "random_fast"), labels))]
        interleave(conn, oracle, people, ROUND)
        first = publish(capsys, db)
        # what the first snapshot holds: a real item once per dimension, a golden item once
        assert first["rows"] == sum(len(DIMENSIONS) * (a.votes - a.golden) + a.golden for a in people)
        interleave(conn, oracle, people, TARGET - ROUND)
        assert all(a.votes == TARGET for a in people)
        assert all(a.judge(conn, oracle, 1) == 0 for a in people)  # the target reached: nothing more is served
        campaign = get_campaign(conn, CAMPAIGN)
        ids = dict(progress(conn, campaign)[["annotator_id", "annotator"]].itertuples(index=False))
    finally:
        conn.close()
    second = publish(capsys, db)
    assert first["name"] == second["name"] == f"campaign {CAMPAIGN}" and first["id"] == second["id"]
    check_old_name(capsys, db, f"campaign {CAMPAIGN} (40 votes)", second["name"])

    with Store(db) as store:
        assert [d.name for d in store.datasets()] == [second["name"]]  # the first snapshot is gone
        votes = store.load(store.dataset(second["name"]).id)
    status = cli_json(capsys, "campaign", "status", CAMPAIGN, "--format", "json", "--db", str(db))
    assert [a["done"] for a in status["annotators"]] == [TARGET] * 3
    name = second["name"]
    rank = cli_json(capsys, "rank", name, "--bootstrap", "200", "--db", str(db))
    annotators = cli_json(capsys, "annotators", name, "--db", str(db))
    bias = cli_json(capsys, "bias", name, "--db", str(db))

    # Every analysis calls the annotators by the names their owner gave them, never by the hashed ids.
    for output in (rank, annotators, bias):
        assert not any(hashed in json.dumps(output) for hashed in ids), output
    assert set(votes["annotator_id"]) == set(labels)
    status_of = {a["annotator_id"]: a["status"] for a in annotators["annotators"]}
    assert status_of == {"careful": "qualified", "reversed": "unqualified", "random-fast": "unqualified"}
    reasons = {a["annotator_id"]: " ".join(a["reasons"]) for a in annotators["annotators"]}
    assert "golden accuracy" in reasons["reversed"]
    assert "faster than 3 s" in reasons["random-fast"]
    unqualified = {"reversed", "random-fast"}
    assert rank["params"]["annotators"] == "exclude"
    assert set(rank["params"]["unqualified_annotators"]) == unqualified
    assert set(annotators["exclusion_effect"]["unqualified_annotators"]) == unqualified
    check_counts(rank, bias, annotators, status, votes, unqualified)
    check_agreement(capsys, db, name, votes)

    # Only the careful annotator is left: their ranking recovers the true order. Each dimension alone has half
    # the votes: at most one pair of models out of order (tokens are random, so are the scheduler's draws;
    # over 200 simulated campaigns the whole order was exact in all, each dimension within one swap in all).
    assert [m["model"] for m in rank["models"]] == TRUE_ORDER
    by_dim = cli_json(capsys, "rank", name, "--by", "dimension", "--ci", "none", "--db", str(db))
    assert sorted(g["group"]["dimension"] for g in by_dim["groups"]) == sorted(DIMENSIONS)
    for group in by_dim["groups"]:
        assert discordant_pairs([m["model"] for m in group["models"]], TRUE_ORDER) <= 1, group
    # Keeping everyone counts the unqualified annotators' votes too, and says how many they are.
    kept = cli_json(capsys, "rank", name, "--annotators", "keep", "--ci", "none", "--db", str(db))
    assert kept["params"]["annotators"] == "keep"
    assert kept["params"]["unqualified_votes"] == rank["params"]["unqualified_votes"]
    assert kept["n_votes"] == sum(a.votes - a.golden for a in people)
    assert not any(m["model"].startswith("golden:") for m in rank["models"] + kept["models"])


def discordant_pairs(order: list[str], truth: list[str]) -> int:
    """Kendall's distance: the pairs of models ``order`` puts the other way round from ``truth``."""
    position = [truth.index(m) for m in order]
    return sum(position[i] > position[j] for i in range(len(position)) for j in range(i + 1, len(position)))


def publish(capsys, db: Path) -> dict:
    code, out, err = cli(capsys, "campaign", "publish", CAMPAIGN, "--db", str(db))
    assert code == 0, err
    with Store(db) as store:
        (dataset,) = [d for d in store.datasets() if d.source == f"campaign:{CAMPAIGN}"]
    assert f"stored as dataset '{dataset.name}' (id {dataset.id})" in out
    return {"name": dataset.name, "id": dataset.id, "rows": dataset.rows}
