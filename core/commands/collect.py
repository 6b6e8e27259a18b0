"""``evalboard collect``: run (or resume) a collection, show its status, export its answers file.

    evalboard collect run --models models.toml --queries evalset.csv --run NAME [--db PATH] [--limit N] [--grace S]
    evalboard collect status --run NAME [--db PATH] [--format text|json]
    evalboard collect export --run NAME --output answers.csv|answers.jsonl [--game-id ID] [--raw]

Progress goes to standard error: one updating line on a terminal, a plain line every few seconds
otherwise. Running the same ``--run`` name again resumes: only the missing answers are asked for.
``run`` exits with 1 when some answers failed or a model was stopped (the summary says which), 2 when
the models file or the eval set is invalid, 130 when interrupted: the first Ctrl-C (SIGINT) starts no new
request and lets those in flight finish within ``--grace`` seconds (their answers are stored); a second
Ctrl-C, or the end of the grace period, abandons the rest, which store nothing and are asked again when the
run resumes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TextIO

from core.collect import jobs
from core.collect.config import load_models
from core.collect.dispatch import RunSettings, collect
from core.collect.export import write_answers
from core.collect.queries import load_queries
from core.collect.results import Progress, format_seconds
from core.collect.stop import DEFAULT_GRACE_S, StopSwitch, stop_on_sigint
from core.collect.store import CollectStore, RunMismatch, RunNotFound
from core.collect.summary import summarize, to_json, to_text
from core.errors import EvalBoardError, SettingError
from core.formats import terminal_text
from core.llm.cleaning import CleaningRules
from core.llm.client import run_sync
from core.store.connection import default_db_path

EXIT_OK, EXIT_ERROR, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


class TerminalProgress:
    """Progress on a stream: rewrites one line on a terminal, prints a line every ``plain_every_s`` otherwise."""

    def __init__(self, stream: TextIO | None = None, tty_every_s: float = 0.2, plain_every_s: float = 5.0,
                 clock=time.monotonic, grace_s: float = DEFAULT_GRACE_S):
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = tty_every_s if self.tty else plain_every_s
        self.clock = clock
        self.grace_s = grace_s
        self.last = float("-inf")
        self.open_line = False  # a terminal line written without its newline yet
        self.stopping_shown = False

    def __call__(self, progress: Progress) -> None:
        now = self.clock()
        news = progress.stopping and not self.stopping_shown  # shown at once: the person pressed Ctrl-C
        if now - self.last < self.every and not progress.finished and not news:
            return
        self.last = now
        self.stopping_shown = self.stopping_shown or progress.stopping
        line = progress.line()
        if progress.stopping:
            line = (f"stopping: {progress.in_flight:,} requests in flight may finish within {self.grace_s:g} s "
                    f"(Ctrl-C again abandons them) · {line}")
        if self.tty:
            self.stream.write("\r\x1b[2K" + line)
            self.open_line = not progress.finished
            if progress.finished:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def end(self) -> None:
        """Close the terminal line, so that what follows starts on its own line."""
        if self.open_line:
            self.stream.write("\n")
            self.stream.flush()
            self.open_line = False


def cmd_collect(args: argparse.Namespace) -> int:
    try:
        return {"run": _run, "status": _status, "export": _export}[args.collect_action](args)
    except (RunNotFound, RunMismatch) as exc:
        print(f"evalboard: {exc}", file=sys.stderr)
        return EXIT_INVALID


def _run(args: argparse.Namespace) -> int:
    """One collecting process: recorded as the run's only collector (a background job's process takes up the
    row the page claimed for it), its end recorded on the way out, whatever the way."""
    if args.limit is not None and args.limit < 1:
        raise SettingError("--limit must be a positive integer")
    stop = StopSwitch(args.grace)  # checks --grace
    db = args.db or default_db_path()
    with CollectStore(db) as store:
        job = jobs.adopt(store.con, args.job, os.getpid()) if args.job is not None else \
            jobs.claim(store.con, args.run, "command line", os.getpid())
    if job.status == "stopping":  # Stop was pressed before this process started
        stop.request()
    code, message = EXIT_ERROR, "ended by an unexpected error"
    try:
        code, message = _session(args, db, stop)
        return code
    except EvalBoardError as exc:  # the user's to fix: main() prints it
        code, message = EXIT_INVALID, str(exc)
        raise
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        with CollectStore(db) as store:
            jobs.end(store.con, job.job_id, code, message)


def _session(args: argparse.Namespace, db, stop) -> tuple[int, str]:
    progress = TerminalProgress(grace_s=stop.grace_s)
    try:
        config = load_models(args.models)
        queries = load_queries(args.queries)
        rules = CleaningRules(**{rule: False for rule in args.no_clean})
        unset = [f"{m.name} ({m.api_key_env})" for m in config.models
                 if m.api_key_env and not os.environ.get(m.api_key_env)]
        if unset:
            print("evalboard: warning: API key variable not set for " + ", ".join(unset)
                  + "; those models will be stopped", file=sys.stderr)
        settings = RunSettings(args.run, limit=args.limit, rules=rules, queries_source=str(args.queries), stop=stop)
        outcome = run_sync(stop_on_sigint(collect(config, queries, db, settings, progress), stop))
        progress.end()
        if outcome.interrupted:
            return EXIT_INTERRUPTED, _interrupted(db, args.run, outcome.abandoned)
        line = outcome_line(outcome)
        print(line)
        with CollectStore(db) as store:
            print(to_text(summarize(store, args.run)))
    except KeyboardInterrupt:  # Ctrl-C outside the session (reading the inputs, the summary): nothing in flight
        progress.end()
        return EXIT_INTERRUPTED, _interrupted(db, args.run, 0)
    return (EXIT_OK if not outcome.failed and not outcome.stopped_models else EXIT_ERROR), line


def outcome_line(outcome) -> str:
    return (f"asked {outcome.asked:,} (query, model) pairs in {format_seconds(outcome.elapsed_s)}: "
            f"{outcome.answered:,} answered, {outcome.failed:,} failed, {outcome.skipped:,} skipped; "
            f"{outcome.already_answered:,} already answered before")


def _interrupted(db, run: str, abandoned: int) -> str:
    """The one line an interrupted run prints (and returns): how many answers the run holds, and how to go on."""
    try:
        with CollectStore(db) as store:
            stored = len(store.answered(store.run_id(run)))
    except RunNotFound:
        stored = 0
    given_up = f" ({abandoned:,} requests in flight abandoned)" if abandoned else ""
    line = f"interrupted: {stored:,} answers stored{given_up}; run again to resume"
    print(line, file=sys.stderr)
    return line


def _status(args: argparse.Namespace) -> int:
    with CollectStore(args.db or default_db_path()) as store:
        if not args.run:
            runs = store.runs()
            if not runs:
                print("no collection runs yet; start one with: evalboard collect run --models M --queries Q --run NAME")
            busy = {j.run: j for j in jobs.active_jobs(store.con)}
            for r in runs:
                now = f"; being collected by process {busy[r['name']].pid}" if r["name"] in busy else ""
                print(f"{terminal_text(r['name'])}: {r['answers']:,} answers, {r['queries']:,} queries × "
                      f"{r['models']} models (updated {r['updated_at']}{now})")
            return EXIT_OK
        summary = summarize(store, args.run)
        job = jobs.latest_job(store.con, args.run)
    if args.format == "json":
        print(to_json(summary))
        return EXIT_OK
    print(to_text(summary))
    if job is not None:
        print(terminal_text(jobs.describe(job)))
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    with CollectStore(args.db or default_db_path()) as store:
        answers = write_answers(store, args.run, args.output, game_id=args.game_id, include_raw=args.raw)
    note = f" ({answers.left_out_empty:,} empty after cleaning left out)" if answers.left_out_empty else ""
    print(f"wrote {len(answers.frame):,} answers to {args.output}{note}")
    return EXIT_OK

