"""Every table and index of the store file, for every part, made in one transaction and versioned.

One file holds the analysis store (``datasets``, ``labels``, ``outcomes``, the data tables and the
``votes_labeled`` view), voting campaigns (``campaign_*``), answer collection (``collect_*``) and eval
sets (``evalset_*``). Whichever part opens a file first, :func:`ensure_schema` creates *all* of them,
inside one ``BEGIN IMMEDIATE`` transaction: another process sees no table or every table, never a
half-made schema, and a kill midway leaves the file as it was.

``PRAGMA user_version`` records :data:`SCHEMA_VERSION`. Opening a file of an older version runs the
forward migrations in :data:`MIGRATIONS` (each safe to run on a partly migrated file) and then every
``CREATE … IF NOT EXISTS`` of the current schema, in the same transaction; that also repairs files
made before the schema had a version, when each part created its own tables and a store could be left
with some tables and not others. A file of a newer version than this code is refused.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable

from core.errors import EvalBoardError
from core.schema import OUTCOMES, STYLE_COUNT_COLUMNS
from core.store.tables import TYPES_OF_TABLE, data_table_sql, labeled_view_sql
from core.store.transactions import write_transaction

SCHEMA_VERSION = 5


class SchemaTooNew(EvalBoardError, RuntimeError):
    def __init__(self, found: int):
        super().__init__(f"the store file has schema version {found}, newer than this EvalBoard knows "
                         f"({SCHEMA_VERSION}): update EvalBoard to open it")


STORE = """
CREATE TABLE IF NOT EXISTS [datasets] (
   [id] INTEGER PRIMARY KEY, [name] TEXT NOT NULL, [kind] TEXT NOT NULL, [created_at] TEXT,
   [rows] INTEGER NOT NULL, [source] TEXT, [sha256] TEXT NOT NULL, [columns] TEXT, [notes] TEXT, [options] TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS [idx_datasets_name] ON [datasets] ([name]);
CREATE INDEX IF NOT EXISTS [idx_datasets_sha256] ON [datasets] ([sha256]);
CREATE TABLE IF NOT EXISTS [labels] (
   [dataset_id] INTEGER, [field] TEXT, [code] INTEGER, [label] TEXT NOT NULL,
   PRIMARY KEY ([dataset_id], [field], [code]));
CREATE TABLE IF NOT EXISTS [outcomes] ([code] INTEGER PRIMARY KEY, [label] TEXT);
"""

CAMPAIGN = """
CREATE TABLE IF NOT EXISTS campaign_campaigns (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at REAL NOT NULL,
    dimensions TEXT NOT NULL, golden_rate REAL NOT NULL, target INTEGER NOT NULL,
    seed INTEGER NOT NULL, cleaning TEXT NOT NULL, active_sampling INTEGER NOT NULL DEFAULT 0,
    overlap REAL NOT NULL DEFAULT 0, overlap_k INTEGER NOT NULL DEFAULT 2, rank_target TEXT);
-- A rank target's Bradley–Terry fit, refitted every few votes (core.campaign.target): θ per model as JSON,
-- and the votes at which the target was first reached (NULL: not yet).
CREATE TABLE IF NOT EXISTS campaign_target_fit (
    campaign_id INTEGER PRIMARY KEY, judged INTEGER NOT NULL, theta TEXT NOT NULL, reached_at INTEGER);
CREATE TABLE IF NOT EXISTS campaign_queries (
    campaign_id INTEGER NOT NULL, query_id TEXT NOT NULL, prompt TEXT NOT NULL,
    category TEXT, game_id TEXT NOT NULL, PRIMARY KEY (campaign_id, query_id));
CREATE TABLE IF NOT EXISTS campaign_answers (
    campaign_id INTEGER NOT NULL, query_id TEXT NOT NULL, model TEXT NOT NULL,
    raw_text TEXT NOT NULL, clean_text TEXT NOT NULL, PRIMARY KEY (campaign_id, query_id, model));
CREATE TABLE IF NOT EXISTS campaign_golden (
    id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL, question TEXT NOT NULL,
    correct_raw TEXT NOT NULL, correct_clean TEXT NOT NULL, wrong_raw TEXT NOT NULL,
    wrong_clean TEXT NOT NULL, category TEXT);
CREATE INDEX IF NOT EXISTS campaign_golden_by_campaign ON campaign_golden (campaign_id);
CREATE TABLE IF NOT EXISTS campaign_tokens (
    token_hash TEXT PRIMARY KEY, campaign_id INTEGER NOT NULL, annotator_id TEXT NOT NULL,
    label TEXT, revoked INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL,
    served INTEGER NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0, golden_done INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS campaign_tokens_by_campaign ON campaign_tokens (campaign_id);
-- Running counters the scheduler reads instead of counting votes: per pair (shown, lower model on the left,
-- judged and the lower model's score on the first dimension; its items (queries), and those served to 1+,
-- 2+ and overlap_k+ annotators), per model and side, per (pair, query) (and who was served it first),
-- per annotator pair.
CREATE TABLE IF NOT EXISTS campaign_pairs (
    id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL, model_lo TEXT NOT NULL, model_hi TEXT NOT NULL,
    shown INTEGER NOT NULL DEFAULT 0, lo_left INTEGER NOT NULL DEFAULT 0, judged INTEGER NOT NULL DEFAULT 0,
    lo_score REAL NOT NULL DEFAULT 0, items INTEGER NOT NULL DEFAULT 0, items_started INTEGER NOT NULL DEFAULT 0,
    items_shared INTEGER NOT NULL DEFAULT 0, items_complete INTEGER NOT NULL DEFAULT 0,
    UNIQUE (campaign_id, model_lo, model_hi));
CREATE INDEX IF NOT EXISTS campaign_pairs_by_count ON campaign_pairs (campaign_id, shown);
CREATE TABLE IF NOT EXISTS campaign_model_sides (
    campaign_id INTEGER NOT NULL, model TEXT NOT NULL, n_left INTEGER NOT NULL DEFAULT 0,
    n_right INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (campaign_id, model));
CREATE TABLE IF NOT EXISTS campaign_pair_queries (
    pair_id INTEGER NOT NULL, query_id TEXT NOT NULL, shown INTEGER NOT NULL DEFAULT 0, first_token TEXT,
    PRIMARY KEY (pair_id, query_id));
CREATE INDEX IF NOT EXISTS campaign_pair_queries_by_count ON campaign_pair_queries (pair_id, shown);
CREATE INDEX IF NOT EXISTS campaign_pair_queries_by_first ON campaign_pair_queries (first_token, pair_id, shown);
-- Items served to both annotators of a pair, once in each direction (a serve reads only its own rows).
CREATE TABLE IF NOT EXISTS campaign_shared (
    token_hash TEXT NOT NULL, other TEXT NOT NULL, items INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (token_hash, other));
-- Served items. A pair item is never served twice to one annotator (the unique index enforces it).
CREATE TABLE IF NOT EXISTS campaign_assignments (
    id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL, token_hash TEXT NOT NULL, seq INTEGER NOT NULL,
    pair_id INTEGER, query_id TEXT, golden_id INTEGER, left_model TEXT NOT NULL, right_model TEXT NOT NULL,
    golden_answer TEXT, shown_at REAL NOT NULL, len_a INTEGER NOT NULL, len_b INTEGER NOT NULL,
    voted INTEGER NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX IF NOT EXISTS campaign_assignments_once ON campaign_assignments (token_hash, pair_id, query_id)
    WHERE pair_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS campaign_assignments_golden_once ON campaign_assignments (token_hash, golden_id)
    WHERE golden_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS campaign_assignments_open ON campaign_assignments (token_hash, voted);
CREATE INDEX IF NOT EXISTS campaign_assignments_by_campaign ON campaign_assignments (campaign_id, voted);
CREATE INDEX IF NOT EXISTS campaign_assignments_by_item ON campaign_assignments (pair_id, query_id)
    WHERE pair_id IS NOT NULL;
-- response_time_s: seconds the item was on screen (core.campaign.screen_time); served_time_s: since it was served.
CREATE TABLE IF NOT EXISTS campaign_votes (
    id INTEGER PRIMARY KEY, assignment_id INTEGER NOT NULL, dimension TEXT NOT NULL, winner TEXT NOT NULL,
    voted_at REAL NOT NULL, response_time_s REAL NOT NULL, served_time_s REAL,
    UNIQUE (assignment_id, dimension));
-- Per displayed item (its shown_at): seconds on screen so far, and since when it is on screen (NULL: off).
CREATE TABLE IF NOT EXISTS campaign_screen_time (
    assignment_id INTEGER PRIMARY KEY, shown_at REAL NOT NULL, seconds REAL NOT NULL, on_since REAL);
-- Failed token entries on the Vote page, per client, so that guessing tokens gets slower and slower.
CREATE TABLE IF NOT EXISTS campaign_token_failures (
    client TEXT PRIMARY KEY, failures INTEGER NOT NULL, last_failure REAL NOT NULL);
"""

COLLECT = """
CREATE TABLE IF NOT EXISTS collect_runs (
    run_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    queries_source TEXT, models_source TEXT);
CREATE TABLE IF NOT EXISTS collect_queries (
    run_id INTEGER NOT NULL REFERENCES collect_runs(run_id), query_id TEXT NOT NULL, prompt TEXT NOT NULL,
    category TEXT, priority REAL NOT NULL DEFAULT 0, position INTEGER NOT NULL,
    PRIMARY KEY (run_id, query_id));
CREATE TABLE IF NOT EXISTS collect_models (
    run_id INTEGER NOT NULL REFERENCES collect_runs(run_id), name TEXT NOT NULL, provider TEXT NOT NULL,
    base_url TEXT NOT NULL, model TEXT NOT NULL, api_key_env TEXT, params TEXT NOT NULL,
    PRIMARY KEY (run_id, name));
CREATE TABLE IF NOT EXISTS collect_answers (
    run_id INTEGER NOT NULL REFERENCES collect_runs(run_id), query_id TEXT NOT NULL, model TEXT NOT NULL,
    answer TEXT NOT NULL, answer_raw TEXT NOT NULL, latency_s REAL, prompt_tokens INTEGER,
    completion_tokens INTEGER, finish_reason TEXT, attempts INTEGER NOT NULL, created_at TEXT NOT NULL,
    UNIQUE (run_id, query_id, model));
CREATE TABLE IF NOT EXISTS collect_errors (
    run_id INTEGER NOT NULL REFERENCES collect_runs(run_id), query_id TEXT NOT NULL, model TEXT NOT NULL,
    kind TEXT NOT NULL, status INTEGER, message TEXT NOT NULL, attempts INTEGER NOT NULL,
    created_at TEXT NOT NULL, UNIQUE (run_id, query_id, model));
-- One row per collecting process (a command-line run or a background job started from the Collect page);
-- at most one unfinished row per run name, so two processes never collect one run at once.
CREATE TABLE IF NOT EXISTS collect_jobs (
    job_id INTEGER PRIMARY KEY, run_name TEXT NOT NULL, origin TEXT NOT NULL, status TEXT NOT NULL,
    pid INTEGER, pid_started TEXT, started_at TEXT NOT NULL, ended_at TEXT, exit_code INTEGER,
    message TEXT NOT NULL DEFAULT '', log_path TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS collect_jobs_one_per_run ON collect_jobs (run_name) WHERE ended_at IS NULL;
"""

EVALSET = """
CREATE TABLE IF NOT EXISTS evalset_sets (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL, size INTEGER NOT NULL,
    settings TEXT NOT NULL, audit TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS evalset_items (
    set_id INTEGER NOT NULL REFERENCES evalset_sets(id) ON DELETE CASCADE, position INTEGER NOT NULL,
    query_id TEXT NOT NULL, prompt TEXT NOT NULL, category TEXT, subcategory TEXT, raw_query_original TEXT,
    reason TEXT, specificity REAL, completeness REAL, depth REAL, score REAL, is_procedural INTEGER,
    needs_structured_output INTEGER, has_heavy_constraints INTEGER, is_trap_unreleased INTEGER,
    PRIMARY KEY (set_id, position));
CREATE TABLE IF NOT EXISTS evalset_audit (
    set_id INTEGER NOT NULL REFERENCES evalset_sets(id) ON DELETE CASCADE, position INTEGER NOT NULL,
    stage TEXT NOT NULL, n_in INTEGER, n_out INTEGER, method TEXT, dropped TEXT, notes TEXT, calls TEXT,
    PRIMARY KEY (set_id, position));
"""


def statements(script: str) -> list[str]:
    """A script as single statements. ``executescript`` cannot be used: it commits any open transaction."""
    out, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            code = [x for x in pending.strip().splitlines() if not x.lstrip().startswith("--")]
            out.append("\n".join(code))
            pending = ""
    if pending.strip() and not all(s.strip().startswith("--") for s in pending.splitlines() if s.strip()):
        raise ValueError(f"incomplete SQL statement: {pending.strip()[:80]}")
    return out


def current_schema() -> list[str]:
    """Every statement of the current schema, each safe to run again (IF NOT EXISTS / OR IGNORE)."""
    data_tables = [data_table_sql(t) for t in TYPES_OF_TABLE]
    outcome_rows = [f"INSERT OR IGNORE INTO outcomes (code, label) VALUES ({i}, '{o}')"
                    for i, o in enumerate(OUTCOMES)]
    return [*statements(STORE), *outcome_rows, *data_tables,
            # The view follows the vote columns of this version: made afresh whenever the schema is.
            "DROP VIEW IF EXISTS votes_labeled", f"CREATE VIEW votes_labeled AS {labeled_view_sql()}",
            *statements(CAMPAIGN), *statements(COLLECT), *statements(EVALSET)]


def expected_objects() -> set[str]:
    """Names of every table, index and view the current schema makes."""
    pattern = re.compile(r"^CREATE (?:UNIQUE )?(?:TABLE|INDEX|VIEW)(?: IF NOT EXISTS)? \[?(\w+)\]?")
    return {m.group(1) for s in current_schema() if (m := pattern.match(s))}


def _add_column(conn: sqlite3.Connection, table: str, column: str, definition: str) -> None:
    present = {r[1] for r in conn.execute(f"PRAGMA table_info([{table}])")}
    if present and column not in present:
        conn.execute(f"ALTER TABLE [{table}] ADD COLUMN [{column}] {definition}")


def _to_1(conn: sqlite3.Connection) -> None:
    """Version 1: one schema for every part. Files before it may lack any table (repaired by the current
    schema right after) and may have campaign tables from before active sampling."""
    _add_column(conn, "campaign_campaigns", "active_sampling", "INTEGER NOT NULL DEFAULT 0")


def _to_2(conn: sqlite3.Connection) -> None:
    """Version 2: overlap items (judged by several annotators). Campaigns made before it keep their schedule
    (overlap 0); the per-item and per-pair counters the overlap draw reads are filled from the served items."""
    _add_column(conn, "campaign_campaigns", "overlap", "REAL NOT NULL DEFAULT 0")
    _add_column(conn, "campaign_campaigns", "overlap_k", "INTEGER NOT NULL DEFAULT 2")
    for column in ("items", "items_started", "items_shared", "items_complete"):
        _add_column(conn, "campaign_pairs", column, "INTEGER NOT NULL DEFAULT 0")
    _add_column(conn, "campaign_pair_queries", "first_token", "TEXT")
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if {"campaign_pairs", "campaign_pair_queries", "campaign_assignments"} <= present:
        conn.execute("CREATE INDEX IF NOT EXISTS campaign_assignments_by_item ON campaign_assignments "
                     "(pair_id, query_id) WHERE pair_id IS NOT NULL")
        conn.execute("UPDATE campaign_pair_queries SET first_token = (SELECT a.token_hash FROM campaign_assignments a "
                     "WHERE a.pair_id = campaign_pair_queries.pair_id AND a.query_id = campaign_pair_queries.query_id "
                     "ORDER BY a.id LIMIT 1) WHERE first_token IS NULL AND shown > 0")
        conn.execute("UPDATE campaign_pairs SET "
                     "items = (SELECT count(*) FROM campaign_pair_queries q WHERE q.pair_id = campaign_pairs.id), "
                     "items_started = (SELECT count(*) FROM campaign_pair_queries q "
                     "WHERE q.pair_id = campaign_pairs.id AND q.shown >= 1), "
                     "items_shared = (SELECT count(*) FROM campaign_pair_queries q WHERE q.pair_id = campaign_pairs.id "
                     "AND q.shown >= 2), items_complete = (SELECT count(*) FROM campaign_pair_queries q "
                     "WHERE q.pair_id = campaign_pairs.id AND q.shown >= 2)")
    if "campaign_assignments" in present:
        conn.execute("CREATE TABLE IF NOT EXISTS campaign_shared (token_hash TEXT NOT NULL, other TEXT NOT NULL, "
                     "items INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (token_hash, other))")
        conn.execute("DELETE FROM campaign_shared")
        conn.execute("INSERT INTO campaign_shared (token_hash, other, items) SELECT a.token_hash, b.token_hash, "
                     "count(*) FROM campaign_assignments a JOIN campaign_assignments b ON a.pair_id = b.pair_id "
                     "AND a.query_id = b.query_id AND a.token_hash != b.token_hash "
                     "WHERE a.pair_id IS NOT NULL GROUP BY a.token_hash, b.token_hash")


def _to_3(conn: sqlite3.Connection) -> None:
    """Version 3: a vote keeps the time since its item was served next to its time on screen. Votes stored
    before were timed from when the item was served, so that is what they get."""
    present = {r[1] for r in conn.execute("PRAGMA table_info(campaign_votes)")}
    if present and "served_time_s" not in present:
        conn.execute("ALTER TABLE campaign_votes ADD COLUMN served_time_s REAL")
        conn.execute("UPDATE campaign_votes SET served_time_s = response_time_s")


def _to_4(conn: sqlite3.Connection) -> None:
    """Version 4: the votes table keeps the per-side style counts (headers, list items, bold spans of each
    answer) that scheme style controls for. Votes stored before have none (NULL), and their datasets do
    not list the columns: they rank with scheme style on length only, as a file without texts does."""
    for column in STYLE_COUNT_COLUMNS:
        _add_column(conn, "votes", column, "REAL")


def _to_5(conn: sqlite3.Connection) -> None:
    """Version 5: a campaign may have a rank target (core.campaign.target). Campaigns made before have none."""
    _add_column(conn, "campaign_campaigns", "rank_target", "TEXT")


# MIGRATIONS[v] takes a file from version v - 1 to v. Each must be safe on a partly migrated file.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _to_1, 2: _to_2, 3: _to_3, 4: _to_4, 5: _to_5}
_EXPECTED = expected_objects()


def schema_state(conn: sqlite3.Connection) -> tuple[int, set[str]]:
    """The file's schema version and the names of the expected objects it lacks."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    return version, _EXPECTED - present


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Make, migrate or repair the schema if needed, all in one write transaction."""
    version, missing = schema_state(conn)
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(version)
    if version == SCHEMA_VERSION and not missing:
        return
    with write_transaction(conn):
        version, missing = schema_state(conn)  # another process may have done it meanwhile
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(version)
        if version == SCHEMA_VERSION and not missing:
            return
        for step in range(version + 1, SCHEMA_VERSION + 1):
            MIGRATIONS[step](conn)
        for statement in current_schema():
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
