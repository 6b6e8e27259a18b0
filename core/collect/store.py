"""Where collected answers live: ``collect_*`` tables in the Store's SQLite file.

A run is identified by its name. Every answer is written (and committed) as it arrives, keyed by
``(run_id, query_id, model)``, so a run stopped at any point resumes by asking only for the pairs that
have no answer yet and can never hold an answer twice. Failures go to ``collect_errors`` (one row per
pair, replaced by a later attempt, removed when the pair gets its answer; a model stopped by an
authentication error has one row with an empty query id). No table holds an API key: models are stored
with the name of their key's environment variable only.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from core.collect.config import ModelSpec
from core.collect.queries import Query
from core.errors import EvalBoardError, SettingError
from core.store.connection import connect
from core.store.transactions import write_transaction


class RunNotFound(EvalBoardError, KeyError):
    def __str__(self) -> str:
        return f"no collection run named {self.args[0]!r}"


class RunMismatch(EvalBoardError, ValueError):
    """The queries given for a resumed run differ from the ones it started with."""


@dataclass(frozen=True)
class Answer:
    query_id: str
    model: str
    answer: str  # cleaned
    answer_raw: str
    latency_s: float
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    attempts: int


@dataclass(frozen=True)
class Failure:
    query_id: str  # "" for a model stopped as a whole (authentication)
    model: str
    kind: str
    status: int | None
    message: str
    attempts: int


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class CollectStore:
    """The collect_* tables of one SQLite file (a connection per instance: open one per thread)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.con = connect(self.path)  # the store's connection policy and schema (core.store.connection)
        self.write_seconds = 0.0  # time spent writing answers and failures (reported by the benchmark)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> CollectStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- runs -----------------------------------------------------------------------------------------
    def run_id(self, name: str) -> int:
        row = self.con.execute("SELECT run_id FROM collect_runs WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise RunNotFound(name)
        return row[0]

    def runs(self) -> list[dict]:
        rows = self.con.execute(
            "SELECT r.name, r.created_at, r.updated_at, "
            "(SELECT COUNT(*) FROM collect_queries q WHERE q.run_id = r.run_id), "
            "(SELECT COUNT(*) FROM collect_models m WHERE m.run_id = r.run_id), "
            "(SELECT COUNT(*) FROM collect_answers a WHERE a.run_id = r.run_id) "
            "FROM collect_runs r ORDER BY r.run_id").fetchall()
        return [dict(zip(("name", "created_at", "updated_at", "queries", "models", "answers"), r)) for r in rows]

    def start(self, name: str, queries: Sequence[Query], models: Sequence[ModelSpec], *,
              queries_source: str = "", models_source: str = "") -> int:
        """Create the run, or reopen it for a resume; its queries must be the ones it started with."""
        if not name.strip():
            raise SettingError("the run name must not be empty")
        with self._transaction():
            now = _now()
            self.con.execute("INSERT OR IGNORE INTO collect_runs (name, created_at, updated_at, queries_source, "
                             "models_source) VALUES (?, ?, ?, ?, ?)", (name, now, now, queries_source, models_source))
            run = self.run_id(name)
            stored = dict(self.con.execute("SELECT query_id, prompt FROM collect_queries WHERE run_id = ?", (run,)))
            changed = [q.query_id for q in queries if q.query_id in stored and stored[q.query_id] != q.prompt]
            if changed:
                shown = ", ".join(changed[:20]) + (f" and {len(changed) - 20} more" if len(changed) > 20 else "")
                raise RunMismatch(f"run {name!r} asked a different prompt for query id(s) {shown}; "
                                  "start a new run (another --run name) for a changed eval set")
            self.con.executemany(
                "INSERT OR IGNORE INTO collect_queries VALUES (?, ?, ?, ?, ?, ?)",
                [(run, q.query_id, q.prompt, q.category, q.priority, position)
                 for position, q in enumerate(queries, start=len(stored))])
            self.con.executemany(
                "INSERT OR REPLACE INTO collect_models VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(run, m.name, m.provider, m.base_url, m.model, m.api_key_env, json.dumps(dict(m.params)))
                 for m in models])
            self.con.execute("UPDATE collect_runs SET updated_at = ? WHERE run_id = ?", (now, run))
        return run

    def answered(self, run: int) -> set[tuple[str, str]]:
        return set(self.con.execute("SELECT query_id, model FROM collect_answers WHERE run_id = ?", (run,)))

    # --- results, written as they arrive -------------------------------------------------------------
    def add_answer(self, run: int, answer: Answer) -> None:
        started = time.perf_counter()
        with self._transaction():
            self.con.execute(
                "INSERT OR IGNORE INTO collect_answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run, answer.query_id, answer.model, answer.answer, answer.answer_raw, answer.latency_s,
                 answer.prompt_tokens, answer.completion_tokens, answer.finish_reason, answer.attempts, _now()))
            self.con.execute("DELETE FROM collect_errors WHERE run_id = ? AND query_id = ? AND model = ?",
                             (run, answer.query_id, answer.model))
        self.write_seconds += time.perf_counter() - started

    def add_failure(self, run: int, failure: Failure) -> None:
        started = time.perf_counter()
        with self._transaction():
            self.con.execute(
                "INSERT OR REPLACE INTO collect_errors VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (run, failure.query_id, failure.model, failure.kind, failure.status, failure.message[:500],
                 failure.attempts, _now()))
        self.write_seconds += time.perf_counter() - started

    def clear_model_stop(self, run: int, models: Iterable[str]) -> None:
        """Forget earlier 'model stopped' rows of the models about to be asked again."""
        with self._transaction():
            self.con.executemany("DELETE FROM collect_errors WHERE run_id = ? AND query_id = '' AND model = ?",
                                 [(run, m) for m in models])

    # --- reading -------------------------------------------------------------------------------------
    def answers(self, run: int) -> pd.DataFrame:
        """Every answer with its query, in query order then model name."""
        return pd.read_sql_query(
            "SELECT a.query_id, q.prompt, q.category, a.model, a.answer, a.answer_raw, a.latency_s, "
            "a.prompt_tokens, a.completion_tokens, a.finish_reason, a.attempts, a.created_at "
            "FROM collect_answers a JOIN collect_queries q ON q.run_id = a.run_id AND q.query_id = a.query_id "
            "WHERE a.run_id = ? ORDER BY q.position, a.model", self.con, params=(run,))

    def failures(self, run: int) -> pd.DataFrame:
        return pd.read_sql_query(
            "SELECT query_id, model, kind, status, message, attempts, created_at FROM collect_errors "
            "WHERE run_id = ? ORDER BY model, query_id", self.con, params=(run,))

    def models(self, run: int) -> list[str]:
        return [r[0] for r in self.con.execute("SELECT name FROM collect_models WHERE run_id = ? ORDER BY name",
                                               (run,))]

    def query_count(self, run: int) -> int:
        return self.con.execute("SELECT COUNT(*) FROM collect_queries WHERE run_id = ?", (run,)).fetchone()[0]

    def _transaction(self):
        return write_transaction(self.con)
