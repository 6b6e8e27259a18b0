"""Ctrl-C on ``collect run``: the first SIGINT starts no new request and stores the answers in flight, a
second one (or the end of ``--grace``) abandons them; exit 130 with one line, no traceback; a resume asks
only for what is missing (requests counted on the fake server)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.cli import main
from core.collect import RunSettings, collect, parse_models
from core.collect.stop import StopSwitch
from core.llm.client import run_sync
from tests.fake_openai import FakeOpenAI
from tests.test_collect import entry, make_queries, stored

REPO = Path(__file__).resolve().parents[1]
INTERRUPTED = re.compile(r"^interrupted: (\d+) answers stored( \((\d+) requests in flight abandoned\))?; "
                         r"run again to resume$")
QUERIES, MODELS, CONCURRENCY = 12, 2, 3


@pytest.fixture
def server():
    with FakeOpenAI() as made:
        yield made


def files(tmp_path: Path, server: FakeOpenAI) -> list[str]:
    models = tmp_path / "models.toml"
    models.write_text("".join(f'[[models]]\nname = "m{i}"\nprovider = "local"\nbase_url = "{server.base_url}"\n'
                              f'model = "m{i}-id"\n' for i in range(MODELS))
                      + f"[providers.local]\nconcurrency = {CONCURRENCY}\n")
    queries = tmp_path / "q.csv"
    queries.write_text("query_id,prompt\n" + "".join(f"q{i:02d},question {i}\n" for i in range(QUERIES)))
    return ["collect", "run", "--models", str(models), "--queries", str(queries), "--run", "r"]


def start(argv: list[str], db: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "core.cli", *argv, "--db", str(db), *extra], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_requests_in_flight(proc: subprocess.Popen, server: FakeOpenAI, db: Path, answers: int) -> None:
    """Until ``answers`` are stored and requests are in flight again (the signal lands mid-request)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if server.in_flight > 0 and len(stored(db)) >= answers:
            return
        time.sleep(0.01)
    proc.kill()
    pytest.fail(f"no request in flight to interrupt: {proc.communicate()}")


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err


def last_line(err: str) -> re.Match:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert sum("interrupted" in line for line in lines) == 1, err
    match = INTERRUPTED.match(lines[-1])
    assert match, err
    return match


def test_first_ctrl_c_stores_the_answers_in_flight_and_resume_asks_only_the_rest(tmp_path, server, db_path):
    server.latency_s = 0.6
    argv = files(tmp_path, server)
    proc = start(argv, db_path)
    wait_for_requests_in_flight(proc, server, db_path, answers=CONCURRENCY)
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 130, err
    match = last_line(err)
    assert match.group(2) is None  # nothing abandoned: the grace period (10 s) outlasts a request
    assert "stopping:" in err and out == ""
    answers = stored(db_path)
    # every request the run sent was answered and stored: none will be asked twice
    assert int(match.group(1)) == len(answers) == len(server.requests) < QUERIES * MODELS
    server.reset_counts()
    server.latency_s = 0.0
    assert main([*argv, "--db", str(db_path)]) == 0
    assert len(server.requests) == QUERIES * MODELS - len(answers)
    everything = stored(db_path)
    assert len(everything) == len(set(everything)) == QUERIES * MODELS


def test_second_ctrl_c_abandons_the_requests_in_flight(tmp_path, server, db_path):
    server.latency_s = 0.3
    argv = files(tmp_path, server)
    proc = start(argv, db_path)
    wait_for_requests_in_flight(proc, server, db_path, answers=CONCURRENCY)
    server.latency_s = 30.0  # the next requests would outlast any patience
    time.sleep(0.5)  # the requests now in flight are slow ones
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code, _, err = finish(proc)
    assert code == 130 and time.monotonic() - started < 10, err
    match = last_line(err)
    in_flight = server.in_flight  # the server still holds the abandoned requests (30 s each)
    assert match.group(3) is not None and int(match.group(3)) == in_flight > 0
    answers = stored(db_path)
    assert int(match.group(1)) == len(answers) == len(server.requests) - in_flight
    server.reset_counts()
    server.latency_s = 0.0
    assert main([*argv, "--db", str(db_path)]) == 0  # the abandoned ones are asked again
    assert len(server.requests) == QUERIES * MODELS - len(answers)
    assert len(set(stored(db_path))) == QUERIES * MODELS


def test_the_end_of_the_grace_period_abandons_what_is_still_in_flight(tmp_path, server, db_path):
    server.latency_s = 0.3
    argv = files(tmp_path, server)
    proc = start(argv, db_path, "--grace", "0.5")
    wait_for_requests_in_flight(proc, server, db_path, answers=1)
    server.latency_s = 30.0
    time.sleep(0.5)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code, _, err = finish(proc)
    assert code == 130 and time.monotonic() - started < 10, err
    assert int(last_line(err).group(3)) > 0


def test_a_bad_grace_is_refused(tmp_path, server, db_path, capsys):
    assert main([*files(tmp_path, server), "--db", str(db_path), "--grace", "-1"]) == 2
    assert "grace period" in capsys.readouterr().err
    assert server.requests == []


def test_a_stop_request_in_process_lets_the_requests_in_flight_finish(server, db_path):
    server.latency_s = 0.2
    config = parse_models({"models": [entry("a", server, "local", concurrency=2)]})
    stop = StopSwitch(grace_s=30)

    async def interrupted():
        session = asyncio.ensure_future(collect(config, make_queries(10), db_path, RunSettings("r", stop=stop)))
        while len(stored(db_path)) < 2:
            await asyncio.sleep(0.01)
        while server.in_flight == 0:
            await asyncio.sleep(0.005)
        stop.request()
        return await session

    outcome = run_sync(interrupted())
    assert outcome.interrupted and outcome.abandoned == 0
    assert outcome.answered == len(stored(db_path)) == len(server.requests)
    assert outcome.not_asked == 10 - outcome.answered > 0


def test_a_stop_request_after_the_last_answer_is_not_an_interruption(server, db_path):
    config = parse_models({"models": [entry("a", server, "local")]})
    stop = StopSwitch()

    async def stopped_late():
        outcome = await collect(config, make_queries(3), db_path, RunSettings("r", stop=stop))
        stop.request()
        return outcome

    outcome = run_sync(stopped_late())
    assert not outcome.interrupted and outcome.answered == 3 and outcome.not_asked == 0


@pytest.mark.parametrize("grace", [-1, float("nan"), float("inf"), True, "10"])
def test_the_grace_period_is_checked(grace):
    with pytest.raises(ValueError, match="grace period"):
        StopSwitch(grace)


def test_a_stored_run_counts_in_the_message_of_an_early_interrupt(tmp_path, server, db_path, capsys, monkeypatch):
    """Ctrl-C while the inputs are read (before the session starts) still gives the one line."""
    argv = files(tmp_path, server)
    assert main([*argv, "--db", str(db_path), "--limit", "2"]) == 0
    capsys.readouterr()

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("core.commands.collect.load_queries", interrupted)
    assert main([*argv, "--db", str(db_path)]) == 130
    err = capsys.readouterr().err.strip()
    assert INTERRUPTED.match(err) and err.startswith(f"interrupted: {2 * MODELS} answers stored;")
