"""Collecting processes: which process collects which run, so that a run keeps going without the page that
started it, and two processes never collect one run at once.

Every ``evalboard collect run`` records itself in ``collect_jobs`` (run name, where it came from, PID, status)
and records its end (exit status and a one-line message) on the way out. At most one unfinished row exists
per run name (a unique index), so a second process for the same run is refused with the PID of the first.
A process killed without a word (SIGKILL, a crash of the machine) leaves its row unfinished; whoever reads
it next finds the process gone and marks the row ``lost``, which frees the run.

The Collect page starts a run as a **background job** (:func:`start_background`): the same command in a
separate process, in its own session (so it outlives the page's tab and the dashboard's restarts; Ctrl-C
in the dashboard's terminal does not reach it), with its inputs written next to the store and its output
in a log file there. The page shows its progress from the store and stops it with SIGINT
(:func:`request_stop`), which takes the command's graceful path (:mod:`core.collect.stop`): answers in
flight are stored, a second stop abandons them.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.errors import EvalBoardError, SettingError
from core.store.connection import REPO_ROOT, connect
from core.store.transactions import write_transaction

ACTIVE = ("starting", "running", "stopping")
STATUS_OF_EXIT = {0: "finished", 1: "finished with errors", 2: "invalid input", 130: "interrupted"}
STARTING_TIMEOUT_S = 60.0  # a row claimed for a process that never got a PID is given up after this
JOBS_FOLDER = "collect-jobs"  # beside the store file: a background job's inputs and log
COLUMNS = ("job_id", "run_name", "origin", "status", "pid", "pid_started", "started_at", "ended_at", "exit_code",
           "message", "log_path")


@dataclass(frozen=True)
class Job:
    job_id: int
    run: str
    origin: str  # "command line" or "background" (started from the Collect page)
    status: str  # starting, running, stopping; or finished, finished with errors, invalid input, interrupted,
    #              failed, lost
    pid: int | None
    pid_started: str | None  # the process's start time as the kernel counts it: a reused PID is not this job
    started_at: str
    ended_at: str | None
    exit_code: int | None
    message: str
    log_path: str | None

    @property
    def active(self) -> bool:
        return self.ended_at is None


class JobBusy(EvalBoardError, ValueError):
    """The run is already being collected by another process."""

    def __init__(self, job: Job):
        self.job = job
        super().__init__(f"run {job.run!r} is already being collected by process {job.pid} ({job.origin}, since "
                         f"{job.started_at}); stop it first, or wait for it to end")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def process_started(pid: int) -> str | None:
    """When process ``pid`` started (field 22 of /proc/PID/stat), or None if there is no such live process
    (an exited one waiting to be reaped counts as gone). Without /proc: "?" if the PID exists."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return "?"
    fields = text[text.rindex(")") + 2:].split()  # after "pid (command) ": state is field 3
    return None if fields[0] in ("Z", "X") else fields[19]


def _alive(job: Job) -> bool:
    if job.pid is None:
        started = datetime.fromisoformat(job.started_at).timestamp()
        return time.time() - started < STARTING_TIMEOUT_S
    now = process_started(job.pid)
    return now is not None and (job.pid_started in (None, "?") or now in ("?", job.pid_started))


def _rows(con: sqlite3.Connection, where: str, params: tuple) -> list[Job]:
    rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM collect_jobs WHERE {where} ORDER BY job_id", params)
    return [Job(*row) for row in rows]


def _end(con: sqlite3.Connection, job_id: int, status: str, exit_code: int | None, message: str) -> None:
    con.execute("UPDATE collect_jobs SET status = ?, ended_at = ?, exit_code = ?, message = ? "
                "WHERE job_id = ? AND ended_at IS NULL", (status, _now(), exit_code, message[:1000], job_id))


def _checked(con: sqlite3.Connection, jobs: list[Job]) -> list[Job]:
    """The jobs whose process still runs; the others are marked lost (in one write)."""
    gone = [j for j in jobs if j.active and not _alive(j)]
    if gone:
        with write_transaction(con):
            for job in gone:
                _end(con, job.job_id, "lost", None, "the process ended without recording its end (killed?)")
    return [j for j in jobs if j not in gone]


def active_jobs(con: sqlite3.Connection) -> list[Job]:
    """Every run being collected now (a row whose process is gone is marked lost on the way)."""
    return _checked(con, _rows(con, "ended_at IS NULL", ()))


def active_job(con: sqlite3.Connection, run: str) -> Job | None:
    jobs = _checked(con, _rows(con, "run_name = ? AND ended_at IS NULL", (run,)))
    return jobs[0] if jobs else None


def latest_job(con: sqlite3.Connection, run: str) -> Job | None:
    active = active_job(con, run)  # marks a lost one first, so the row read below is current
    if active is not None:
        return active
    jobs = _rows(con, "job_id = (SELECT MAX(job_id) FROM collect_jobs WHERE run_name = ?)", (run,))
    return jobs[0] if jobs else None


def job(con: sqlite3.Connection, job_id: int) -> Job:
    found = _rows(con, "job_id = ?", (job_id,))
    if not found:
        raise KeyError(f"no collection job {job_id}")
    return found[0]


def claim(con: sqlite3.Connection, run: str, origin: str, pid: int | None = None, log_path: str | None = None) -> Job:
    """Record a process (``pid``, or one about to start) as the collector of ``run``; :class:`JobBusy` when
    another live process collects it."""
    if not run.strip():
        raise SettingError("the run name must not be empty")
    with write_transaction(con):
        for current in _rows(con, "run_name = ? AND ended_at IS NULL", (run,)):
            if _alive(current):
                raise JobBusy(current)
            _end(con, current.job_id, "lost", None, "the process ended without recording its end (killed?)")
        job_id = con.execute(
            "INSERT INTO collect_jobs (run_name, origin, status, pid, pid_started, started_at, log_path) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (run, origin, "running" if pid else "starting", pid, process_started(pid) if pid else None, _now(),
             log_path)).lastrowid
    return job(con, job_id)


def adopt(con: sqlite3.Connection, job_id: int, pid: int) -> Job:
    """The process ``pid`` takes up a job claimed for it (a background job's process, as it starts)."""
    with write_transaction(con):
        found = job(con, job_id)
        if not found.active:
            raise SettingError(f"collection job {job_id} has already ended ({found.status})")
        con.execute("UPDATE collect_jobs SET pid = ?, pid_started = ?, status = CASE status WHEN 'stopping' "
                    "THEN 'stopping' ELSE 'running' END WHERE job_id = ?", (pid, process_started(pid), job_id))
    return job(con, job_id)


def end(con: sqlite3.Connection, job_id: int, exit_code: int, message: str = "") -> None:
    """Record how the job's process ended (its exit status names the status)."""
    with write_transaction(con):
        _end(con, job_id, STATUS_OF_EXIT.get(exit_code, "failed"), exit_code, message)


def request_stop(con: sqlite3.Connection, job_id: int) -> Job:
    """Send the job's process SIGINT: the first stops new requests (answers in flight are stored), a second
    abandons the requests in flight."""
    current = job(con, job_id)
    if not current.active or not _alive(current):
        _checked(con, [current])
        raise SettingError(f"collection job {job_id} (run {current.run!r}) is not running")
    if current.pid is None:
        raise SettingError(f"collection job {job_id} is still starting: try again in a moment")
    try:
        os.kill(current.pid, signal.SIGINT)
    except ProcessLookupError:  # it ended between the check and the signal
        _checked(con, [current])
        raise SettingError(f"collection job {job_id} (run {current.run!r}) is not running") from None
    with write_transaction(con):
        con.execute("UPDATE collect_jobs SET status = 'stopping' WHERE job_id = ? AND ended_at IS NULL", (job_id,))
    return job(con, job_id)


def start_background(db: str | Path, run: str, models: bytes, queries: bytes, queries_name: str, *,
                     limit: int | None = None, grace_s: float | None = None) -> Job:
    """Start ``evalboard collect run`` for ``run`` in a separate process that outlives its caller.

    ``models`` and ``queries`` are the files' contents (uploads): they are written beside the store, in
    ``collect-jobs/``, with the job's log. Raises :class:`JobBusy` when the run is being collected."""
    db = Path(db)
    folder = db.parent / JOBS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with closing(connect(db)) as con:
        claimed = claim(con, run, "background")
        stem = folder / f"job-{claimed.job_id}"
        log_path = stem.with_suffix(".log")
        models_path = Path(f"{stem}-models.toml")
        queries_path = Path(f"{stem}-queries{Path(queries_name).suffix.lower() or '.csv'}")
        argv = [sys.executable, "-m", "core.cli", "collect", "run", "--models", str(models_path), "--queries",
                str(queries_path), "--run", run, "--db", str(db), "--job", str(claimed.job_id)]
        argv += ["--limit", str(limit)] if limit else []
        argv += ["--grace", f"{grace_s:g}"] if grace_s is not None else []
        try:
            models_path.write_bytes(models)
            queries_path.write_bytes(queries)
            with open(log_path, "wb") as log:
                process = subprocess.Popen(argv, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True,
                                           env={**os.environ, "PYTHONPATH": _python_path()})
        except OSError as exc:
            with write_transaction(con):
                _end(con, claimed.job_id, "failed", None, f"could not start the process: {exc}")
            raise
        with write_transaction(con):
            con.execute("UPDATE collect_jobs SET pid = ?, pid_started = ?, log_path = ? WHERE job_id = ? "
                        "AND pid IS NULL", (process.pid, process_started(process.pid), str(log_path),
                                            claimed.job_id))
        threading.Thread(target=_reap, args=(process, db, claimed.job_id), name=f"collect-job-{claimed.job_id}",
                         daemon=True).start()
        return job(con, claimed.job_id)


def _python_path() -> str:
    """The project first, so the child imports this code whichever folder it starts from."""
    return os.pathsep.join([str(REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


def _reap(process: subprocess.Popen, db: Path, job_id: int) -> None:
    """Wait for the child (so it leaves no zombie); if it died without recording its end, record it."""
    code = process.wait()
    try:
        with closing(connect(db)) as con, write_transaction(con):
            _end(con, job_id, STATUS_OF_EXIT.get(code, "failed"), code,
                 f"the process ended (exit status {code}) without recording its end")
    except sqlite3.Error:  # the store went away (a test's folder removed): nothing left to record
        pass


@dataclass(frozen=True)
class JobProgress:
    """How far a job's run is, read from the store (cheap enough to poll every few seconds)."""

    answers: int  # stored for the run, by every session
    expected: int  # queries × models of the run (0 while the process is still starting)
    failures: int  # pairs whose last attempt failed
    answered_by_job: int  # answers stored since this job started
    elapsed_s: float

    @property
    def share(self) -> float:
        return min(1.0, self.answers / self.expected) if self.expected else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at this job's pace so far (None: no pace yet)."""
        if self.answered_by_job == 0 or self.elapsed_s <= 0:
            return None
        return max(0, self.expected - self.answers - self.failures) * self.elapsed_s / self.answered_by_job


def progress_of(con: sqlite3.Connection, current: Job) -> JobProgress:
    row = con.execute("SELECT run_id FROM collect_runs WHERE name = ?", (current.run,)).fetchone()
    started = datetime.fromisoformat(current.started_at)
    end = datetime.fromisoformat(current.ended_at) if current.ended_at else datetime.now(UTC)
    elapsed = (end - started).total_seconds()
    if row is None:
        return JobProgress(0, 0, 0, 0, elapsed)
    answers, mine, queries, models, failures = con.execute(
        "SELECT (SELECT COUNT(*) FROM collect_answers WHERE run_id = :r), "
        "(SELECT COUNT(*) FROM collect_answers WHERE run_id = :r AND created_at >= :t), "
        "(SELECT COUNT(*) FROM collect_queries WHERE run_id = :r), "
        "(SELECT COUNT(*) FROM collect_models WHERE run_id = :r), "
        "(SELECT COUNT(*) FROM collect_errors WHERE run_id = :r AND query_id != '')",
        {"r": row[0], "t": current.started_at}).fetchone()
    return JobProgress(answers, queries * models, failures, mine, elapsed)


def describe(current: Job) -> str:
    """One line on a job, for a terminal: who collects the run now, or how the last job ended."""
    if current.active:
        return (f"being collected now by process {current.pid} ({current.origin}, since {current.started_at}; "
                f"{current.status})")
    said = current.message if current.message.startswith(current.status) else \
        f"{current.status}: {current.message}".rstrip(": ")
    return f"last {current.origin} process ended {current.ended_at}: {said}"


def log_tail(current: Job, lines: int = 20) -> str:
    """The last lines of a background job's log (its progress and errors)."""
    if not current.log_path:
        return ""
    try:
        text = Path(current.log_path).read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.replace("\r", "\n").splitlines()[-lines:])
