"""``evalboard collect``: run, status, export, exit codes, and a collector killed midway then resumed."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.campaign.inputs import read_answers
from core.cli import main
from core.collect.results import ModelProgress, Progress
from core.collect.store import CollectStore
from core.commands.collect import TerminalProgress
from tests.fake_openai import FakeOpenAI, Fault

REPO = Path(__file__).resolve().parents[1]
KEY_ENV = "EVALBOARD_TEST_CLI_KEY"
SECRET = "sk-cli-59e2-never-printed"


@pytest.fixture
def servers():
    made = [FakeOpenAI(), FakeOpenAI()]
    try:
        yield made
    finally:
        for server in made:
            server.stop()


def write_models(path: Path, servers, **extra) -> Path:
    blocks = ["[defaults]\nmax_tokens = 256\n"]
    for name, server, provider in (("alpha", servers[0], "openai"), ("beta", servers[1], "gemini")):
        blocks.append(f'[[models]]\nname = "{name}"\nprovider = "{provider}"\nbase_url = "{server.base_url}"\n'
                      f'model = "{name}-id"\napi_key_env = "{KEY_ENV}"\n'
                      + "".join(f"{k} = {v}\n" for k, v in extra.items()))
    path.write_text("\n".join(blocks))
    return path


def write_queries(path: Path, n: int) -> Path:
    path.write_text("query_id,prompt,category\n" + "".join(f"q{i:03d},question {i}?,cat{i % 2}\n" for i in range(n)))
    return path


def pairs(db: Path) -> list[tuple]:
    with CollectStore(db) as store:
        return store.con.execute("SELECT query_id, model FROM collect_answers").fetchall()


def test_run_status_export(servers, tmp_path, db_path, capsys, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    models, queries = write_models(tmp_path / "models.toml", servers), write_queries(tmp_path / "q.csv", 6)
    base = ["--db", str(db_path)]
    assert main(["collect", "run", "--models", str(models), "--queries", str(queries), "--run", "r1", *base]) == 0
    out, err = capsys.readouterr()
    assert "12 answered, 0 failed" in out and "run 'r1': 12 of 12 answers" in out
    assert "12/12 answers · 0 errors" in err  # the last progress line
    assert main(["collect", "status", "--run", "r1", "--format", "json", *base]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["answers"], status["expected"], status["complete"]) == (12, 12, True)
    assert main(["collect", "status", *base]) == 0
    assert "r1: 12 answers, 6 queries × 2 models" in capsys.readouterr().out
    assert main(["collect", "status", "--run", "r1", *base]) == 0
    assert "last command line process ended" in capsys.readouterr().out.splitlines()[-1]
    for name in ("answers.csv", "answers.jsonl"):
        output = tmp_path / name
        assert main(["collect", "export", "--run", "r1", "--output", str(output), "--game-id", "g1", *base]) == 0
        assert f"wrote 12 answers to {output}" in capsys.readouterr().out
        answers = read_answers(output)
        assert len(answers) == 12 and set(answers["game_id"]) == {"g1"} and set(answers["model"]) == {"alpha", "beta"}
    assert main(["collect", "export", "--run", "r1", "--output", str(tmp_path / "a.csv"), "--raw", *base]) == 0
    assert "answer_raw" in (tmp_path / "a.csv").read_text().splitlines()[0]
    out, err = capsys.readouterr()
    assert SECRET not in out + err


def test_a_run_with_failures_exits_1_and_a_second_run_completes_it(servers, tmp_path, db_path, capsys, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    servers[1].faults.append(Fault(status=400))
    models, queries = write_models(tmp_path / "models.toml", servers), write_queries(tmp_path / "q.csv", 3)
    argv = ["collect", "run", "--models", str(models), "--queries", str(queries), "--run", "r", "--db", str(db_path)]
    assert main(argv) == 1
    assert "failures by type: bad_request 1" in capsys.readouterr().out
    assert main(argv) == 0
    assert "asked 1 (query, model) pairs" in capsys.readouterr().out


@pytest.mark.parametrize(("toml", "message"), [
    ('[[models]]\nname = "a"\nprovider = "x"\nmodel = "m"\n', "model 1 ('a'): field 'base_url' is required"),
    ('[[models]]\nname = "a"\nprovider = "x"\nbase_url = "http://h/v1"\nmodel = "m"\nconcurrency = -2\n',
     "model 1 ('a'): field 'concurrency' must be a positive integer"),
])
def test_an_invalid_models_file_exits_2_naming_entry_and_field(tmp_path, db_path, capsys, toml, message):
    models = tmp_path / "models.toml"
    models.write_text(toml)
    queries = write_queries(tmp_path / "q.csv", 2)
    assert main(["collect", "run", "--models", str(models), "--queries", str(queries), "--run", "r",
                 "--db", str(db_path)]) == 2
    assert message in capsys.readouterr().err


def test_invalid_queries_or_unknown_run_exit_2(servers, tmp_path, db_path, capsys):
    models = write_models(tmp_path / "models.toml", servers)
    bad = tmp_path / "q.csv"
    bad.write_text("query_id,prompt\nq1,\n")
    assert main(["collect", "run", "--models", str(models), "--queries", str(bad), "--run", "r",
                 "--db", str(db_path)]) == 2
    assert "empty prompt [column 'prompt']" in capsys.readouterr().err
    assert main(["collect", "status", "--run", "nope", "--db", str(db_path)]) == 2
    assert "no collection run named 'nope'" in capsys.readouterr().err
    assert main(["collect", "export", "--run", "nope", "--output", str(tmp_path / "a.txt"), "--db", str(db_path)]) == 2


def test_killed_midway_then_resumed_gives_every_answer_exactly_once(servers, tmp_path, db_path, capsys, monkeypatch):
    for server in servers:
        server.latency_s = 0.05
    models = write_models(tmp_path / "models.toml", servers, concurrency=2)
    queries = write_queries(tmp_path / "q.csv", 40)
    argv = ["collect", "run", "--models", str(models), "--queries", str(queries), "--run", "r", "--db", str(db_path)]
    env = {**os.environ, KEY_ENV: SECRET, "PYTHONPATH": str(REPO)}
    log = tmp_path / "collector.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "core.cli", *argv], cwd=REPO, env=env, stdout=sink,
                                   stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while len(pairs(db_path)) < 20 and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
    before = set(pairs(db_path))
    assert 20 <= len(before) < 80, log.read_text()
    for server in servers:
        server.reset_counts()
    monkeypatch.setenv(KEY_ENV, SECRET)
    assert main(argv) == 0
    asked = {(body["messages"][0]["content"], body["model"]) for s in servers for _, body, _ in s.requests}
    assert not {(f"question {int(q[1:])}?", f"{m}-id") for q, m in before} & asked
    after = pairs(db_path)
    assert len(after) == len(set(after)) == 80
    assert SECRET not in log.read_text() + "".join(capsys.readouterr())


class FakeStream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_progress_rewrites_one_line_on_a_terminal_and_prints_lines_otherwise():
    clock = [0.0]
    progress = Progress({"m": ModelProgress(total=2)}, clock=lambda: clock[0])
    for tty in (True, False):
        stream = FakeStream(tty)
        show = TerminalProgress(stream, tty_every_s=1.0, plain_every_s=5.0, clock=lambda: clock[0])
        progress.models["m"].answered = 0
        show(progress)
        clock[0] += 0.5
        progress.models["m"].answered = 1
        show(progress)  # too soon: not shown
        clock[0] += 0.1
        progress.models["m"].answered = 2
        show(progress)  # finished: always shown
        text = stream.getvalue()
        if tty:
            assert text.count("\r\x1b[2K") == 2 and text.endswith("2/2 answers · 0 errors · ETA 0s · m 2/2\n")
        else:
            assert text.splitlines() == ["0/2 answers · 0 errors · ETA … · m 0/2",
                                         "2/2 answers · 0 errors · ETA 0s · m 2/2"]


def test_a_stop_request_is_shown_at_once_and_the_terminal_line_is_closed():
    clock = [0.0]
    progress = Progress({"m": ModelProgress(total=4, answered=1, in_flight=2)}, clock=lambda: clock[0])
    for tty in (True, False):
        stream = FakeStream(tty)
        show = TerminalProgress(stream, tty_every_s=1.0, plain_every_s=5.0, clock=lambda: clock[0], grace_s=7)
        progress.stopping = False
        show(progress)
        progress.stopping = True
        show(progress)  # within the throttle, yet shown: the person just pressed Ctrl-C
        show(progress)  # once is enough
        show.end()
        show.end()
        text = stream.getvalue()
        assert text.count("stopping: 2 requests in flight may finish within 7 s (Ctrl-C again abandons them)") == 1
        assert text.endswith("m 1/4\n") and not text.endswith("\n\n")


def test_campaign_create_from_a_run(servers, tmp_path, db_path, capsys, monkeypatch):
    from contextlib import closing

    from core.campaign import get_campaign, list_campaigns
    from core.collect import jobs
    from core.store.connection import connect

    monkeypatch.setenv(KEY_ENV, SECRET)
    models, queries = write_models(tmp_path / "models.toml", servers), write_queries(tmp_path / "q.csv", 5)
    base = ["--db", str(db_path)]
    assert main(["collect", "run", "--models", str(models), "--queries", str(queries), "--run", "r1", *base]) == 0
    capsys.readouterr()
    assert main(["campaign", "create", "c1", "--from-run", "r1", "--annotators", "ann,bob", *base]) == 0
    out = capsys.readouterr().out
    assert "5 queries, 2 models" in out and "ann\t" in out
    with closing(connect(db_path)) as conn:
        campaign = get_campaign(conn, "c1")
        in_campaign = conn.execute("SELECT query_id, model FROM campaign_answers WHERE campaign_id = ?",
                                   [campaign.id]).fetchall()
    assert sorted(in_campaign) == sorted(pairs(db_path))
    assert main(["campaign", "create", "c2", "--from-run", "nope", *base]) == 2
    assert "no collection run named 'nope' (runs: 'r1')" in capsys.readouterr().err
    with closing(connect(db_path)) as conn:
        busy = jobs.claim(conn, "r1", "command line", os.getpid())  # as if this process collected r1 now
    assert main(["campaign", "create", "c2", "--from-run", "r1", *base]) == 2
    assert f"run 'r1' is being collected now (process {os.getpid()})" in capsys.readouterr().err
    with closing(connect(db_path)) as conn:
        jobs.end(conn, busy.job_id, 0)
        assert [c.name for c in list_campaigns(conn)] == ["c1"]
    with pytest.raises(SystemExit):  # one source of answers
        main(["campaign", "create", "c3", "--from-run", "r1", "--answers", "a.csv", *base])
