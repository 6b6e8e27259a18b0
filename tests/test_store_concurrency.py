"""Publishing while annotators vote, and publishes at once.

The eight-process test is marked ``stress`` (60 s of voting, plus the processes' start-up): ``pytest -m
stress`` runs it alone; ``make test`` runs it with the rest.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import pages._campaign_admin as campaign_admin
from core.campaign import (
    campaign_of_dataset,
    create_campaign,
    issue_tokens,
    publish,
    read_answers,
    record_vote,
    serve_next,
    vote_records,
)
from core.store import Store
from core.store.connection import connect
from core.store.transactions import StoreBusy
from tests.test_app_data import run
from tests.test_app_vote import APP, app, campaign_tokens, fixed_tokens  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parents[1]
VOTERS = 8
VOTE_SECONDS = 60
PUBLISHES = 5
MODELS = [f"model-{i}" for i in range(8)]  # 28 pairs x 300 queries: more items than anyone can judge in 60 s
QUERIES = 300
DIMENSIONS = ("overall", "style")


def answers_csv() -> bytes:
    lines = ["query_id,prompt,model,answer"]
    lines += [f"q{q},Question {q}?,{m},Answer {q} of {m}." for q in range(QUERIES) for m in MODELS]
    return "\n".join(lines).encode()


def cli_publish(db: Path, name: str) -> tuple[subprocess.CompletedProcess, float]:
    """``evalboard campaign publish`` in a new process, and the seconds it took after Python had started
    and imported the CLI (on a machine this busy, start-up alone can take longer than the publish)."""
    script = ("import sys, time; from core.cli import main; t = time.monotonic(); code = main(sys.argv[1:]); "
              "print(f'publish-seconds {time.monotonic() - t:.3f}', file=sys.stderr); sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", script, "campaign", "publish", name, "--db", str(db)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    seconds = [float(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("publish-seconds ")]
    return proc, seconds[0] if seconds else float("nan")


@pytest.mark.stress
def test_publishes_succeed_while_eight_processes_vote(tmp_path):
    db = tmp_path / "store.db"
    with closing(connect(db)) as conn:
        campaign = create_campaign(conn, "load", read_answers(answers_csv(), name="answers.csv"),
                                   dimensions=DIMENSIONS, golden_rate=0.0, target=100_000, seed=1)
        tokens = [t.token for t in issue_tokens(conn, campaign, VOTERS)]
    reports = [tmp_path / f"voter-{i}.json" for i in range(VOTERS)]
    go = tmp_path / "go"
    voters = [subprocess.Popen([sys.executable, "-m", "tests.stress_voter", str(db), token, str(VOTE_SECONDS),
                                str(i), str(report), str(go)], cwd=REPO, stderr=subprocess.PIPE, text=True)
              for i, (token, report) in enumerate(zip(tokens, reports))]
    try:
        ready_by = time.monotonic() + 300  # starting eight Python processes on a busy machine takes a while
        while not all(Path(f"{r}.ready").exists() for r in reports):
            assert time.monotonic() < ready_by and all(v.poll() is None for v in voters), "a voter did not start"
            time.sleep(0.05)
        go.touch()
        rng = random.Random(14)
        started = time.monotonic()
        moments = sorted(rng.uniform(5, VOTE_SECONDS - 5) for _ in range(PUBLISHES))
        published, failures, seconds = [], [], []
        for k, moment in enumerate(moments):
            time.sleep(max(0.0, started + moment - time.monotonic()))
            if k % 2 == 0:  # the CLI ...
                proc, took = cli_publish(db, "load")
                if proc.returncode != 0:
                    failures.append(f"CLI publish exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
            else:  # ... and the call behind the sidebar's refresh button
                t0 = time.monotonic()
                try:
                    published.append(publish(db, "load").rows)
                except Exception as exc:  # noqa: BLE001 - collected and asserted below
                    failures.append(f"publish(): {type(exc).__name__}: {exc}")
                took = time.monotonic() - t0
            seconds.append(round(took, 2))
        exits = [v.wait(timeout=VOTE_SECONDS + 120) for v in voters]
    finally:
        for v in voters:
            if v.poll() is None:
                v.kill()
    print(f"publish seconds (CLI, API alternately): {seconds}")
    assert not failures, failures
    assert exits == [0] * VOTERS, [v.stderr.read()[-2000:] for v in voters]

    stored, doubles, errors = [], [], []
    for report in reports:
        data = json.loads(report.read_text())
        stored += data["stored"]
        doubles += data["doubles"]
        errors += data["errors"]
    assert not errors, errors[:3]
    assert len(stored) > VOTERS * 10  # everybody really voted
    assert len(stored) == len(set(stored))
    assert doubles and not any(again for _, again in doubles)  # a double submit never stores a second vote
    print(f"votes stored: {len(stored)}, double submits: {len(doubles)}")

    with closing(connect(db)) as conn:
        per_item = dict(conn.execute("SELECT assignment_id, count(*) FROM campaign_votes GROUP BY assignment_id"))
        assert per_item == dict.fromkeys(stored, len(DIMENSIONS))  # every vote stored exactly once
        voted = {r[0] for r in conn.execute("SELECT id FROM campaign_assignments WHERE voted = 1")}
        assert voted == set(stored)
        done = conn.execute("SELECT sum(done) FROM campaign_tokens").fetchone()[0]
        assert done == len(stored)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        expected_rows = len(vote_records(conn, campaign))

    assert published == sorted(published)  # votes only grow
    final = publish(db, "load")
    assert final.rows == expected_rows == len(stored) * len(DIMENSIONS)
    with Store(db) as store:
        assert [d.id for d in store.datasets()] == [final.id]  # each publish replaced the one before


def test_publishes_at_once_leave_exactly_one_snapshot(tmp_path):
    """Two analysts refreshing at the same moment while votes arrive: each publish replaces the snapshot
    it found in the same transaction, so none fails on a snapshot the other already removed."""
    db = tmp_path / "store.db"
    with closing(connect(db)) as conn:
        campaign = create_campaign(conn, "twice", read_answers(answers_csv(), name="answers.csv"),
                                   dimensions=("overall",), golden_rate=0.0, target=1_000, seed=2)
        (token,) = [t.token for t in issue_tokens(conn, campaign, 1)]
        item = serve_next(conn, token)
        record_vote(conn, token, item.assignment_id, {"overall": "tie"})
    errors: list[BaseException] = []
    stop = threading.Event()

    def keep_voting() -> None:
        with closing(connect(db)) as own:
            while not stop.is_set():
                served = serve_next(own, token)
                record_vote(own, token, served.assignment_id, {"overall": "model_a"})

    def keep_publishing() -> None:
        try:
            for _ in range(4):
                publish(db, "twice")
        except BaseException as exc:  # noqa: BLE001 - asserted below
            errors.append(exc)

    voter = threading.Thread(target=keep_voting)
    publishers = [threading.Thread(target=keep_publishing) for _ in range(4)]
    voter.start()
    for t in publishers:
        t.start()
    for t in publishers:
        t.join()
    stop.set()
    voter.join()
    assert not errors, errors
    final = publish(db, "twice")
    with Store(db) as store:
        snapshots = [d for d in store.datasets() if campaign_of_dataset(d) == "twice"]
    with closing(connect(db)) as conn:
        assert [d.id for d in snapshots] == [final.id] and final.rows == len(vote_records(conn, campaign))


def test_refresh_reports_a_store_that_stays_busy(app, campaign_tokens, monkeypatch):
    """Past every retry the sidebar says so and keeps the snapshot it had, instead of a traceback."""
    conn, _, (token, _) = campaign_tokens
    item = serve_next(conn, token)
    record_vote(conn, token, item.assignment_id, {"overall": "model_a", "style": "tie"})
    first = publish(Store().path, "ab")
    at = run(AppTest.from_file(APP, default_timeout=60))

    def busy(*args, **kwargs):
        raise StoreBusy("the store stayed locked by other writers for 40 s (8 attempts); nothing was written")

    monkeypatch.setattr(campaign_admin, "publish", busy)
    at.button(key="campaign_refresh").click()
    run(at)
    assert not at.exception
    assert "Not refreshed: the store could not be written" in " ".join(e.value for e in at.error)
    with Store() as store:
        assert [d.id for d in store.datasets()] == [first.id]
