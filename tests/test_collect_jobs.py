"""Collecting processes: one per run, recorded in the store with their PID and end; a background job outlives
the process that started it and stops gracefully on request. Every process a test starts is stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from core.cli import main
from core.collect import jobs
from core.store.connection import connect
from tests.fake_openai import FakeOpenAI
from tests.test_collect import stored
from tests.test_collect_interrupt import INTERRUPTED, files, start

REPO = Path(__file__).resolve().parents[1]
TOTAL = 24  # 12 queries × 2 models (tests.test_collect_interrupt.files)


@pytest.fixture
def server():
    with FakeOpenAI() as made:
        yield made


@pytest.fixture
def no_process_left(db_path):
    """After the test: every collecting process recorded in the store is killed and waited for."""
    yield
    if not db_path.exists():
        return
    with closing(connect(db_path)) as con:
        for job in jobs.active_jobs(con):
            if job.pid:
                os.kill(job.pid, signal.SIGKILL)
                wait_gone(job.pid)


def wait_gone(pid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while jobs.process_started(pid) is not None and time.monotonic() < deadline:
        time.sleep(0.02)


def read_job(db: Path, run: str = "r") -> jobs.Job | None:
    with closing(connect(db)) as con:
        return jobs.latest_job(con, run)


def wait_until(condition, what: str, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")


def run_stored(db: Path, run: str = "r") -> bool:
    with closing(connect(db)) as con:
        return con.execute("SELECT 1 FROM collect_runs WHERE name = ?", (run,)).fetchone() is not None


def inputs(tmp_path: Path, server: FakeOpenAI) -> tuple[bytes, bytes]:
    argv = files(tmp_path, server)
    return Path(argv[argv.index("--models") + 1]).read_bytes(), Path(argv[argv.index("--queries") + 1]).read_bytes()


def test_a_second_process_for_a_running_run_is_refused(tmp_path, server, db_path, capsys, no_process_left):
    server.latency_s = 0.5
    argv = files(tmp_path, server)
    first = start(argv, db_path)
    try:
        job = wait_until(lambda: (j := read_job(db_path)) and j.pid == first.pid and j, "the first process's row")
        assert job.status == "running" and job.origin == "command line" and job.active
        assert main([*argv, "--db", str(db_path)]) == 2
        err = capsys.readouterr().err
        assert f"already being collected by process {first.pid}" in err
        wait_until(lambda: run_stored(db_path), "the run's row")  # the process claims the run before reading inputs
        assert main(["collect", "status", "--db", str(db_path)]) == 0
        assert f"being collected by process {first.pid}" in capsys.readouterr().out
        assert main(["collect", "status", "--run", "r", "--db", str(db_path)]) == 0
        assert f"being collected now by process {first.pid} (command line" in capsys.readouterr().out
        first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    job = read_job(db_path)
    assert (job.status, job.exit_code, job.active) == ("finished", 0, False)
    assert job.message.startswith(f"asked {TOTAL} (query, model) pairs")
    assert jobs.describe(job).endswith(f"finished: {job.message}")
    assert len(set(stored(db_path))) == TOTAL


def test_a_killed_process_frees_its_run(tmp_path, server, db_path, capsys, no_process_left):
    server.latency_s = 0.3
    argv = files(tmp_path, server)
    first = start(argv, db_path)
    wait_until(lambda: len(stored(db_path)) >= 2, "some answers")
    first.kill()
    first.communicate()
    server.latency_s = 0.0
    assert main([*argv, "--db", str(db_path)]) == 0
    with closing(connect(db_path)) as con:
        ended = [(j.status, j.pid) for j in jobs._rows(con, "run_name = 'r'", ())]
    assert ended[0] == ("lost", first.pid) and ended[1] == ("finished", os.getpid())


def test_a_background_job_outlives_the_process_that_started_it(tmp_path, server, db_path, no_process_left):
    """The starter exits at once (as a closed tab's session ends); the job goes on and records its end."""
    server.latency_s = 0.1
    models, queries = inputs(tmp_path, server)
    (tmp_path / "m.toml").write_bytes(models)
    (tmp_path / "q.csv").write_bytes(queries)
    starter = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
               "from pathlib import Path\nfrom core.collect.jobs import start_background\n"
               f"job = start_background({str(db_path)!r}, 'r', Path({str(tmp_path / 'm.toml')!r}).read_bytes(), "
               f"Path({str(tmp_path / 'q.csv')!r}).read_bytes(), 'q.csv')\nprint(job.pid)\n")
    done = subprocess.run([sys.executable, "-c", starter], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    child = int(done.stdout.strip())
    assert jobs.process_started(child) is not None  # its starter is gone, the job runs on
    job = wait_until(lambda: (j := read_job(db_path)) and not j.active and j, "the job's end", timeout=120)
    assert (job.status, job.exit_code, job.origin, job.pid) == ("finished", 0, "background", child)
    assert len(set(stored(db_path))) == TOTAL == len(server.requests)
    assert f"asked {TOTAL} (query, model) pairs" in jobs.log_tail(job)


def test_stop_takes_the_graceful_path_and_one_job_per_run(tmp_path, server, db_path, no_process_left):
    server.latency_s = 0.5
    models, queries = inputs(tmp_path, server)
    job = jobs.start_background(db_path, "r", models, queries, "q.csv")
    assert job.pid and job.status in ("starting", "running") and Path(job.log_path).parent.name == "collect-jobs"
    with pytest.raises(jobs.JobBusy, match=f"process {job.pid}"):
        jobs.start_background(db_path, "r", models, queries, "q.csv")
    wait_until(lambda: len(stored(db_path)) >= 2 and server.in_flight > 0, "answers and requests in flight")
    with closing(connect(db_path)) as con:
        assert jobs.request_stop(con, job.job_id).status == "stopping"
    ended = wait_until(lambda: (j := read_job(db_path)) and not j.active and j, "the job's end")
    assert (ended.status, ended.exit_code) == ("interrupted", 130), jobs.log_tail(ended)
    match = INTERRUPTED.match(ended.message)
    assert match and match.group(2) is None
    assert int(match.group(1)) == len(stored(db_path)) == len(server.requests) < TOTAL
    assert "Traceback" not in jobs.log_tail(ended, 200)
    with closing(connect(db_path)) as con, pytest.raises(ValueError, match="is not running"):
        jobs.request_stop(con, ended.job_id)
    wait_gone(ended.pid)
    server.reset_counts()
    server.latency_s = 0.0
    again = jobs.start_background(db_path, "r", models, queries, "q.csv")  # the run is free again: resumes
    finished = wait_until(lambda: (j := read_job(db_path)) and j.job_id == again.job_id and not j.active and j,
                          "the resumed job's end")
    assert finished.status == "finished" and len(server.requests) == TOTAL - int(match.group(1))
    assert len(set(stored(db_path))) == TOTAL


def test_a_job_with_bad_input_records_the_error(tmp_path, server, db_path, no_process_left):
    models, _ = inputs(tmp_path, server)
    job = jobs.start_background(db_path, "r", models, b"query_id,prompt\nq1,\n", "bad.csv")
    ended = wait_until(lambda: (j := read_job(db_path)) and not j.active and j, "the job's end")
    assert (ended.status, ended.exit_code) == ("invalid input", 2)
    assert "empty prompt" in ended.message and job.job_id == ended.job_id


def test_a_stale_starting_row_and_a_reused_pid_do_not_hold_a_run(db_path, monkeypatch):
    with closing(connect(db_path)) as con:
        claimed = jobs.claim(con, "r", "background")  # never given a process
        monkeypatch.setattr(jobs, "STARTING_TIMEOUT_S", 0.0)
        assert jobs.active_job(con, "r") is None and jobs.latest_job(con, "r").status == "lost"
        mine = jobs.claim(con, "r", "command line", os.getpid())
        con.execute("UPDATE collect_jobs SET pid_started = 'not-this-process' WHERE job_id = ?", (mine.job_id,))
        assert jobs.active_job(con, "r") is None  # same PID, another process start: not this job
        assert claimed.job_id != mine.job_id
